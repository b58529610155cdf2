/**
 * Inboxes (`#/settings/inboxes`): where conversations arrive — each bound to one connection of the
 * workspace, or an API channel fed by your own app — with a form for a new one. One inbox's
 * settings, assignment and members are in settings-inbox.tsx.
 */
import { useState } from 'preact/hooks';
import { post } from '../api.ts';
import { Button, Card, EmptyState, ErrorNote, Loading, SecretBox, SelectField, Table, TextField } from '../components.tsx';
import { useAction, useLoad, type Loaded } from '../data.ts';
import { href } from '../router.ts';
import { browserTimeZone, channelName, loadConnections, loadInboxes, type Connection, type Inbox } from './settings-model.ts';
import { InboxSettings } from './settings-inbox.tsx';

export function InboxesSection({ id }: { id: string | undefined }) {
  const connections = useLoad(loadConnections, []);
  if (id) return <InboxSettings id={id} connections={connections.data} />;
  return <InboxList connections={connections} />;
}

function InboxList({ connections }: { connections: Loaded<Connection[]> }) {
  const inboxes = useLoad(loadInboxes, []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Inbox>();

  return (
    <>
      {creating ? (
        <Card title="New inbox">
          <NewInbox
            inboxes={inboxes.data}
            connections={connections.data}
            onCancel={() => setCreating(false)}
            onCreated={(inbox) => {
              setCreating(false);
              setCreated(inbox);
              void inboxes.reload();
            }}
          />
          <ErrorNote error={connections.error} prefix="The connections could not be read." />
        </Card>
      ) : (
        <div class="form-actions settings-actions">
          <Button onClick={() => setCreating(true)}>New inbox</Button>
        </div>
      )}
      {created && <CreatedInbox inbox={created} />}
      <Card title="Inboxes">
        <ErrorNote error={inboxes.error} />
        {!inboxes.data ? (
          !inboxes.error && <Loading />
        ) : inboxes.data.length === 0 ? (
          <EmptyState title="No inboxes yet">
            An inbox gathers the conversations of one WhatsApp connection (or of your own app, through an API channel) for the members you give it. Create the first
            one with "New inbox".
          </EmptyState>
        ) : (
          <div class="settings-list">
            <Table caption="Inboxes" head={['Name', 'Channel', 'Time zone']}>
              {inboxes.data.map((inbox) => (
                <tr>
                  <td>
                    <a href={href('settings', 'inboxes', inbox.id)}>{inbox.name}</a>
                  </td>
                  <td>{channelName(inbox, connections.data)}</td>
                  <td>{inbox.timezone}</td>
                </tr>
              ))}
            </Table>
          </div>
        )}
      </Card>
    </>
  );
}

const API_CHANNEL = 'api';

function NewInbox({ inboxes, connections, onCancel, onCreated }: { inboxes: Inbox[] | undefined; connections: Connection[] | undefined; onCancel: () => void; onCreated: (inbox: Inbox) => void }) {
  // A connection feeds one inbox at most (the API answers 409), so bound ones are not offered.
  const bound = new Set((inboxes ?? []).map((i) => i.connectionId).filter(Boolean));
  const free = (connections ?? []).filter((c) => !bound.has(c.id));
  const [name, setName] = useState('');
  // Until one is picked, the first free connection (the list may still be loading).
  const [picked, setChannel] = useState<string>();
  const channel = picked ?? free[0]?.id ?? API_CHANNEL;
  const [timezone, setTimezone] = useState(browserTimeZone());
  const [webhookUrl, setWebhookUrl] = useState('');
  const create = useAction();
  const api = channel === API_CHANNEL;

  const submit = async (e: Event) => {
    e.preventDefault();
    const body = api
      ? { name, timezone, channelType: 'API', ...(webhookUrl.trim() && { webhookUrl: webhookUrl.trim() }) }
      : { name, timezone, channelType: 'CONNECTION', connectionId: channel };
    const inbox = await create.run(() => post<Inbox>('/v3/helpdesk/inboxes', body));
    if (inbox) onCreated(inbox);
  };

  const options = [
    ...free.map((c) => ({ value: c.id, label: `${c.name} (${c.driver}${c.phoneNumber ? `, ${c.phoneNumber}` : ''})` })),
    { value: API_CHANNEL, label: 'API channel: your own app sends and receives' },
  ];
  return (
    <form class="stack" onSubmit={submit} aria-label="New inbox">
      <TextField label="Name" required maxLength={120} value={name} onValue={setName} hint="What agents see, e.g. Support or Sales." />
      {connections === undefined ? (
        <Loading rows={1} label="Loading connections" />
      ) : (
        <SelectField
          label="Channel"
          value={channel}
          options={options}
          onValue={setChannel}
          hint={free.length === 0 ? 'Every connection of the workspace already has an inbox; add a connection on the Connections page, or use an API channel.' : 'A connection feeds one inbox at most.'}
        />
      )}
      {api && <TextField label="Webhook URL (optional)" type="url" value={webhookUrl} onValue={setWebhookUrl} hint="Where agents' replies are posted for your app to deliver; without it replies are refused." />}
      <TextField label="Time zone" required value={timezone} onValue={setTimezone} hint="An IANA zone name (Europe/Lisbon, America/Sao_Paulo): business hours and reports use it." />
      <div class="form-actions">
        <Button type="submit" pending={create.pending}>
          Create inbox
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
      <ErrorNote error={create.error} prefix="No inbox was created." />
    </form>
  );
}

/** An API inbox's inbound credential is answered with its creation; later it shows in the inbox's settings. */
function CreatedInbox({ inbox }: { inbox: Inbox }) {
  return (
    <Card title={`Inbox "${inbox.name}" created`}>
      <p>
        Next, <a href={href('settings', 'inboxes', inbox.id)}>choose who works it</a>: agents see only the inboxes they are members of.
      </p>
      {inbox.inboundWebhookSecret && (
        <>
          <p class="muted">Your app posts its users' messages to this inbox with this secret (header x-helpdesk-token, or an HMAC signature keyed with it).</p>
          <SecretBox label="Inbound secret" value={inbox.inboundWebhookSecret} />
        </>
      )}
    </Card>
  );
}
