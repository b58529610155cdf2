/**
 * "Send a test message" on a connection's page: a text to a number through the public send
 * endpoint, answered at once with the message's id and status (PENDING; the send runs on the
 * queue), with a link to its chat in Messages where the status moves on.
 */
import { useState } from 'preact/hooks';
import { get, post } from '../api.ts';
import { Button, Card, ErrorNote, StatusBadge, TextArea, TextField } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { href } from '../router.ts';
import { useSession } from '../session.ts';
import { type Connection, type Message } from './connections-model.ts';

export function TestMessage({ connection, onSent }: { connection: Connection; onSent: (to: string) => void }) {
  const { may } = useSession();
  const [to, setTo] = useState('');
  const [text, setText] = useState('Hello from Switchboard');
  const [sent, setSent] = useState<Message | undefined>();
  const action = useAction();

  const submit = async (event: Event) => {
    event.preventDefault();
    setSent(undefined);
    const message = await action.run(() => post<Message>(`/v3/connections/${encodeURIComponent(connection.id)}/chats/messages`, { to, text }));
    if (message) {
      setSent(message);
      onSent(to);
    }
  };

  return (
    <Card title="Send a test message">
      <form class="stack" onSubmit={submit}>
        {connection.status !== 'CONNECTED' && <p class="hint">The connection is not connected: the message will wait or fail until it is.</p>}
        <TextField label="To (phone number)" type="tel" placeholder="+5511999999999" value={to} onValue={setTo} required hint="International format, with the country code." />
        <TextArea label="Text" value={text} onValue={setText} rows={2} required maxLength={4096} />
        <ErrorNote error={action.error} prefix="Not sent." />
        <div class="form-actions">
          <Button type="submit" pending={action.pending}>
            Send test message
          </Button>
        </div>
      </form>
      {sent && (
        <div class="notice" role="status" id="test-message-answer">
          <p>
            Accepted: message <span class="mono">{sent.id}</span>, answered <StatusBadge status={sent.status} />
          </p>
          {may('messages.read', 'read') && <SentStatus connection={connection} message={sent} />}
          {may('messages.read', 'read') && (
            <p>
              <a href={href('messages', connection.id, sent.remoteJid)}>Open its chat in Messages</a> to follow its status.
            </p>
          )}
        </div>
      )}
    </Card>
  );
}

/** The sent message's status as it moves on (PENDING → SENT → DELIVERED → READ, or FAILED). */
function SentStatus({ connection, message }: { connection: Connection; message: Message }) {
  const path = `/v3/connections/${encodeURIComponent(connection.id)}/chats/messages/${encodeURIComponent(message.id)}`;
  const now = useLoad(() => get<Message>(path), [path], { every: 2000 });
  return (
    <p>
      Status now: <StatusBadge status={now.data?.status ?? message.status} />
      {now.data?.error && <span> {`${now.data.error.title} (${now.data.error.code})`}</span>}
    </p>
  );
}
