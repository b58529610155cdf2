/**
 * The agent inbox (issue 23): the conversation list with its views, filters and search on the
 * left, the open conversation with its composer and the contact's panel beside it. The address
 * is `#/inbox` or `#/inbox/<conversationId>`, with the list's filters in its query
 * (inbox-model.ts). On a phone the list and the conversation take the screen in turn.
 */
import './inbox.css';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { get, itemsOf } from '../../api.ts';
import { useLoad } from '../../data.ts';
import { Notice } from '../../components.tsx';
import { useLive } from '../../live.ts';
import type { Route } from '../../router.ts';
import { AvailabilityToggle, Colleagues } from './availability.tsx';
import { ConversationList } from './conversation-list.tsx';
import { ConversationPane } from './conversation-pane.tsx';
import { useConversationRows } from './conversation-rows.ts';
import { contactName, inboxHref, LIST_EVENTS, type ListedConversation, readListState, replaceListState, type Counts, type ListState, type Named } from './inbox-model.ts';
import { FilterFields, ScopeSelect, SearchBox, ViewTabs } from './list-filters.tsx';
import { NewConversation, type StartedConversation } from './new-conversation.tsx';
import { NotificationBell } from './notifications.tsx';
import { ShortcutHelp, useListShortcuts } from './shortcuts.tsx';

/** Live events come in bursts (a message, then the conversation's update): one re-read per burst. */
const SETTLE_MS = 250;

export function InboxPage({ route }: { route: Route }) {
  const conversationId = route.parts[1];
  const state = readListState(route);
  const change = (next: Partial<ListState>) => replaceListState({ ...state, ...next }, conversationId);
  const open = (id: string) => {
    location.hash = inboxHref(state, id).slice(1);
  };

  const names = useNames();
  const counts = useLoad(() => get<Counts>('/v3/helpdesk/conversations/counts'), [], { every: 30_000 });
  const list = useConversationRows(state);
  useLiveRefresh(() => {
    void list.refresh();
    void counts.reload();
  });

  const [help, setHelp] = useState(false);
  /** What the last "New conversation" did, shown above the conversation it went to. */
  const [startedNote, setStartedNote] = useState<{ conversationId: string; text: string } | undefined>();
  const started = (c: StartedConversation) => {
    setStartedNote({
      conversationId: c.id,
      text: c.created ? 'Conversation started.' : 'An open conversation with this contact already exists: your message was added to it.',
    });
    open(c.id);
  };
  useListShortcuts({
    j: () => step(1),
    k: () => step(-1),
    f: () => document.getElementById('inbox-search')?.focus(),
    '?': () => setHelp(true),
  });
  function step(by: 1 | -1) {
    const rows = list.rows ?? [];
    if (rows.length === 0) return;
    // The address, not this render's route: a key pressed again before the page re-rendered
    // for the last one must step on from where that one went.
    const current = decodeURIComponent(/^#\/inbox\/([^?]+)/.exec(location.hash)?.[1] ?? '');
    const at = rows.findIndex((r) => r.id === current);
    const next = at === -1 ? (by === 1 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, at + by));
    if (rows[next] && rows[next].id !== current) open(rows[next].id);
  }

  useEffect(() => {
    document.title = 'Inbox · Switchboard';
  }, []);

  return (
    <div class={`inbox${conversationId ? ' has-conversation' : ''}`}>
      <section class="inbox-list" aria-labelledby="inbox-heading">
        <div class="inbox-head">
          <h1 id="inbox-heading">Inbox</h1>
          <div class="inbox-tools">
            <NewConversation inboxes={names.inboxes} onStarted={started} />
            <button type="button" class="btn link" onClick={() => setHelp(true)} aria-label="Keyboard shortcuts">
              ?
            </button>
            <NotificationBell memberName={names.member} conversationName={(id) => conversationName(list.rows, id)} onOpen={open} />
          </div>
        </div>
        <div class="inbox-presence">
          <AvailabilityToggle />
          <Colleagues members={names.members} />
        </div>
        <ViewTabs state={state} counts={counts.data} onChange={change} />
        <ScopeSelect state={state} counts={counts.data} inboxes={names.inboxes} teams={names.teams} onChange={change} />
        <SearchBox value={state.s} onSearch={(s) => change({ s })} />
        <FilterFields state={state} labels={names.labels} members={names.members} onChange={change} />
        <ConversationList list={list} state={state} selectedId={conversationId} memberName={names.member} inboxName={names.inbox} />
      </section>
      <div class="inbox-conversation">
        {conversationId ? (
          <>
            <a class="back-to-list" href={inboxHref(state)}>
              ← Conversations
            </a>
            {startedNote?.conversationId === conversationId && (
              <div class="started-note">
                <Notice>{startedNote.text}</Notice>
                <button type="button" class="btn link" aria-label="Dismiss" onClick={() => setStartedNote(undefined)}>
                  ✕
                </button>
              </div>
            )}
            <ConversationPane key={conversationId} conversationId={conversationId} />
          </>
        ) : (
          <div class="pick-one muted">
            <p>Pick a conversation from the list.</p>
            <p>
              Keys: <kbd>j</kbd> and <kbd>k</kbd> move through the list, <kbd>f</kbd> searches, <kbd>?</kbd> lists them all.
            </p>
          </div>
        )}
      </div>
      <ShortcutHelp open={help} onClose={() => setHelp(false)} />
    </div>
  );
}

/** The contact of a conversation the list shows, to name it in a notification. */
function conversationName(rows: ListedConversation[] | undefined, id: string): string | undefined {
  const row = rows?.find((r) => r.id === id);
  return row && contactName(row.contact);
}

/** Re-reads the list and counts once a burst of helpdesk events settles. */
function useLiveRefresh(refresh: () => void) {
  const live = useLive();
  const latest = useRef(refresh);
  latest.current = refresh;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => latest.current(), SETTLE_MS);
    };
    const offs = LIST_EVENTS.map((event) => live.on(event, soon));
    return () => {
      clearTimeout(timer);
      offs.forEach((off) => off());
    };
  }, [live.socket]);
}

/** Inboxes, teams, labels and members by id, read once: what the rows and filters name. */
function useNames() {
  const named = (path: string, id = 'id') => async () =>
    itemsOf<Record<string, string>>(await get(path, { per_page: 100 })).map((x) => ({ id: x[id]!, name: x.name || x.email || x[id]! }));
  // A list the member may not read (a role without it) leaves its names out, nothing more.
  const quiet = (load: () => Promise<Named[]>) => () => load().catch(() => [] as Named[]);
  const inboxes = useLoad(quiet(named('/v3/helpdesk/inboxes')), []);
  const teams = useLoad(quiet(named('/v3/helpdesk/teams')), []);
  const labels = useLoad(quiet(named('/v3/helpdesk/labels')), []);
  const members = useLoad(quiet(named('/v3/members', 'userId')), []);
  return useMemo(() => {
    const byId = (list: Named[] | undefined) => new Map((list ?? []).map((x) => [x.id, x.name]));
    const memberNames = byId(members.data);
    const inboxNames = byId(inboxes.data);
    return {
      inboxes: inboxes.data ?? [],
      teams: teams.data ?? [],
      labels: labels.data ?? [],
      members: members.data ?? [],
      member: (id: string) => memberNames.get(id),
      inbox: (id: string) => inboxNames.get(id),
    };
  }, [inboxes.data, teams.data, labels.data, members.data]);
}
