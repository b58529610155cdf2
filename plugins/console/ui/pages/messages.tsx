/**
 * Messages: a connection's chats and their history (`#/messages`, `#/messages/<connectionId>`,
 * `#/messages/<connectionId>/<chat>`). The open chat is polled every 2 seconds, so new messages
 * and the delivery status of sent ones move without a reload; a composer replies in the chat.
 */
import { useState } from 'preact/hooks';
import { get, itemsOf } from '../api.ts';
import { Button, Card, EmptyState, ErrorNote, Loading, PageHeader, SelectField, StatusBadge, TextField, When } from '../components.tsx';
import { useLoad } from '../data.ts';
import { href, navigate, type Route } from '../router.ts';
import { useSession } from '../session.ts';
import { driverName, phoneOf, type Chat, type Connection } from './connections-model.ts';
import { ChatThread } from './messages-thread.tsx';

export function MessagesPage({ route }: { route: Route }) {
  const [, connectionId, chat] = route.parts;
  const connections = useLoad(() => get<Connection[]>('/v3/connections'), [], { every: 10_000 });
  const list = connections.data;
  const connection = list?.find((c) => c.id === connectionId);

  return (
    <>
      <PageHeader title="Messages" description="The chats of each connection, with the delivery status of what was sent." />
      <ErrorNote error={connections.error} prefix="The connections could not be read." />
      {!list ? (
        connections.error ? null : <Loading label="Loading connections" />
      ) : list.length === 0 ? (
        <Card>
          <EmptyState title="No connections yet">
            Messages come and go through a connection. <a href={href('connections')}>Create one in Connections</a> first.
          </EmptyState>
        </Card>
      ) : !connectionId ? (
        <ConnectionPicker connections={list} />
      ) : !connection ? (
        <Card>
          <EmptyState title="This connection is not in the workspace">
            <a href={href('messages')}>Pick another connection</a>.
          </EmptyState>
        </Card>
      ) : (
        <>
          <SelectField
            label="Connection"
            value={connection.id}
            options={list.map((c) => ({ value: c.id, label: c.phoneNumber ? `${c.name} (${phoneOf(c.phoneNumber)})` : c.name }))}
            onValue={(id) => navigate('messages', id)}
          />
          <div class="split messages-split">
            <ChatList connection={connection} open={chat} />
            {chat ? (
              <div class="thread">
                <ChatThread connection={connection} chat={chat} />
              </div>
            ) : (
              <Card>
                <EmptyState title="No chat open">Pick a chat from the list, or start one with a number.</EmptyState>
              </Card>
            )}
          </div>
        </>
      )}
    </>
  );
}

function ConnectionPicker({ connections }: { connections: Connection[] }) {
  return (
    <Card title="Pick a connection">
      <ul class="link-list">
        {connections.map((c) => (
          <li class="row">
            <a href={href('messages', c.id)}>{c.name}</a>
            <span class="muted">
              {driverName(c.driver)} · <span class="mono">{phoneOf(c.phoneNumber)}</span>
            </span>
            <StatusBadge status={c.status} />
          </li>
        ))}
      </ul>
    </Card>
  );
}

function ChatList({ connection, open }: { connection: Connection; open: string | undefined }) {
  const { may } = useSession();
  const [search, setSearch] = useState('');
  const chats = useLoad(
    async () => itemsOf<Chat>(await get(`/v3/connections/${encodeURIComponent(connection.id)}/chats`, { per_page: 50, s: search })),
    [connection.id, search],
    { every: 5000 },
  );
  const [number, setNumber] = useState('');

  return (
    <Card title="Chats">
      <TextField label="Search chats" type="search" value={search} onValue={setSearch} placeholder="Number or name" />
      <ErrorNote error={chats.error} prefix="The chats could not be read." />
      {!chats.data ? (
        chats.error ? null : <Loading label="Loading chats" />
      ) : chats.data.length === 0 ? (
        <EmptyState title={search ? 'No chat matches' : 'No chats yet'}>
          {search ? 'Try another number or name.' : 'A chat starts when a message is sent to a number or a contact writes.'}
        </EmptyState>
      ) : (
        <ul class="chat-list" aria-label="Chats">
          {chats.data.map((chat) => (
            <li>
              <a href={href('messages', connection.id, chat.remoteJid)} aria-current={chat.remoteJid === open ? 'page' : undefined}>
                <strong>{chat.name || phoneOf(chat.remoteJid)}</strong>
                <span class="muted">
                  {chat.name && <span class="mono">{phoneOf(chat.remoteJid)} · </span>}
                  <When at={chat.lastMessageAt} />
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
      {may('messages.send', 'write') && (
        <form
          class="stack new-chat"
          onSubmit={(event) => {
            event.preventDefault();
            const digits = number.replace(/[^\d]/g, '');
            if (digits) navigate('messages', connection.id, digits);
          }}
        >
          <TextField label="New chat with" type="tel" placeholder="+5511999999999" value={number} onValue={setNumber} required />
          <Button type="submit" variant="secondary">
            Open chat
          </Button>
        </form>
      )}
    </Card>
  );
}
