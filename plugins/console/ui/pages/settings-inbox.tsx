/**
 * One inbox (`#/settings/inboxes/<id>`): its name and time zone (and, for an API channel, where
 * replies go and its inbound secret), how new conversations are assigned, who works it, its
 * business hours, out-of-office reply and satisfaction survey, importing its connection's past
 * chats, and deleting it. The channel itself is fixed once created (the API changes no binding).
 */
import { useEffect, useId, useState } from 'preact/hooks';
import { del, get, itemsOf, patch, put } from '../api.ts';
import { Button, Card, Checkbox, ConfirmButton, ErrorNote, Loading, Notice, SecretBox, TextField } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { href, navigate } from '../router.ts';
import { channelName, itemPath, loadMembers, type Connection, type Inbox, type Person } from './settings-model.ts';
import { PeoplePicker } from './settings-people.tsx';
import { BusinessHoursForm } from './settings-inbox-hours.tsx';
import { AutomaticMessageForm } from './settings-inbox-replies.tsx';
import { HistoryImport } from './settings-inbox-history.tsx';

export function InboxSettings({ id, connections }: { id: string; connections: Connection[] | undefined }) {
  const inbox = useLoad(() => get<Inbox>(itemPath('inboxes', id)), [id]);
  const members = useLoad(async () => itemsOf<Person>(await get(itemPath('inboxes', id, '/members'))), [id]);
  const people = useLoad(loadMembers, []);
  const remove = useAction();

  const back = (
    <p>
      <a href={href('settings', 'inboxes')}>← Inboxes</a>
    </p>
  );
  if (!inbox.data) {
    return (
      <>
        {back}
        <ErrorNote error={inbox.error} />
        {!inbox.error && <Loading rows={4} label="Loading the inbox" />}
      </>
    );
  }
  const current = inbox.data;
  return (
    <>
      {back}
      <h2 class="settings-title">{current.name}</h2>
      <p class="muted">Channel: {channelName(current, connections)}</p>
      <Card title="Settings">
        <InboxForm inbox={current} onSaved={inbox.reload} />
      </Card>
      <Card title="Assignment">
        <Assignment inboxId={id} />
      </Card>
      <Card title="Members">
        <p class="muted">Agents see and answer only the conversations of the inboxes they are members of; Managers and above see every inbox.</p>
        <ErrorNote error={members.error} />
        <PeoplePicker
          legend="Members of this inbox"
          people={people}
          chosen={members.data?.map((m) => m.userId)}
          onSave={async (userIds) => {
            await put(itemPath('inboxes', id, '/members'), { userIds });
            await members.reload();
            return true;
          }}
        />
      </Card>
      <Card title="Business hours">
        <BusinessHoursForm inboxId={id} />
      </Card>
      <Card title="Out-of-office reply">
        <AutomaticMessageForm
          inboxId={id}
          setting="out-of-office"
          switchLabel="Reply when the inbox is closed"
          switchHint="Once per conversation and closed period, outside business hours or on a holiday."
          textLabel="Out-of-office message"
        />
      </Card>
      <Card title="Satisfaction survey">
        <AutomaticMessageForm
          inboxId={id}
          setting="csat"
          switchLabel="Ask the contact to rate the conversation when it is resolved"
          switchHint="Sends a link to a 1–5 rating once per conversation."
          textLabel="Survey message (sent before the link)"
        />
      </Card>
      {current.channelType === 'CONNECTION' && (
        <Card title="Chat history">
          <HistoryImport inboxId={id} />
        </Card>
      )}
      <Card title="Delete this inbox">
        <p class="muted">Its conversations, their messages and files are deleted with it. The connection stays, and can feed another inbox.</p>
        <ConfirmButton
          confirm="Delete it and its conversations?"
          pending={remove.pending}
          onConfirm={async () => {
            if (await remove.run(() => del(itemPath('inboxes', id)))) navigate('settings', 'inboxes');
          }}
        >
          Delete inbox
        </ConfirmButton>
        <ErrorNote error={remove.error} prefix="The inbox was not deleted." />
      </Card>
    </>
  );
}

function InboxForm({ inbox, onSaved }: { inbox: Inbox; onSaved: () => Promise<void> }) {
  const [name, setName] = useState(inbox.name);
  const [timezone, setTimezone] = useState(inbox.timezone);
  const [webhookUrl, setWebhookUrl] = useState(inbox.channelConfig?.webhookUrl ?? '');
  const [hmacMandatory, setHmacMandatory] = useState(inbox.channelConfig?.hmacMandatory ?? false);
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const api = inbox.channelType === 'API';

  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    const body = { name, timezone, ...(api && { webhookUrl: webhookUrl.trim() || null, hmacMandatory }) };
    if (await save.run(() => patch<Inbox>(itemPath('inboxes', inbox.id), body))) {
      setSaved(true);
      await onSaved();
    }
  };

  return (
    <form class="stack" onSubmit={submit} aria-label="Inbox settings">
      <TextField label="Name" required maxLength={120} value={name} onValue={setName} />
      <TextField label="Time zone" required value={timezone} onValue={setTimezone} hint="An IANA zone name; business hours and reports use it." />
      {api && (
        <>
          <TextField label="Webhook URL" type="url" value={webhookUrl} onValue={setWebhookUrl} hint="Where agents' replies are posted for your app to deliver; empty refuses replies." />
          <Checkbox label="Require the secret on inbound calls" checked={hmacMandatory} onChecked={setHmacMandatory} hint="Refuse calls with neither x-helpdesk-token nor x-helpdesk-signature." />
          {inbox.channelConfig?.hmacToken && <SecretBox label="Inbound secret" value={inbox.channelConfig.hmacToken} />}
        </>
      )}
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          Save settings
        </Button>
      </div>
      <ErrorNote error={save.error} prefix="Nothing was changed." />
      {saved && <Notice>Settings saved.</Notice>}
    </form>
  );
}

interface AssignmentSettings {
  enabled: boolean;
}

/** Round-robin (the default) or manual: the API's one switch per inbox. */
function Assignment({ inboxId }: { inboxId: string }) {
  const setting = useLoad(() => get<AssignmentSettings>(itemPath('inboxes', inboxId, '/assignment')), [inboxId]);
  const [enabled, setEnabled] = useState<boolean>();
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const name = useId();
  useEffect(() => setEnabled(setting.data?.enabled), [setting.data?.enabled]);

  if (setting.error && !setting.data) return <ErrorNote error={setting.error} />;
  if (enabled === undefined) return <Loading rows={1} label="Loading assignment" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    if (await save.run(() => put<AssignmentSettings>(itemPath('inboxes', inboxId, '/assignment'), { enabled }))) {
      setSaved(true);
      await setting.reload();
    }
  };
  const choice = (value: boolean, label: string, hint: string) => (
    <div class="check">
      <input type="radio" id={`${name}-${value}`} name={name} checked={enabled === value} onChange={() => (setSaved(false), setEnabled(value))} />
      <label for={`${name}-${value}`}>
        {label}
        <small class="hint">{hint}</small>
      </label>
    </div>
  );
  return (
    <form onSubmit={submit} aria-label="Assignment">
      <fieldset>
        <legend>New conversations</legend>
        {choice(true, 'Round-robin', 'Each new conversation goes to the next member of the inbox who is online; busy and offline members are passed over.')}
        {choice(false, 'Manual', 'New conversations stay unassigned until someone takes them or assigns them.')}
      </fieldset>
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          Save assignment
        </Button>
      </div>
      <ErrorNote error={save.error} prefix="Assignment was not changed." />
      {saved && <Notice>Assignment saved.</Notice>}
    </form>
  );
}
