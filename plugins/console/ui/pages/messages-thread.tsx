/**
 * One chat's history as bubbles (the contact's on the left, ours on the right with their
 * delivery status), newest at the bottom, polled every 2 seconds; and a composer to reply.
 */
import { useState } from 'preact/hooks';
import { get, post } from '../api.ts';
import { Button, Card, EmptyState, ErrorNote, Loading, StatusBadge, TextArea, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { useSession } from '../session.ts';
import { phoneOf, textOf, type Connection, type Message } from './connections-model.ts';
import { useStickToNewest } from '../stick-to-newest.ts';

/** Messages read per call (the API's maximum). */
const PAGE = 100;

export function ChatThread({ connection, chat }: { connection: Connection; chat: string }) {
  const { may } = useSession();
  const base = `/v3/connections/${encodeURIComponent(connection.id)}/chats/messages`;
  // The newest page is polled; older pages, loaded on demand, are kept as they were read.
  const messages = useLoad(() => get<Message[]>(base, { chat, limit: PAGE }), [base, chat], { every: 2000 });
  const [older, setOlder] = useState<{ chat: string; messages: Message[]; complete: boolean }>({ chat, messages: [], complete: false });
  const earlier = older.chat === chat ? older : { chat, messages: [], complete: false };
  const list = messages.data && merged(earlier.messages, messages.data);
  const loadingOlder = useAction();
  const showOlder = async () => {
    const oldest = list?.[0];
    if (!oldest) return;
    const page = await loadingOlder.run(() => get<Message[]>(base, { chat, limit: PAGE, cursor: oldest.id }));
    // Everything on screen is kept, so a message sliding out of the polled page stays visible.
    if (page) setOlder({ chat, messages: [...page, ...list!], complete: page.length < PAGE });
  };
  const mayHaveOlder = Boolean(messages.data && messages.data.length === PAGE && !earlier.complete);
  const contactName = list?.map(nameOf).find(Boolean);

  return (
    <Card title={contactName ? `${contactName} (${phoneOf(chat)})` : `Chat with ${phoneOf(chat)}`}>
      <ErrorNote error={messages.error} prefix="The messages could not be read." />
      {!list ? (
        messages.error ? null : <Loading rows={4} label="Loading messages" />
      ) : list.length === 0 ? (
        <EmptyState title="No messages in this chat yet">{may('messages.send', 'write') ? 'Write the first one below.' : undefined}</EmptyState>
      ) : (
        <>
          {mayHaveOlder && (
            <div class="form-actions older">
              <Button variant="secondary" pending={loadingOlder.pending} onClick={showOlder}>
                Show older messages
              </Button>
            </div>
          )}
          <ErrorNote error={loadingOlder.error} prefix="Older messages could not be read." />
          <Bubbles messages={list} />
        </>
      )}
      {may('messages.send', 'write') && <Composer base={base} chat={chat} connected={connection.status === 'CONNECTED'} onSent={messages.reload} />}
    </Card>
  );
}

function Bubbles({ messages }: { messages: Message[] }) {
  const scroller = useStickToNewest<HTMLOListElement>(messages[messages.length - 1]?.id);

  return (
    <ol class="chat" ref={scroller} aria-label="Messages, oldest first" id="chat-messages">
      {messages.map((m) => (
        <li class={`bubble ${m.direction === 'outbound' ? 'out' : 'in'}`} data-message-id={m.id} aria-label={`${m.direction === 'outbound' ? 'Sent' : 'Received'}: ${textOf(m)}`}>
          <div class="text">{textOf(m)}</div>
          <div class="meta">
            <When at={m.messageTimestamp} />
            {m.direction === 'outbound' && <StatusBadge status={m.status} />}
          </div>
          {m.error && <p class="error-text">{`${m.error.title} (${m.error.code})`}</p>}
        </li>
      ))}
    </ol>
  );
}

function Composer({ base, chat, connected, onSent }: { base: string; chat: string; connected: boolean; onSent: () => Promise<void> }) {
  const [text, setText] = useState('');
  const action = useAction();
  const to = chat.includes('@') && !chat.endsWith('@s.whatsapp.net') ? chat : phoneOf(chat);

  const submit = async (event: Event) => {
    event.preventDefault();
    const sent = await action.run(() => post<Message>(base, { to, text }));
    if (sent) {
      setText('');
      await onSent();
    }
  };

  return (
    <form class="stack composer" onSubmit={submit}>
      {!connected && <p class="hint">The connection is not connected: a reply will wait or fail until it is.</p>}
      <TextArea label="Reply" value={text} onValue={setText} rows={2} required maxLength={4096} />
      <ErrorNote error={action.error} prefix="Not sent." />
      <div class="form-actions">
        <Button type="submit" pending={action.pending}>
          Send
        </Button>
      </div>
    </form>
  );
}

/** The contact's name as their messages carry it (pushName), if any. */
function nameOf(message: Message): string | undefined {
  if (message.direction !== 'inbound') return undefined;
  const name = (message.content as { pushName?: unknown } | null)?.pushName;
  return typeof name === 'string' && name ? name : undefined;
}

/** Older messages then the polled newest page, each message once, with its newest status. */
function merged(older: Message[], newest: Message[]): Message[] {
  const fresh = new Map(newest.map((m) => [m.id, m]));
  const kept = older.filter((m) => !fresh.has(m.id));
  return [...kept, ...newest];
}
