/**
 * Writing first to a contact (`POST /v3/helpdesk/conversations`): choose one of your inboxes,
 * an existing contact (searched through the helpdesk contacts API) or a phone number, then a
 * message, or on an official connection a pre-approved template. The service reuses the
 * contact's unresolved conversation of the inbox (`created: false`); either way the inbox opens
 * the conversation the message went to.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, itemsOf, post } from '../../api.ts';
import { Button, Dialog, ErrorNote, SelectField, TextArea, TextField } from '../../components.tsx';
import { useAction, useLoad } from '../../data.ts';
import { useSession } from '../../session.ts';
import type { Contact, Conversation, HelpdeskMessage } from './conversation-model.ts';
import type { Named } from './inbox-model.ts';
import { TemplatePicker, useInboxTemplates, type TemplateSend } from './template-picker.tsx';

/** The answer of `POST /v3/helpdesk/conversations`. */
export interface StartedConversation extends Conversation {
  created: boolean;
  message: HelpdeskMessage;
}

type ContactMode = 'existing' | 'phone';
type MessageMode = 'text' | 'template';

/** Contacts listed at most for a search. */
const FOUND = 8;
/** Quiet time after typing before the contacts are searched. */
const SEARCH_DELAY_MS = 250;

export function NewConversation({ inboxes, onStarted }: { inboxes: Named[]; onStarted: (started: StartedConversation) => void }) {
  const session = useSession();
  const [open, setOpen] = useState(false);
  if (!session.may('helpdesk.work', 'write')) return null;
  return (
    <>
      <Button variant="secondary" onClick={() => setOpen(true)} aria-haspopup="dialog">
        New conversation
      </Button>
      <Dialog title="New conversation" open={open} onClose={() => setOpen(false)}>
        <NewConversationForm
          inboxes={inboxes}
          onStarted={(started) => {
            setOpen(false);
            onStarted(started);
          }}
        />
      </Dialog>
    </>
  );
}

function NewConversationForm({ inboxes, onStarted }: { inboxes: Named[]; onStarted: (started: StartedConversation) => void }) {
  const [inboxId, setInboxId] = useState(inboxes[0]?.id ?? '');
  const [contactMode, setContactMode] = useState<ContactMode>('existing');
  const [search, setSearch] = useState('');
  const [contactId, setContactId] = useState('');
  const [phone, setPhone] = useState('');
  const [name, setName] = useState('');
  const [messageMode, setMessageMode] = useState<MessageMode>('text');
  const [text, setText] = useState('');
  const [template, setTemplate] = useState<TemplateSend | undefined>();
  const starting = useAction();
  const templates = useInboxTemplates(inboxId || undefined);
  const official = templates.data?.official === true;
  const found = useContactSearch(contactMode === 'existing' ? search : '');

  useEffect(() => {
    if (!inboxId && inboxes[0]) setInboxId(inboxes[0].id);
  }, [inboxes]);
  // A template is only for official connections: another inbox falls back to text.
  useEffect(() => {
    if (templates.data && !templates.data.official) setMessageMode('text');
  }, [templates.data]);

  const usesTemplate = official && messageMode === 'template';
  const contactReady = contactMode === 'existing' ? Boolean(contactId) : Boolean(phone.trim());
  const messageReady = usesTemplate ? Boolean(template) : Boolean(text.trim());
  const ready = Boolean(inboxId) && contactReady && messageReady;
  const windowClosed = official && !usesTemplate && starting.error instanceof ApiError && starting.error.status === 422;

  const start = async () => {
    if (!ready || starting.pending) return;
    const started = await starting.run(() =>
      post<StartedConversation>('/v3/helpdesk/conversations', {
        inboxId,
        ...(contactMode === 'existing' ? { contactId } : { phone: phone.trim(), ...(name.trim() && { name: name.trim() }) }),
        ...(usesTemplate ? { template } : { content: text }),
      }),
    );
    if (started) onStarted(started);
  };

  if (inboxes.length === 0) return <p class="warning">You are not a member of any inbox yet: an Admin or Manager adds you to one.</p>;
  return (
    <form
      class="new-conversation"
      onSubmit={(e) => {
        e.preventDefault();
        void start();
      }}
    >
      <SelectField label="Inbox" value={inboxId} options={inboxes.map((i) => ({ value: i.id, label: i.name }))} onValue={setInboxId} />
      <fieldset>
        <legend>Contact</legend>
        <Choice name="contact-mode" value="existing" current={contactMode} onPick={setContactMode} label="An existing contact" />
        <Choice name="contact-mode" value="phone" current={contactMode} onPick={setContactMode} label="A phone number" />
        {contactMode === 'existing' ? (
          <>
            <TextField label="Search contacts" type="search" value={search} placeholder="Name, phone or e-mail" onValue={setSearch} autoComplete="off" />
            <ContactResults search={search} found={found} chosen={contactId} onChoose={setContactId} />
          </>
        ) : (
          <>
            <TextField label="Phone" type="tel" value={phone} required placeholder="+55 11 91234-5678" hint="International format, with the country code." onValue={setPhone} autoComplete="off" />
            <TextField label="Name (optional)" value={name} maxLength={200} hint="Used when this phone is a new contact." onValue={setName} autoComplete="off" />
          </>
        )}
      </fieldset>
      <fieldset>
        <legend>What to send</legend>
        {official && (
          <>
            <Choice name="message-mode" value="text" current={messageMode} onPick={setMessageMode} label="A text message" />
            <Choice name="message-mode" value="template" current={messageMode} onPick={setMessageMode} label="A template" hint="Official connection: a contact who has not written in the last 24 hours gets only a pre-approved template." />
          </>
        )}
        {usesTemplate ? (
          <TemplatePicker key={inboxId} templates={templates} onChange={setTemplate} />
        ) : (
          <TextArea label="Message" value={text} rows={4} maxLength={4096} onValue={setText} />
        )}
      </fieldset>
      <ErrorNote error={starting.error} prefix="Not started." />
      {windowClosed && (
        <div class="warning window-advice" role="status">
          <span>Write to this contact with a pre-approved template.</span>
          <Button variant="secondary" onClick={() => (setMessageMode('template'), starting.clear())}>
            Use a template
          </Button>
        </div>
      )}
      <div class="dialog-actions">
        <Button type="submit" pending={starting.pending} disabled={!ready}>
          Start conversation
        </Button>
      </div>
    </form>
  );
}

function Choice<V extends string>({ name, value, current, onPick, label, hint }: { name: string; value: V; current: V; onPick: (value: V) => void; label: string; hint?: string }) {
  const id = `${name}-${value}`;
  return (
    <div class="check">
      <input id={id} type="radio" name={name} value={value} checked={current === value} onChange={() => onPick(value)} />
      <label for={id}>
        {label}
        {hint && <small class="hint">{hint}</small>}
      </label>
    </div>
  );
}

/** The workspace's contacts matching the search, read a moment after typing stops. */
function useContactSearch(search: string) {
  const [query, setQuery] = useState(search.trim());
  useEffect(() => {
    const timer = setTimeout(() => setQuery(search.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [search]);
  return useLoad(async () => (query ? itemsOf<Contact>(await get('/v3/helpdesk/contacts', { s: query, per_page: FOUND })) : undefined), [query]);
}

function ContactResults({ search, found, chosen, onChoose }: { search: string; found: ReturnType<typeof useContactSearch>; chosen: string; onChoose: (id: string) => void }) {
  if (!search.trim()) return <p class="hint">Type to find a contact, or choose “A phone number”.</p>;
  if (found.error) return <ErrorNote error={found.error} prefix="Contacts could not be read." />;
  const contacts = found.data;
  if (!contacts) return <p class="hint" aria-live="polite">Searching…</p>;
  if (contacts.length === 0) return <p class="hint" aria-live="polite">No contact matches “{search.trim()}”. Choose “A phone number” to write to a new one.</p>;
  return (
    <div class="contact-results" role="radiogroup" aria-label="Contacts found">
      {contacts.map((c) => (
        <div class="check">
          <input id={`contact-${c.id}`} type="radio" name="contact" value={c.id} checked={chosen === c.id} onChange={() => onChoose(c.id)} />
          <label for={`contact-${c.id}`}>
            {c.name || c.phone || c.email || 'Unnamed contact'}
            {(c.phone || c.email) && <small class="hint">{[c.phone, c.email].filter(Boolean).join(' · ')}</small>}
          </label>
        </div>
      ))}
    </div>
  );
}
