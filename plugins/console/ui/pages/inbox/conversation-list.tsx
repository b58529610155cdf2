/**
 * The conversations of the chosen view and filters, one row each: who (name or phone), the last
 * message, when, unread, priority, labels and assignee. A row is a link to
 * `#/inbox/<id>` keeping the filters; the open one is marked as the current page.
 */
import { useEffect, useRef } from 'preact/hooks';
import { Button, EmptyState, ErrorNote, Loading } from '../../components.tsx';
import type { ConversationRows } from './conversation-rows.ts';
import { noteParts } from './mention-text.ts';
import { contactName, inboxHref, shortTime, type ListedConversation, type ListState } from './inbox-model.ts';

export function ConversationList({
  list,
  state,
  selectedId,
  memberName,
  inboxName,
}: {
  list: ConversationRows;
  state: ListState;
  selectedId: string | undefined;
  memberName: (userId: string) => string | undefined;
  inboxName: (inboxId: string) => string | undefined;
}) {
  const ref = useRef<HTMLUListElement>(null);
  // j/k (or a click) may select a row below the fold: keep it in sight.
  useEffect(() => {
    ref.current?.querySelector('[aria-current="page"]')?.scrollIntoView({ block: 'nearest' });
  }, [selectedId, list.rows]);

  if (!list.rows) return list.error ? <ErrorNote error={list.error} /> : <Loading rows={6} label="Loading conversations" />;
  return (
    <>
      <ErrorNote error={list.error} />
      {list.rows.length === 0 ? (
        <EmptyState title="No conversations match">
          {state.s || state.status !== 'OPEN' || state.priority || state.labels || state.assigneeUserId || state.lastActivityFrom
            ? 'Try another search or fewer filters.'
            : state.view === 'mine'
              ? 'Nothing is assigned to you right now.'
              : 'New conversations show up here as contacts write in.'}
        </EmptyState>
      ) : (
        <ul class={`conversation-rows${list.loading ? ' refreshing' : ''}`} ref={ref} aria-busy={list.loading ? 'true' : undefined}>
          {list.rows.map((row) => (
            <ConversationRow row={row} state={state} selected={row.id === selectedId} assignee={row.assigneeUserId ? memberName(row.assigneeUserId) : undefined} inbox={inboxName(row.inboxId)} />
          ))}
        </ul>
      )}
      {list.nextCursor && (
        <div class="load-more">
          <Button variant="secondary" pending={list.loadingMore} onClick={() => void list.loadMore()}>
            Load more
          </Button>
        </div>
      )}
    </>
  );
}

function ConversationRow({ row, state, selected, assignee, inbox }: { row: ListedConversation; state: ListState; selected: boolean; assignee: string | undefined; inbox: string | undefined }) {
  const name = contactName(row.contact);
  const last = row.lastMessage;
  return (
    <li class={`conversation-row${row.unread ? ' unread' : ''}`} data-conversation-id={row.id}>
      <a href={inboxHref(state, row.id)} aria-current={selected ? 'page' : undefined}>
        <span class="row-top">
          <span class="row-name">{name}</span>
          {row.unread && (
            <span class="unread-dot" title="Unread">
              <span class="sr-only">Unread</span>
            </span>
          )}
          <time class="row-time" dateTime={row.lastActivityAt} title={new Date(row.lastActivityAt).toLocaleString()}>
            {shortTime(row.lastActivityAt)}
          </time>
        </span>
        <span class="row-preview">
          {last ? (
            <>
              {last.private ? <em>Note: </em> : last.direction === 'outgoing' ? <em>Reply: </em> : null}
              {previewText(last.content) || <em>(attachment)</em>}
            </>
          ) : (
            <em>No messages yet</em>
          )}
        </span>
        <span class="row-tags">
          <span class="muted">#{row.displayId}</span>
          {inbox && <span class="muted">{inbox}</span>}
          {row.status !== 'OPEN' && <span class="tag">{row.status.toLowerCase()}</span>}
          {row.priority && <span class={`tag priority-${row.priority.toLowerCase()}`}>{row.priority.toLowerCase()}</span>}
          {row.labels.map((label) => (
            <span class="tag label">{label}</span>
          ))}
          <span class="row-assignee">{row.assigneeUserId ? (assignee ?? 'Assigned') : row.assigneeAgentBotId ? 'Bot' : 'Unassigned'}</span>
        </span>
      </a>
    </li>
  );
}

/** A message as one line: mentions read as `@Name`, not as their markup. */
function previewText(content: string): string {
  return noteParts(content)
    .map((part) => ('mention' in part ? `@${part.mention}` : part.text))
    .join('');
}
