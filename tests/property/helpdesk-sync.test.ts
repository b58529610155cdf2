import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import type { Contact } from '../../core/helpdesk/contacts/contacts.ts';
import type { Conversation, HelpdeskMessage } from '../../core/helpdesk/conversations/conversations.ts';
import type { HelpdeskEvent } from '../../core/helpdesk/events.ts';
import { historyStatus, importedDelivery, uuidV7At, type HistoryMessage } from '../../core/helpdesk/inboxes/history-import.ts';
import type { Inbox } from '../../core/helpdesk/inboxes/inboxes.ts';
import { failInboxSync, runInboxSyncPage, startInboxSync, syncRunning, type InboxSync, type InboxSyncJob, type InboxSyncStores } from '../../core/helpdesk/inboxes/inbox-sync.ts';
import { INBOX_SYNC_EVENTS, INBOX_SYNC_STATUSES, INBOX_SYNC_TRANSITIONS, isSyncFinished, nextSyncStatus, SYNC_ABANDONED_AFTER_MS } from '../../core/helpdesk/inboxes/inbox-sync-status.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { DomainError } from '../../core/shared/errors.ts';

/**
 * Inbox history sync (core/helpdesk/inboxes/inbox-sync.ts), model-based.
 *
 * The system is the real use cases (`startInboxSync`, `runInboxSyncPage`, `failInboxSync`) over
 * in-memory ports, each call in a "transaction" (a snapshot restored when it throws), and a queue
 * that keeps jobs as pg-boss does (one per dedupe key; a job may be handed out again after it ran:
 * a duplicate or a late retry). Meanwhile the live subscriber takes some messages, pages crash
 * half-way, time passes. The model is the transition table of inbox-sync-status.ts and what a
 * user expects: at most one RUNNING sync per inbox (409 otherwise, unless abandoned); a sync's
 * events start RUNNING, count up, end once; a COMPLETED sync has every chat's messages in the
 * helpdesk exactly once, whatever crashed or ran twice on the way.
 */

const T0 = Date.UTC(2025, 6, 1, 9);
const ACTOR: Actor = { userId: 'u1', workspaceId: 'w1', roles: ['OWNER'] };
const INBOX: Inbox = { id: 'i1', workspaceId: 'w1', name: 'Support', channelType: 'CONNECTION', connectionId: 'k1', timezone: 'UTC', webhookUrl: null, hmacMandatory: false, inboundSecret: null, createdAt: new Date(T0), updatedAt: new Date(T0) };

interface ChatRow {
  remoteJid: string;
  name: string | null;
  messages: Array<Omit<HistoryMessage, 'imported'>>;
}

interface State {
  now: number;
  syncs: InboxSync[];
  contacts: Contact[];
  conversations: Conversation[];
  messages: HelpdeskMessage[];
  events: HelpdeskEvent[];
  queued: Array<{ key: string; job: InboxSyncJob }>;
  /** Every job ever queued (pg-boss keeps them; the same key is never queued twice). */
  keys: string[];
  ran: InboxSyncJob[];
  ids: number;
}

interface Real {
  chats: ChatRow[];
  s: State;
  /** Makes the next helpdesk message insert throw (a crash half-way through a page). */
  crashNext: boolean;
}

function stores(r: Real): InboxSyncStores {
  const s = () => r.s;
  const clone = <T>(x: T): T => structuredClone(x);
  return {
    syncs: {
      async insert(sync) {
        if (s().syncs.some((x) => x.inboxId === sync.inboxId && x.status === 'RUNNING')) throw syncRunning();
        s().syncs.push(clone(sync));
      },
      latest: async (_w, inboxId) => clone(s().syncs.filter((x) => x.inboxId === inboxId).at(-1)),
      running: async (_w, inboxId) => clone(s().syncs.find((x) => x.inboxId === inboxId && x.status === 'RUNNING')),
      lock: async (_w, syncId) => clone(s().syncs.find((x) => x.id === syncId)),
      update: async (sync) => void (s().syncs = s().syncs.map((x) => (x.id === sync.id ? clone(sync) : x))),
    },
    inboxes: { get: async () => INBOX, isMember: async () => false } as unknown as InboxSyncStores['inboxes'],
    plans: { planOf: async () => 'PRO' },
    events: { record: async (e) => void s().events.push(clone(e)) },
    jobs: {
      async schedule(job) {
        const key = `${job.syncId}:${job.after ?? ''}`;
        if (s().keys.includes(key)) return;
        s().keys.push(key);
        s().queued.push({ key, job });
      },
    },
    history: {
      chats: async (_c, after, limit) => r.chats.filter((c) => after === null || c.remoteJid > after).slice(0, limit).map((c) => ({ remoteJid: c.remoteJid, name: c.name })),
      countChats: async (_c, after) => r.chats.filter((c) => after === null || c.remoteJid > after).length,
      messages: async (_c, jid, limit) =>
        r.chats.find((c) => c.remoteJid === jid)!.messages.slice(-limit).map((m) => ({ ...m, imported: s().messages.some((h) => h.chatMessageId === m.id) })),
      lockContact: async () => {},
    },
    contacts: {
      findByPhone: async (_w, phone) => clone(s().contacts.find((c) => c.phone === phone)),
      async insert(contact) {
        if (s().contacts.some((c) => c.phone === contact.phone)) throw new Error('duplicate phone');
        s().contacts.push(clone(contact));
      },
    },
    conversations: {
      latestUnresolved: async (inboxId, contactId) => clone(s().conversations.filter((c) => c.inboxId === inboxId && c.contactId === contactId && c.status !== 'RESOLVED').at(-1)),
      async insert(c) {
        const conversation = { ...clone(c), displayId: s().conversations.length + 1 };
        s().conversations.push(conversation);
        return clone(conversation);
      },
      update: async (c) => void (s().conversations = s().conversations.map((x) => (x.id === c.id ? clone(c) : x))),
    },
    messages: {
      async insert(m) {
        if (r.crashNext) {
          r.crashNext = false;
          throw new Error('worker died');
        }
        if (s().messages.some((x) => x.chatMessageId === m.chatMessageId)) return false;
        s().messages.push(clone(m));
        return true;
      },
    },
  };
}

const deps = (r: Real) => ({
  clock: { now: () => new Date(r.s.now) },
  ids: { next: () => `00000000-0000-7000-8000-${String(++r.s.ids).padStart(12, '0')}` },
  random: { bytes: (n: number) => new Uint8Array(n).map((_, i) => (i * 37 + r.s.ids) % 256) },
});

/** One transaction: the state is restored when the work throws. */
async function transaction<T>(r: Real, work: () => Promise<T>): Promise<T> {
  const snapshot = structuredClone(r.s);
  try {
    return await work();
  } catch (error) {
    r.s = snapshot;
    throw error;
  }
}

interface Model {
  /** The latest sync's status, if any. */
  latest: 'RUNNING' | 'COMPLETED' | 'FAILED' | null;
  /** Syncs started. */
  syncs: number;
}

const running = (r: Real) => r.s.syncs.filter((x) => x.status === 'RUNNING');

/** Every command checks the invariants after it acts. */
abstract class SyncCommand implements fc.Command<Model, Real> {
  check(_m: Readonly<Model>): boolean {
    return true;
  }
  abstract act(m: Model, r: Real): Promise<void>;
  async run(m: Model, r: Real) {
    await this.act(m, r);
    invariants(r);
  }
}

class Start extends SyncCommand {
  override async act(m: Model, r: Real) {
    const abandoned = m.latest === 'RUNNING' && r.s.now - r.s.syncs.at(-1)!.updatedAt.getTime() >= SYNC_ABANDONED_AFTER_MS;
    const attempt = transaction(r, () => startInboxSync(stores(r), deps(r), ACTOR, INBOX.id, { chatsPerPage: 2 }));
    if (m.latest === 'RUNNING' && !abandoned) {
      const error = await attempt.catch((e) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error.kind).toBe('conflict');
      return;
    }
    const sync = await attempt;
    if (abandoned) {
      expect(r.s.syncs.at(-2)!.status).toBe('FAILED');
      expect(r.s.syncs.at(-2)!.error).toContain('Abandoned');
    }
    expect(sync).toMatchObject({ status: 'RUNNING', cursor: null, contacts: { total: r.chats.length, processed: 0, created: 0 } });
    m.latest = 'RUNNING';
    m.syncs += 1;
  }
  override toString = () => 'start';
}

/** The queue hands out a job: the next one, or (`again`) one that already ran. */
class RunJob extends SyncCommand {
  constructor(readonly again: boolean, readonly crash: boolean) {
    super();
  }
  override check(m: Readonly<Model>) {
    return m.syncs > 0;
  }
  override async act(m: Model, r: Real) {
    const job = this.again ? r.s.ran.at(-1) : r.s.queued[0]?.job;
    if (!job) return;
    r.crashNext = this.crash;
    const before = structuredClone(r.s.syncs.find((x) => x.id === job.syncId)!);
    let outcome: string;
    try {
      outcome = await transaction(r, () => runInboxSyncPage(stores(r), deps(r), job));
    } catch {
      // Rolled back whole; the job stays queued for its retry.
      r.crashNext = false;
      expect(r.s.syncs.find((x) => x.id === job.syncId)).toEqual(before);
      return;
    }
    r.crashNext = false;
    if (!this.again) r.s.queued.shift();
    r.s.ran.push(job);
    const after = r.s.syncs.find((x) => x.id === job.syncId)!;
    if (before.status !== 'RUNNING' || before.cursor !== job.after) {
      expect(outcome).toBe('stale');
      expect(after).toEqual(before);
      return;
    }
    // The page took the next two chats after the cursor; it completed when no chat was left.
    const left = r.chats.filter((c) => before.cursor === null || c.remoteJid > before.cursor).length;
    expect(after.contacts.processed).toBe(before.contacts.processed + Math.min(2, left));
    expect(outcome).toBe(left <= 2 ? 'completed' : 'page');
    if (outcome === 'completed') {
      m.latest = job.syncId === r.s.syncs.at(-1)!.id ? 'COMPLETED' : m.latest;
      expect(after).toMatchObject({ status: 'COMPLETED', contacts: { total: r.chats.length, processed: r.chats.length } });
    }
  }
  override toString = () => `run(${this.again ? 'again' : 'next'}${this.crash ? ', crash' : ''})`;
}

/** The last retry of the next job fails for good. */
class FailJob extends SyncCommand {
  override check(m: Readonly<Model>) {
    return m.syncs > 0;
  }
  override async act(m: Model, r: Real) {
    const queued = r.s.queued[0];
    if (!queued) return;
    const sync = r.s.syncs.find((x) => x.id === queued.job.syncId)!;
    const failed = await transaction(r, () => failInboxSync(stores(r), deps(r), queued.job, 'kept failing'));
    r.s.queued.shift();
    expect(failed).toBe(sync.status === 'RUNNING' && sync.cursor === queued.job.after);
    if (failed && sync.id === r.s.syncs.at(-1)!.id) m.latest = 'FAILED';
  }
  override toString = () => 'fail';
}

/** The live subscriber brings in one message of a chat (a contact writing while the sync runs). */
class Live extends SyncCommand {
  constructor(readonly chat: number, readonly message: number) {
    super();
  }
  override async act(_m: Model, r: Real) {
    const chat = r.chats[this.chat % Math.max(1, r.chats.length)];
    const m = chat?.messages[this.message % Math.max(1, chat.messages.length)];
    if (!chat || !m || r.s.messages.some((x) => x.chatMessageId === m.id)) return;
    const phone = `+${chat.remoteJid.split('@')[0]}`;
    let contact = r.s.contacts.find((c) => c.phone === phone);
    if (!contact) r.s.contacts.push((contact = { id: `live-${phone}`, workspaceId: 'w1', name: null, phone, email: null, customAttributes: {}, createdAt: new Date(r.s.now), updatedAt: new Date(r.s.now) }));
    let conversation = r.s.conversations.filter((c) => c.contactId === contact.id && c.status !== 'RESOLVED').at(-1);
    if (!conversation) {
      conversation = { id: `live-c${r.s.conversations.length}`, workspaceId: 'w1', displayId: r.s.conversations.length + 1, inboxId: INBOX.id, contactId: contact.id, status: 'OPEN', snoozedUntil: null, priority: null, assigneeUserId: null, assigneeAgentBotId: null, teamId: null, labels: [], customAttributes: {}, aiAgentEnabled: false, assigneeLastSeenAt: null, lastActivityAt: new Date(r.s.now), createdAt: new Date(r.s.now), updatedAt: new Date(r.s.now) };
      r.s.conversations.push(conversation);
    }
    r.s.messages.push({ id: `live-m${r.s.messages.length}`, conversationId: conversation.id, workspaceId: 'w1', direction: 'incoming', private: false, content: m.text, senderUserId: null, chatMessageId: m.id, status: null, externalError: null, createdAt: new Date(r.s.now) });
  }
  override toString = () => `live(${this.chat}, ${this.message})`;
}

class Tick extends SyncCommand {
  constructor(readonly minutes: number) {
    super();
  }
  override async act(_m: Model, r: Real) {
    r.s.now += this.minutes * 60_000;
  }
  override toString = () => `tick(${this.minutes} min)`;
}

/** What must hold after every command. */
function invariants(r: Real) {
  expect(running(r).length).toBeLessThanOrEqual(1);
  // No connection message in the helpdesk twice; no phone with two contacts.
  const carried = r.s.messages.map((m) => m.chatMessageId);
  expect(new Set(carried).size).toBe(carried.length);
  expect(new Set(r.s.contacts.map((c) => c.phone)).size).toBe(r.s.contacts.length);
  // No conversation without a message (a chat with nothing new opens nothing).
  for (const c of r.s.conversations) expect(r.s.messages.some((m) => m.conversationId === c.id)).toBe(true);
  // A RUNNING sync always has its next page queued: nothing that crashed or ran twice loses it.
  for (const sync of running(r)) expect(r.s.queued.some((q) => q.job.syncId === sync.id && q.job.after === sync.cursor)).toBe(true);
  for (const sync of r.s.syncs) {
    const mine = r.s.events.filter((e) => e.syncId === sync.id);
    const contacts = mine.filter((e) => e.type === 'helpdesk.contact_sync.updated');
    const conversations = mine.filter((e) => e.type === 'helpdesk.conversation_sync.updated');
    expect(contacts.length).toBe(conversations.length);
    // Starts RUNNING with nothing done; counts only grow; ends once, as the sync stands.
    expect(contacts[0]).toMatchObject({ status: 'RUNNING', processed: 0, created: 0, finishedAt: null, error: null });
    for (const [i, e] of contacts.entries()) {
      if (i > 0) expect(e.processed as number).toBeGreaterThanOrEqual(contacts[i - 1]!.processed as number);
      if (i < contacts.length - 1) expect(e.status).toBe('RUNNING');
      expect((e.error === null) === (e.status !== 'FAILED')).toBe(true);
    }
    expect(contacts.at(-1)).toMatchObject({ status: sync.status, processed: sync.contacts.processed, created: sync.contacts.created });
    expect(conversations.at(-1)).toMatchObject({ status: sync.status, created: sync.conversations.created, messagesImported: sync.messagesImported });
    if (sync.status === 'COMPLETED') {
      // Everything of every chat (its latest 100) is in the helpdesk, once.
      for (const chat of r.chats) for (const m of chat.messages.slice(-100)) expect(carried).toContain(m.id);
      expect(sync.contacts).toMatchObject({ total: r.chats.length, processed: r.chats.length });
    }
  }
}

const chatRows = fc
  .uniqueArray(fc.integer({ min: 1_000_000, max: 1_000_030 }), { maxLength: 6 })
  .chain((numbers) =>
    fc.tuple(
      ...numbers.map((n) =>
        fc.array(fc.record({ inbound: fc.boolean(), hoursAgo: fc.integer({ min: 0, max: 72 }) }), { minLength: 1, maxLength: 3 }).map(
          (ms): ChatRow => ({
            remoteJid: `55${n}@s.whatsapp.net`,
            name: `Contact ${n}`,
            messages: ms
              .sort((a, b) => b.hoursAgo - a.hoursAgo)
              .map((x, i) => ({ id: `${n}-${i}`, direction: x.inbound ? 'inbound' : 'outbound', text: `m${i}`, status: x.inbound ? 'RECEIVED' : 'SENT', error: null, sentBy: null, at: new Date(T0 - x.hoursAgo * 3_600_000) })),
          }),
        ),
      ),
    ),
  )
  .map((chats) => chats.sort((a, b) => (a.remoteJid < b.remoteJid ? -1 : 1)));

const commands = [
  fc.constant(new Start()),
  fc.tuple(fc.boolean(), fc.boolean()).map(([again, crash]) => new RunJob(again, crash)),
  fc.constant(new FailJob()),
  fc.tuple(fc.nat(10), fc.nat(5)).map(([c, m]) => new Live(c, m)),
  fc.constantFrom(1, 16).map((minutes) => new Tick(minutes)),
];

describe('inbox history sync', () => {
  test('any starts, pages run once or twice, crashes, failures, live messages and time: one RUNNING sync at most, events that add up, everything imported once', async () => {
    await fc.assert(
      fc.asyncProperty(chatRows, fc.commands(commands, { maxCommands: 40 }), async (chats, cmds) => {
        const real: Real = { chats, crashNext: false, s: { now: T0, syncs: [], contacts: [], conversations: [], messages: [], events: [], queued: [], keys: [], ran: [], ids: 0 } };
        await fc.asyncModelRun(() => ({ model: { latest: null, syncs: 0 } as Model, real }), cmds);
        // Left alone, the queue finishes whatever runs: it completes.
        for (let i = 0; i < 50 && real.s.queued.length > 0; i++) {
          const job = real.s.queued.shift()!.job;
          await transaction(real, () => runInboxSyncPage(stores(real), deps(real), job));
          invariants(real);
        }
        expect(running(real)).toHaveLength(0);
      }),
      { numRuns: 300, includeErrorInReport: true },
    );
  });
});

describe('the sync status table', () => {
  test('RUNNING takes every event; COMPLETED and FAILED are final', () => {
    for (const status of INBOX_SYNC_STATUSES) {
      for (const event of INBOX_SYNC_EVENTS) expect(nextSyncStatus(status, event)).toBe(INBOX_SYNC_TRANSITIONS[status][event] ?? null);
      expect(isSyncFinished(status)).toBe(status !== 'RUNNING');
    }
    expect(nextSyncStatus('RUNNING', 'page')).toBe('RUNNING');
    expect(nextSyncStatus('RUNNING', 'complete')).toBe('COMPLETED');
    expect(nextSyncStatus('RUNNING', 'fail')).toBe('FAILED');
  });
});

describe('importing one message', () => {
  test('a new conversation of history is OPEN only when the contact wrote last, within 24 hours', () => {
    const now = new Date(T0);
    const ago = (h: number) => new Date(T0 - h * 3_600_000);
    expect(historyStatus({ direction: 'inbound', at: ago(23.9) }, now)).toBe('OPEN');
    expect(historyStatus({ direction: 'inbound', at: ago(24) }, now)).toBe('RESOLVED');
    expect(historyStatus({ direction: 'outbound', at: ago(0) }, now)).toBe('RESOLVED');
    expect(historyStatus(undefined, now)).toBe('RESOLVED');
  });

  test('an outgoing message carries its delivery: not yet sent is PENDING, FAILED explains', () => {
    expect(importedDelivery({ status: 'RECEIVED', error: null })).toEqual({ status: 'PENDING', externalError: null });
    expect(importedDelivery({ status: 'PENDING', error: null })).toEqual({ status: 'PENDING', externalError: null });
    for (const s of ['SENT', 'DELIVERED', 'READ'] as const) expect(importedDelivery({ status: s, error: null })).toEqual({ status: s, externalError: null });
    expect(importedDelivery({ status: 'FAILED', error: { code: 131047, title: 'Re-engagement message' } })).toEqual({ status: 'FAILED', externalError: 'Re-engagement message (131047)' });
  });

  test('ids of past times are UUID v7 of that time, in time order, and in sequence within a millisecond', () => {
    const random = { bytes: (n: number) => crypto.getRandomValues(new Uint8Array(n)) };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), fc.integer({ min: 0, max: 2 ** 47 }), fc.nat(4094), (a, b, seq) => {
        const id = uuidV7At(new Date(a), seq, random);
        expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(a);
        if (a !== b) expect(id < uuidV7At(new Date(b), seq, random)).toBe(a < b);
        expect(id < uuidV7At(new Date(a), seq + 1, random)).toBe(true);
      }),
    );
  });
});
