import { nextState, type TransitionTable } from '../../shared/transition-table.ts';

/**
 * Status of an inbox history sync (ours: spec 6.5 names only `helpdesk.contact_sync.updated` and
 * `helpdesk.conversation_sync.updated`, payloads not shown).
 *
 * A sync is created RUNNING and works through the connection's chats a page at a time; it ends
 * COMPLETED when no chat is left, or FAILED (the inbox lost its connection, a page kept failing,
 * or it was abandoned: no progress for `SYNC_ABANDONED_AFTER_MS`). A finished sync never moves
 * again; syncing once more starts a new sync (of the same inbox), which imports only what the
 * helpdesk does not hold yet.
 *
 * | from \ event | page    | complete  | fail   |
 * |--------------|---------|-----------|--------|
 * | RUNNING      | RUNNING | COMPLETED | FAILED |
 * | COMPLETED    | -       | -         | -      |   (terminal)
 * | FAILED       | -       | -         | -      |   (terminal)
 *
 * "-" is not an error: a late or repeated job of a finished sync finds nothing to do.
 * Around the table: an inbox has at most one RUNNING sync; starting another while one runs is
 * refused (409), unless the running one is abandoned, which then fails first.
 */
export const INBOX_SYNC_STATUSES = ['RUNNING', 'COMPLETED', 'FAILED'] as const;
export type InboxSyncStatus = (typeof INBOX_SYNC_STATUSES)[number];

export const INBOX_SYNC_EVENTS = ['page', 'complete', 'fail'] as const;
export type InboxSyncEvent = (typeof INBOX_SYNC_EVENTS)[number];

export const INBOX_SYNC_TRANSITIONS: TransitionTable<InboxSyncStatus, InboxSyncEvent> = {
  RUNNING: { page: 'RUNNING', complete: 'COMPLETED', fail: 'FAILED' },
  COMPLETED: {},
  FAILED: {},
};

/** A RUNNING sync that has not moved for this long lost its job (it cannot be retried any more). */
export const SYNC_ABANDONED_AFTER_MS = 15 * 60_000;

/** The status after the event, or null when the table refuses it (the sync is finished). */
export function nextSyncStatus(status: InboxSyncStatus, event: InboxSyncEvent): InboxSyncStatus | null {
  return nextState(INBOX_SYNC_TRANSITIONS, status, event) ?? null;
}

export function isSyncFinished(status: InboxSyncStatus): boolean {
  return INBOX_SYNC_EVENTS.every((event) => nextSyncStatus(status, event) === null);
}

/** What starting a sync does, given the inbox's running sync: start, refuse (409), or fail the abandoned one and start. */
export function startDecision(running: Pick<InboxSync, 'status' | 'updatedAt'> | undefined, now: Date): 'start' | 'conflict' | 'abandon-and-start' {
  if (!running || running.status !== 'RUNNING') return 'start';
  return now.getTime() - running.updatedAt.getTime() >= SYNC_ABANDONED_AFTER_MS ? 'abandon-and-start' : 'conflict';
}

/** Counts of one kind of record of a sync (see core/helpdesk/inboxes/inbox-sync.ts for what they count). */
export interface SyncCounts {
  total: number;
  processed: number;
  created: number;
}

/** One history sync of an inbox: its status, cursor and counts. */
export interface InboxSync {
  id: string;
  workspaceId: string;
  inboxId: string;
  /** The connection whose chats are imported (the inbox's at the start). */
  connectionId: string;
  status: InboxSyncStatus;
  contacts: SyncCounts;
  conversations: SyncCounts;
  /** Helpdesk messages imported so far. */
  messagesImported: number;
  /** The last chat (`remote_jid`) done; null before the first page. */
  cursor: string | null;
  chatsPerPage: number;
  /** Why it FAILED; null otherwise. */
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  updatedAt: Date;
}
