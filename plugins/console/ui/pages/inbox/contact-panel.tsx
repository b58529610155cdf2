/**
 * The contact beside the conversation: name, phone, email and custom attributes (editable), the
 * contact's other conversations, and notes about the contact (shown when the service has them).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, del, get, itemsOf, patch, post } from '../../api.ts';
import { Button, ErrorNote, Loading, StatusBadge, When } from '../../components.tsx';
import { useAction, useLoad, type Loaded } from '../../data.ts';
import { href } from '../../router.ts';
import { contactName, personName, type Contact, type ContactNote, type Conversation, type Person } from './conversation-model.ts';

export function ContactPanel({
  contactId,
  contact,
  conversationId,
  people,
  mayWrite,
}: {
  contactId: string;
  /** Read by the pane, which names the contact in its heading too. */
  contact: Loaded<Contact | undefined>;
  conversationId: string;
  people: Person[] | undefined;
  mayWrite: boolean;
}) {
  const base = `/v3/helpdesk/contacts/${encodeURIComponent(contactId)}`;
  return (
    <div class="contact-panel-body">
      <ErrorNote error={contact.error} prefix="The contact could not be read." />
      {!contact.data ? (
        contact.error ? null : <Loading rows={3} label="Loading the contact" />
      ) : (
        <ContactDetails contact={contact.data} mayWrite={mayWrite} onSaved={contact.reload} />
      )}
      <OtherConversations contactId={contactId} conversationId={conversationId} />
      <ContactNotes base={base} people={people} mayWrite={mayWrite} />
    </div>
  );
}

type Attribute = { key: string; value: string };

/** Name, phone, email and custom attributes, with an edit form (also on the Contacts page). */
export function ContactDetails({ contact, mayWrite, onSaved }: { contact: Contact; mayWrite: boolean; onSaved: () => Promise<void> }) {
  const [editing, setEditing] = useState(false);
  const [form, setForm] = useState(() => formOf(contact));
  const saving = useAction();
  useEffect(() => setForm(formOf(contact)), [contact]);

  if (!editing) {
    return (
      <section aria-label="Contact details">
        <h2 class="contact-name">{contactName(contact)}</h2>
        <dl class="facts">
          <dt>Phone</dt>
          <dd>{contact.phone ?? '—'}</dd>
          <dt>Email</dt>
          <dd>{contact.email ?? '—'}</dd>
          {Object.entries(contact.customAttributes).map(([key, value]) => (
            <>
              <dt>{key}</dt>
              <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
            </>
          ))}
        </dl>
        {mayWrite && (
          <Button variant="secondary" onClick={() => setEditing(true)}>
            Edit contact
          </Button>
        )}
      </section>
    );
  }

  const save = async (event: Event) => {
    event.preventDefault();
    const customAttributes = Object.fromEntries(form.attributes.filter((a) => a.key.trim()).map((a) => [a.key.trim(), a.value]));
    const saved = await saving.run(() =>
      patch(`/v3/helpdesk/contacts/${encodeURIComponent(contact.id)}`, { name: form.name.trim() || null, phone: form.phone.trim() || null, email: form.email.trim() || null, customAttributes }),
    );
    if (!saved) return;
    await onSaved();
    setEditing(false);
  };
  const setAttribute = (index: number, change: Partial<Attribute>) => setForm((f) => ({ ...f, attributes: f.attributes.map((a, i) => (i === index ? { ...a, ...change } : a)) }));
  return (
    <form class="contact-form" aria-label="Edit contact" onSubmit={save}>
      <Field label="Name" value={form.name} onValue={(name) => setForm((f) => ({ ...f, name }))} />
      <Field label="Phone" value={form.phone} onValue={(phone) => setForm((f) => ({ ...f, phone }))} />
      <Field label="Email" value={form.email} onValue={(email) => setForm((f) => ({ ...f, email }))} type="email" />
      <fieldset>
        <legend>Custom attributes</legend>
        {form.attributes.map((a, i) => (
          <div class="attribute-row">
            <input aria-label={`Attribute ${i + 1} name`} value={a.key} placeholder="Name" onInput={(e) => setAttribute(i, { key: e.currentTarget.value })} />
            <input aria-label={`Attribute ${i + 1} value`} value={a.value} placeholder="Value" onInput={(e) => setAttribute(i, { value: e.currentTarget.value })} />
            <button type="button" class="btn link" aria-label={`Remove attribute ${a.key || i + 1}`} onClick={() => setForm((f) => ({ ...f, attributes: f.attributes.filter((_, j) => j !== i) }))}>
              ✕
            </button>
          </div>
        ))}
        <Button variant="link" onClick={() => setForm((f) => ({ ...f, attributes: [...f.attributes, { key: '', value: '' }] }))}>
          Add attribute
        </Button>
      </fieldset>
      <ErrorNote error={saving.error} prefix="Not saved." />
      <div class="form-actions">
        <Button type="submit" pending={saving.pending}>
          Save contact
        </Button>
        <Button variant="secondary" onClick={() => (setEditing(false), setForm(formOf(contact)))}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

function Field({ label, value, onValue, type = 'text' }: { label: string; value: string; onValue: (v: string) => void; type?: string }) {
  const id = `contact-${label.toLowerCase()}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} type={type} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
    </div>
  );
}

function formOf(contact: Contact) {
  return {
    name: contact.name ?? '',
    phone: contact.phone ?? '',
    email: contact.email ?? '',
    attributes: Object.entries(contact.customAttributes).map(([key, value]) => ({ key, value: typeof value === 'string' ? value : JSON.stringify(value) })),
  };
}

/** The contact's other conversations (`contactId` filter; also filtered here, for a service that ignores it). */
function OtherConversations({ contactId, conversationId }: { contactId: string; conversationId: string }) {
  const others = useLoad(async () => {
    try {
      const all = itemsOf<Conversation>(await get('/v3/helpdesk/conversations', { contactId, per_page: 20, sort: 'created' }));
      return all.filter((c) => c.contactId === contactId && c.id !== conversationId);
    } catch (error) {
      // A service without the filter may refuse it: the section then stays empty, not broken.
      if (error instanceof ApiError && error.status === 400) return [];
      throw error;
    }
  }, [contactId, conversationId]);
  return (
    <section aria-label="Other conversations" class="contact-section">
      <h3>Other conversations</h3>
      <ErrorNote error={others.error} />
      {others.data && others.data.length === 0 && <p class="muted">None.</p>}
      {others.data && others.data.length > 0 && (
        <ul class="link-list">
          {others.data.map((c) => (
            <li>
              <a href={href('inbox', c.id)}>#{c.displayId}</a> <StatusBadge status={c.status} /> <When at={c.lastActivityAt} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Notes about the contact (also on the Contacts page): hidden when the service has no such endpoint (404). */
export function ContactNotes({ base, people, mayWrite }: { base: string; people: Person[] | undefined; mayWrite: boolean }) {
  const notes = useLoad(async () => {
    try {
      return itemsOf<ContactNote>(await get(`${base}/notes`));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }, [base]);
  const [text, setText] = useState('');
  const writing = useAction();
  if (notes.loading && !notes.data) return null;
  if (!notes.error && notes.data === undefined) return null;
  const add = async (event: Event) => {
    event.preventDefault();
    if (!text.trim()) return;
    if (await writing.run(() => post(`${base}/notes`, { content: text }))) {
      setText('');
      await notes.reload();
    }
  };
  const remove = async (id: string) => {
    if (await writing.run(() => del(`${base}/notes/${encodeURIComponent(id)}`))) await notes.reload();
  };
  return (
    <section aria-label="Contact notes" class="contact-section">
      <h3>Notes</h3>
      <ErrorNote error={notes.error ?? writing.error} />
      {notes.data?.length === 0 && <p class="muted">No notes about this contact yet.</p>}
      <ul class="contact-notes">
        {(notes.data ?? []).map((n) => (
          <li>
            <p class="message-text">{n.content}</p>
            <p class="hint">
              {personName(people, n.authorUserId)} · <When at={n.createdAt} />
              {mayWrite && (
                <button type="button" class="btn link" aria-label="Delete note" onClick={() => remove(n.id)}>
                  Delete
                </button>
              )}
            </p>
          </li>
        ))}
      </ul>
      {mayWrite && (
        <form onSubmit={add}>
          <label for="contact-note" class="sr-only">
            New note about the contact
          </label>
          <textarea id="contact-note" rows={2} value={text} maxLength={4000} placeholder="A note about the contact" onInput={(e) => setText(e.currentTarget.value)} />
          <Button type="submit" variant="secondary" pending={writing.pending}>
            Save note
          </Button>
        </form>
      )}
    </section>
  );
}
