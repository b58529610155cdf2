import type { Actor } from '../../identity/identity.ts';
import { conflict, notFound, unprocessable } from '../../shared/errors.ts';
import type { Clock, IdGen, Random } from '../../shared/ports.ts';
import { contactSyncUpdated, conversationSyncUpdated, type HelpdeskEventLog } from '../events.ts';
import { chatPhoneDigits, importChat, type HistoryChat, type HistoryImportStores } from './history-import.ts';
import { visibleInbox, type Inbox, type InboxStore } from './inboxes.ts';
import { nextSyncStatus, startDecision, type InboxSync, type InboxSyncEvent } from './inbox-sync-status.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';

export type { InboxSync, SyncCounts, InboxSyncStatus } from './inbox-sync-status.ts';

/**
 * Inbox history sync: a team binding an existing number to an inbox brings the connection's past
 * one-to-one chats into the helpdesk (group chats and broadcasts are not conversations).
 *
 * `POST …/inboxes/{id}/sync` writes a RUNNING sync and queues its first page, in one transaction
 * (the outbox). Each page is a job: it locks the sync, takes the next `chatsPerPage` chats after
 * the cursor (by `remote_jid`), imports each (history-import.ts), moves the cursor and the counts,
 * and queues the next page, all in one transaction. A page that crashes rolls back whole and its
 * job runs again from the same cursor; a job whose cursor is no longer the sync's (a duplicate, a
 * late retry of a page already done) does nothing. A huge account is many small transactions,
 * never one giant one.
 *
 * Counts (both kinds count chats as the unit of progress; one chat is one contact and its
 * history lands in one conversation):
 * - `contacts`: `total` one-to-one chats of the connection (recounted after each page: chats may
 *   arrive meanwhile), `processed` chats done, `created` contacts that did not exist.
 * - `conversations`: `total` and `processed` the same chats, `created` conversations opened for
 *   history; `messagesImported` the helpdesk messages brought in.
 *
 * Events: `helpdesk.contact_sync.updated` and `helpdesk.conversation_sync.updated` (events.ts)
 * when the sync starts, after each page (the last page's carry COMPLETED) and when it fails.
 */
export const INBOX_SYNC_QUEUE = 'helpdesk.inbox-sync';
export const DEFAULT_CHATS_PER_PAGE = 20;

/** One page of a sync: `after` is the cursor the page starts from (the dedupe key with the sync id). */
export interface InboxSyncJob {
  workspaceId: string;
  syncId: string;
  after: string | null;
}

export interface InboxSyncStore {
  /** Throws `syncRunning()` when the inbox has a RUNNING sync already (the database's last guard). */
  insert(sync: InboxSync): Promise<void>;
  /** The inbox's most recent sync. */
  latest(workspaceId: string, inboxId: string): Promise<InboxSync | undefined>;
  /** The inbox's RUNNING sync, if any (at most one). */
  running(workspaceId: string, inboxId: string): Promise<InboxSync | undefined>;
  /** The sync, locked until the transaction ends. */
  lock(workspaceId: string, id: string): Promise<InboxSync | undefined>;
  update(sync: InboxSync): Promise<void>;
}

export interface InboxSyncStores extends HistoryImportStores {
  syncs: InboxSyncStore;
  inboxes: InboxStore;
  plans: WorkspacePlans;
  events: HelpdeskEventLog;
  history: HistoryImportStores['history'] & {
    /** One-to-one chats of the connection after `after` by `remote_jid`, `limit` of them. */
    chats(connectionId: string, after: string | null, limit: number): Promise<HistoryChat[]>;
    /** How many one-to-one chats come after `after`. */
    countChats(connectionId: string, after: string | null): Promise<number>;
    /** Holds the contact's lock until the transaction ends: the one the live subscriber takes. */
    lockContact(inboxId: string, phoneDigits: string): Promise<void>;
  };
  /** Queues a page in the caller's transaction (the outbox); the same job twice is one job. */
  jobs: { schedule(job: InboxSyncJob): Promise<void> };
}

export interface InboxSyncDeps {
  clock: Clock;
  ids: IdGen;
  random: Random;
}

export const syncRunning = () => conflict('A history sync of this inbox is running already; follow it with GET /v3/helpdesk/inboxes/{id}/sync');
const noSync = () => notFound('This inbox has no history sync yet');

/** Starts a sync (helpdesk.configure write, PRO plan); Agents get 404 outside their inboxes, 403 in them. */
export async function startInboxSync(stores: InboxSyncStores, deps: InboxSyncDeps, actor: Actor, inboxId: string, options: { chatsPerPage?: number } = {}): Promise<InboxSync> {
  const inbox = await visibleInbox(stores, actor, inboxId);
  await assertHelpdeskConfigurable(stores.plans, actor);
  if (inbox.channelType !== 'CONNECTION') throw unprocessable('Only an inbox bound to a connection has a chat history to sync');
  if (inbox.connectionId === null) throw unprocessable('The inbox\'s connection no longer exists: there is no chat history to sync');
  const now = deps.clock.now();
  const running = await stores.syncs.running(inbox.workspaceId, inbox.id);
  const decision = startDecision(running, now);
  if (decision === 'conflict') throw syncRunning();
  if (decision === 'abandon-and-start') await finish(stores, running!, 'fail', now, 'Abandoned: the sync made no progress for 15 minutes');
  const chats = await stores.history.countChats(inbox.connectionId, null);
  const sync: InboxSync = {
    id: deps.ids.next(),
    workspaceId: inbox.workspaceId,
    inboxId: inbox.id,
    connectionId: inbox.connectionId,
    status: 'RUNNING',
    contacts: { total: chats, processed: 0, created: 0 },
    conversations: { total: chats, processed: 0, created: 0 },
    messagesImported: 0,
    cursor: null,
    chatsPerPage: Math.max(1, Math.min(100, Math.floor(options.chatsPerPage ?? DEFAULT_CHATS_PER_PAGE))),
    error: null,
    startedAt: now,
    finishedAt: null,
    updatedAt: now,
  };
  await stores.syncs.insert(sync);
  await stores.jobs.schedule({ workspaceId: sync.workspaceId, syncId: sync.id, after: null });
  await record(stores, sync);
  return sync;
}

/** The inbox's latest sync (anyone who sees the inbox; its events reach the inbox's members too). */
export async function latestInboxSync(stores: Pick<InboxSyncStores, 'inboxes' | 'syncs'>, actor: Actor, inboxId: string): Promise<InboxSync> {
  const inbox = await visibleInbox(stores, actor, inboxId);
  const sync = await stores.syncs.latest(inbox.workspaceId, inbox.id);
  if (!sync) throw noSync();
  return sync;
}

export type PageOutcome = 'stale' | 'page' | 'completed' | 'failed';

/** Runs one page of a sync in the caller's transaction (see the comment at the top). */
export async function runInboxSyncPage(stores: InboxSyncStores, deps: InboxSyncDeps, job: InboxSyncJob): Promise<PageOutcome> {
  const sync = await stores.syncs.lock(job.workspaceId, job.syncId);
  if (!sync || sync.status !== 'RUNNING' || sync.cursor !== job.after) return 'stale';
  const now = deps.clock.now();
  const inbox = await stores.inboxes.get(sync.workspaceId, sync.inboxId);
  if (!inbox || inbox.connectionId !== sync.connectionId) {
    await finish(stores, sync, 'fail', now, 'The inbox lost its connection during the sync');
    return 'failed';
  }
  const bound = inbox as Inbox & { connectionId: string };
  const chats = await stores.history.chats(sync.connectionId, sync.cursor, sync.chatsPerPage);
  // Every contact lock of the page first, in chat order: the page never waits for a contact's
  // lock while it holds the workspace's conversation counter (a live message holding that
  // contact's lock may be waiting for the counter), so the two cannot deadlock.
  for (const chat of chats) {
    const digits = chatPhoneDigits(chat.remoteJid);
    if (digits !== null) await stores.history.lockContact(bound.id, digits);
  }
  let contactsCreated = 0;
  let conversationsCreated = 0;
  let messagesImported = 0;
  for (const chat of chats) {
    const done = await importChat(stores, deps, bound, chat);
    contactsCreated += Number(done.contactCreated);
    conversationsCreated += Number(done.conversationCreated);
    messagesImported += done.messagesImported;
  }
  const cursor = chats.at(-1)?.remoteJid ?? sync.cursor;
  const remaining = await stores.history.countChats(sync.connectionId, cursor);
  const processed = sync.contacts.processed + chats.length;
  const progressed: InboxSync = {
    ...sync,
    cursor,
    contacts: { total: processed + remaining, processed, created: sync.contacts.created + contactsCreated },
    conversations: { total: processed + remaining, processed, created: sync.conversations.created + conversationsCreated },
    messagesImported: sync.messagesImported + messagesImported,
  };
  if (remaining === 0) {
    await finish(stores, progressed, 'complete', now, null);
    return 'completed';
  }
  await finish(stores, progressed, 'page', now, null);
  await stores.jobs.schedule({ workspaceId: sync.workspaceId, syncId: sync.id, after: cursor });
  return 'page';
}

/**
 * A page failed for good (its job ran out of retries): the sync FAILS with `error`, unless it
 * moved on meanwhile. Whatever the earlier pages imported stays; a new sync resumes the rest.
 */
export async function failInboxSync(stores: InboxSyncStores, deps: InboxSyncDeps, job: InboxSyncJob, error: string): Promise<boolean> {
  const sync = await stores.syncs.lock(job.workspaceId, job.syncId);
  if (!sync || sync.status !== 'RUNNING' || sync.cursor !== job.after) return false;
  await finish(stores, sync, 'fail', deps.clock.now(), error);
  return true;
}

/** Moves the sync through the transition table, stores it and records its two events. */
async function finish(stores: Pick<InboxSyncStores, 'syncs' | 'events'>, sync: InboxSync, event: InboxSyncEvent, now: Date, error: string | null): Promise<InboxSync> {
  const status = nextSyncStatus(sync.status, event);
  if (status === null) return sync;
  const updated: InboxSync = { ...sync, status, error: status === 'FAILED' ? error ?? 'The sync failed' : null, finishedAt: status === 'RUNNING' ? null : now, updatedAt: now };
  await stores.syncs.update(updated);
  await record(stores, updated);
  return updated;
}

async function record(stores: Pick<InboxSyncStores, 'events'>, sync: InboxSync): Promise<void> {
  await stores.events.record(contactSyncUpdated(sync));
  await stores.events.record(conversationSyncUpdated(sync));
}
