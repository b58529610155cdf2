/**
 * One conversation as an agent works it (issue 23): its messages moving live, the composer, the
 * actions (status, assignee, team, labels, priority, snooze, macros) and the contact's panel.
 * Keys while focus is not in a field: `r` reply, `n` private note, `e` resolve or reopen, and
 * Escape leaves the composer.
 */
import './conversation.css';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { can } from '../../../../../core/identity/roles.ts';
import { ApiError, get, itemsOf, post } from '../../api.ts';
import { ErrorNote, Loading, Notice, StatusBadge, When } from '../../components.tsx';
import { useAction, useLoad } from '../../data.ts';
import { useSession } from '../../session.ts';
import { Composer, type ComposerMode } from './composer.tsx';
import { ConversationActions, setStatus, statusToggle, type Change } from './conversation-actions.tsx';
import { useConversationLive, useReadSignal } from './conversation-live.ts';
import { contactName, personName, type Contact, type Conversation, type HelpdeskMessage, type Person } from './conversation-model.ts';
import { ContactPanel } from './contact-panel.tsx';
import { MessageList } from './message-list.tsx';
import { useMessages } from './use-messages.ts';

export function ConversationPane({ conversationId }: { conversationId: string }) {
  const { may, user } = useSession();
  const base = `/v3/helpdesk/conversations/${encodeURIComponent(conversationId)}`;
  const conversation = useLoad(() => get<Conversation>(base), [base]);
  const c = conversation.data;
  const messages = useMessages(base);
  const people = useLoad(async () => itemsOf<Person>(await get('/v3/members', { per_page: 100 })), []);
  const inboxMembers = useLoad(async () => (c ? itemsOf<Person>(await get(`/v3/helpdesk/inboxes/${encodeURIComponent(c.inboxId)}/members`)) : undefined), [c?.inboxId]);
  const contact = useLoad(async () => (c ? get<Contact>(`/v3/helpdesk/contacts/${encodeURIComponent(c.contactId)}`) : undefined), [c?.contactId]);
  const mayWork = may('helpdesk.work', 'write');
  const changing = useAction();
  const [mode, setMode] = useState<ComposerMode>('reply');
  const [panelOpen, setPanelOpen] = useState(true);
  const field = useRef<HTMLTextAreaElement>(null);
  const readUpTo = useReadSignal(conversationId);
  const [deleted, setDeleted] = useState(false);

  // Read: once the messages are on screen, and again whenever the contact writes meanwhile,
  // while the tab is in view (a message landing in a hidden tab is read when it comes back).
  const markRead = () => {
    if (document.visibilityState !== 'visible') return;
    // Refused on the FREE plan (a write): the page reads the same either way.
    void post(`${base}/read`).catch(() => undefined);
    const last = messages.list?.[messages.list.length - 1];
    if (last) readUpTo(last.id);
  };
  const latestMarkRead = useRef(markRead);
  latestMarkRead.current = markRead;
  const newestIncoming = messages.list?.filter((m) => m.direction === 'incoming').at(-1)?.id;
  useEffect(() => {
    if (messages.list) markRead();
  }, [Boolean(messages.list), newestIncoming]);
  useEffect(() => {
    const shown = () => latestMarkRead.current();
    document.addEventListener('visibilitychange', shown);
    return () => document.removeEventListener('visibilitychange', shown);
  }, []);
  const [announcement, setAnnouncement] = useState('');

  const typists = useConversationLive(conversationId, {
    messageCreated: (message) => {
      messages.add(message);
      if (message.direction === 'incoming') setAnnouncement(`${contactName(contact.data)} wrote: ${message.content}`);
    },
    messageChanged: messages.change,
    messageDeleted: messages.remove,
    conversationChanged: (event) => (event.type === 'helpdesk.conversation.deleted' ? setDeleted(true) : void conversation.reload()),
    reconnected: () => void Promise.all([conversation.reload(), messages.reload()]),
  });

  const change: Change = async (write) => {
    const changed = await changing.run(write);
    if (changed) await conversation.reload();
    await messages.reload();
  };
  const runMacro = async (macroId: string) => {
    const ran = await changing.run(() => post<{ conversation: Conversation; messages: HelpdeskMessage[] }>(`${base}/macros/${encodeURIComponent(macroId)}/run`));
    if (!ran) return;
    ran.messages.forEach(messages.add);
    await Promise.all([conversation.reload(), messages.reload()]);
  };

  useShortcuts({
    r: () => (setMode('reply'), field.current?.focus()),
    n: () => (setMode('note'), field.current?.focus()),
    e: () => c && mayWork && void change(() => setStatus(c, statusToggle(c).status)),
  });

  const mentionable = useMemo(() => {
    const inInbox = new Set((inboxMembers.data ?? []).map((m) => m.userId));
    return (people.data ?? []).filter((p) => p.userId !== user.userId && (inInbox.has(p.userId) || can(p.roles ?? [], 'helpdesk.configure', 'read')));
  }, [people.data, inboxMembers.data, user.userId]);
  const name = contactName(contact.data);
  const typing = typists.filter((id) => id !== user.userId).map((id) => personName(people.data, id));

  // Read again after a change of inboxes (or anything) and now 404: out of this member's reach.
  const gone = conversation.error instanceof ApiError && conversation.error.status === 404 && c !== undefined;
  if (deleted || gone || (conversation.error && !c)) {
    return (
      <section class="conversation" aria-label="Conversation">
        {deleted ? (
          <Notice>This conversation was deleted.</Notice>
        ) : gone ? (
          <Notice>This conversation is no longer in your inboxes.</Notice>
        ) : (
          <ErrorNote error={conversation.error} prefix="The conversation could not be read." />
        )}
      </section>
    );
  }
  return (
    <section class="conversation" aria-label="Conversation">
      <div class={`conversation-grid ${panelOpen ? 'with-panel' : ''}`}>
        <div class="conversation-main">
          <header class="conversation-head">
            <div class="conversation-title">
              <h2>{c ? `${name} · #${c.displayId}` : 'Conversation'}</h2>
              {c && (
                <p class="muted">
                  <StatusBadge status={c.status} /> {c.priority && <span class="badge neutral">{c.priority}</span>}{' '}
                  {c.status === 'SNOOZED' && c.snoozedUntil && (
                    <>
                      until <When at={c.snoozedUntil} />
                    </>
                  )}{' '}
                  Assigned to {c.assigneeAgentBotId ? 'an agent bot' : personName(people.data, c.assigneeUserId)}
                  {c.labels.length > 0 && (
                    <span class="labels" aria-label="Labels">
                      {c.labels.map((l) => (
                        <span class="label-chip">{l}</span>
                      ))}
                    </span>
                  )}
                </p>
              )}
            </div>
            <button type="button" class="btn secondary panel-toggle" aria-expanded={panelOpen} aria-controls="contact-panel" onClick={() => setPanelOpen(!panelOpen)}>
              {panelOpen ? 'Hide contact' : 'Show contact'}
            </button>
          </header>
          {!c && mayWork && <div class="conversation-actions placeholder" aria-hidden="true" />}
        {c && mayWork && <ConversationActions conversation={c} inboxMembers={inboxMembers.data} people={people.data} pending={changing.pending} change={change} onMacroRun={runMacro} />}
          <ErrorNote error={changing.error} prefix="Not changed." />
          <ErrorNote error={conversation.error} prefix="The conversation could not be read again." />
          <ErrorNote error={messages.error} prefix="The messages could not be read." />
          {!messages.list ? (
            messages.error ? null : <Loading rows={5} label="Loading messages" />
          ) : messages.list.length === 0 ? (
            <p class="muted thread-empty">No messages yet.</p>
          ) : (
            <MessageList messages={messages.list} people={people.data} contactName={name} olderPending={messages.olderPending} onOlder={messages.hasOlder ? messages.older : undefined} />
          )}
          <p class="sr-only" aria-live="polite">
          {announcement}
        </p>
        <p class="typing" aria-live="polite">
            {typing.length === 1 ? `${typing[0]} is typing…` : typing.length > 1 ? `${typing.join(', ')} are typing…` : ''}
          </p>
          {mayWork && c && (
            <Composer
              conversationId={conversationId}
              inboxId={c.inboxId}
              mode={mode}
              onMode={setMode}
              field={field}
              mentionable={mentionable}
              sendWindow={c.sendWindow}
              replyRefusal={c.aiAgentEnabled ? 'The AI agent holds this chat: replies wait until it is switched off. Notes can still be added.' : undefined}
              onSent={messages.add}
            />
          )}
        </div>
        {panelOpen && c && (
          <aside class="contact-panel" id="contact-panel" aria-label="Contact">
            <ContactPanel contactId={c.contactId} contact={contact} conversationId={c.id} people={people.data} mayWrite={mayWork} />
          </aside>
        )}
      </div>
    </section>
  );
}

/** Single-key shortcuts on the page, ignored while typing in a field or with a modifier held. */
function useShortcuts(keys: Record<string, () => void>): void {
  const latest = useRef(keys);
  latest.current = keys;
  useEffect(() => {
    const pressed = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target as HTMLElement | null;
      if (target?.closest('input, textarea, select, [contenteditable="true"]')) return;
      // A dialog on top (the keys' help, say) has the keyboard, not the conversation behind it.
      if (document.querySelector('dialog[open]')) return;
      const run = latest.current[event.key];
      if (!run) return;
      event.preventDefault();
      run();
    };
    document.addEventListener('keydown', pressed);
    return () => document.removeEventListener('keydown', pressed);
  }, []);
}
