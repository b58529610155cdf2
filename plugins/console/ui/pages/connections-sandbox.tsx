/**
 * The contact simulator of a sandbox connection: write to the connection as a contact, and play
 * the contact's phone reporting a sent message as delivered or read (the sandbox endpoints of
 * the public API), so the whole flow can be tried with no phone at all.
 */
import { useState } from 'preact/hooks';
import { get, post } from '../api.ts';
import { Button, Card, EmptyState, ErrorNote, StatusBadge, TextArea, TextField, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { useSession } from '../session.ts';
import { textOf, type Connection, type Message } from './connections-model.ts';

export function ContactSimulator({ connection, contact, onContact }: { connection: Connection; contact: string; onContact: (number: string) => void }) {
  const { may } = useSession();
  const [pushName, setPushName] = useState('Test contact');
  const [text, setText] = useState('');
  const [written, setWritten] = useState(false);
  const action = useAction();
  const base = `/v3/connections/${encodeURIComponent(connection.id)}`;

  const write = async (event: Event) => {
    event.preventDefault();
    setWritten(false);
    const done = await action.run(() => post<Message>(`${base}/sandbox/messages`, { from: contact.replace(/[^\d]/g, ''), pushName, text }));
    if (done) {
      setWritten(true);
      setText('');
    }
  };

  return (
    <Card title="Contact simulator">
      <p class="hint">Sandbox only: act as a contact on the simulated network.</p>
      <form class="stack" onSubmit={write}>
        <div class="grid sim-contact">
          <TextField label="Contact’s number" type="tel" placeholder="+5511999999999" value={contact} onValue={onContact} required />
          <TextField label="Contact’s name" value={pushName} onValue={setPushName} />
        </div>
        <TextArea label="Message from the contact" value={text} onValue={(v) => (setText(v), setWritten(false))} rows={2} required />
        <ErrorNote error={action.error} prefix="Not delivered." />
        <div class="form-actions">
          <Button type="submit" variant="secondary" pending={action.pending}>
            Write as the contact
          </Button>
          {written && <span role="status">Delivered to the connection.</span>}
        </div>
      </form>
      {/* Listing what was sent to the contact reads the chat, which needs messages.read. */}
      {may('messages.read', 'read') && contact.replace(/[^\d]/g, '').length >= 6 && <Receipts base={base} contact={contact.replace(/[^\d]/g, '')} />}
    </Card>
  );
}

/**
 * The last messages sent to the contact, each with buttons for what the contact's phone reports
 * next, offered in order (delivered once sent, read once sent or delivered).
 */
function Receipts({ base, contact }: { base: string; contact: string }) {
  const messages = useLoad(() => get<Message[]>(`${base}/chats/messages`, { chat: contact, limit: 100 }), [base, contact], { every: 2000 });
  const action = useAction();
  const outbound = (messages.data ?? []).filter((m) => m.direction === 'outbound').slice(-5).reverse();

  const receipt = async (messageId: string, status: 'DELIVERED' | 'READ') => {
    await action.run(() => post(`${base}/sandbox/receipts`, { messageId, status }));
    await messages.reload();
  };

  return (
    <section class="stack" aria-labelledby="receipts-title">
      <h3 id="receipts-title">Receipts from the contact’s phone</h3>
      <ErrorNote error={messages.error ?? action.error} />
      {messages.data && outbound.length === 0 ? (
        <EmptyState title="Nothing sent to this contact yet">Send a test message to this number, then report it delivered or read here.</EmptyState>
      ) : (
        <ul class="receipts">
          {outbound.map((m) => (
            <li class="row" aria-label={`Sent message ${textOf(m)}`}>
              <span class="grow">
                “{textOf(m)}” <When at={m.messageTimestamp} />
              </span>
              <StatusBadge status={m.status} />
              <Button variant="secondary" disabled={action.pending || !['SENT'].includes(m.status)} onClick={() => receipt(m.id, 'DELIVERED')}>
                Delivered
              </Button>
              <Button variant="secondary" disabled={action.pending || !['SENT', 'DELIVERED'].includes(m.status)} onClick={() => receipt(m.id, 'READ')}>
                Read
              </Button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
