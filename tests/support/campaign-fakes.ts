import type { Campaign, CampaignProgress, CampaignRecipient, RecipientView, ReportedRecipientStatus } from '../../core/campaigns/campaign.ts';
import { reportedRecipientStatus } from '../../core/campaigns/campaign.ts';
import type { CampaignStores } from '../../core/campaigns/campaigns.ts';
import type { Connection } from '../../core/connections/connection.ts';
import type { Workspace } from '../../core/identity/identity.ts';
import type { Chat, ChatMessage } from '../../core/messaging/message.ts';
import type { CreditAccount, Reservation } from '../../core/plans/credit-ledger.ts';
import { page } from '../../core/shared/pagination.ts';
import type { UnitOfWork } from '../../core/shared/unit-of-work.ts';

/**
 * In-memory ports of the campaign use cases (`CampaignStores`), for model-based tests. They follow
 * the Postgres adapters (plugins/campaigns/campaign-store.ts, adapters/postgres/repositories/credit-store.ts,
 * message-store.ts) where the core relies on them:
 * - a recipient's reported status is its message's once DISPATCHED (a missing message counts as FAILED);
 * - `sentSince` counts DISPATCHED recipients with `dispatchedAt > since`; `countInFlight` counts
 *   DISPATCHED recipients whose message is PENDING;
 * - `settle` stamps every dispatched recipient of a batch with the first outcome's time;
 * - a message's idempotency key is unique per connection (the insert fails, as the unique index does).
 * Every transaction works on a copy of the state and commits it only when the work resolves, so a
 * transaction that throws leaves nothing behind.
 */
export interface FakeState {
  campaigns: Map<string, Campaign>;
  recipients: Map<string, CampaignRecipient[]>;
  optOuts: Map<string, Map<string, { at: Date; reason: string }>>;
  connections: Map<string, Connection>;
  workspaces: Map<string, Workspace>;
  accounts: Map<string, CreditAccount>;
  reservations: Map<string, Reservation>;
  messages: Map<string, ChatMessage>;
  chats: Map<string, Chat>;
  jobs: Array<{ queue: string; data: object; dedupeKey?: string; startAfterSeconds?: number }>;
  wakes: Array<{ campaignId: string; tick: number; at: Date }>;
  notifications: Array<{ campaignId: string; event: string }>;
}

export function emptyFakeState(): FakeState {
  return {
    campaigns: new Map(),
    recipients: new Map(),
    optOuts: new Map(),
    connections: new Map(),
    workspaces: new Map(),
    accounts: new Map(),
    reservations: new Map(),
    messages: new Map(),
    chats: new Map(),
    jobs: [],
    wakes: [],
    notifications: [],
  };
}

/** The database, in memory: `uow` runs each transaction on a copy committed on success. */
export class FakeCampaignDatabase {
  state: FakeState = emptyFakeState();
  readonly uow: UnitOfWork<CampaignStores> = {
    transaction: async (work) => {
      const copy = structuredClone(this.state);
      const result = await work(fakeCampaignStores(copy));
      this.state = copy;
      return result;
    },
  };
}

const clone = <T>(value: T): T => structuredClone(value);
const unsupported = (what: string) => () => {
  throw new Error(`campaign fakes: ${what} is not implemented`);
};

/** A recipient's status as reported, by the same rule as the real store. */
export function reportedStatus(recipient: CampaignRecipient, message: ChatMessage | undefined): ReportedRecipientStatus {
  return reportedRecipientStatus(recipient.status, message?.status);
}

export function fakeCampaignStores(s: FakeState): CampaignStores {
  const recipientsOf = (campaignId: string) => s.recipients.get(campaignId) ?? [];
  const messageOf = (r: CampaignRecipient) => (r.messageId ? s.messages.get(r.messageId) : undefined);

  return {
    campaigns: {
      async insert(campaign) {
        if (s.campaigns.has(campaign.id)) throw new Error(`duplicate campaign ${campaign.id}`);
        s.campaigns.set(campaign.id, clone(campaign));
      },
      async get(workspaceId, id) {
        const c = s.campaigns.get(id);
        return c && c.workspaceId === workspaceId ? clone(c) : undefined;
      },
      async lock(id) {
        const c = s.campaigns.get(id);
        return c && clone(c);
      },
      async update(campaign) {
        const stored = s.campaigns.get(campaign.id);
        if (!stored) return;
        s.campaigns.set(campaign.id, { ...clone(campaign), workspaceId: stored.workspaceId, createdAt: stored.createdAt });
      },
      async delete(id) {
        s.campaigns.delete(id);
        s.recipients.delete(id);
      },
      async list(workspaceId, request) {
        const all = [...s.campaigns.values()]
          .filter((c) => c.workspaceId === workspaceId && (!request.status || c.status === request.status) && (!request.connectionId || c.connectionId === request.connectionId))
          .filter((c) => !request.search || c.name.toLowerCase().includes(request.search.toLowerCase()))
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
        const from = (request.page - 1) * request.perPage;
        return page(all.slice(from, from + request.perPage).map(clone), all.length, request);
      },
      async ofConnection(connectionId, statuses) {
        return [...s.campaigns.values()]
          .filter((c) => c.connectionId === connectionId && statuses.includes(c.status))
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
          .map(clone);
      },
    },

    recipients: {
      async insertMany(campaignId, entries) {
        const rows = recipientsOf(campaignId);
        for (const e of entries) {
          if (rows.some((r) => r.position === e.position)) throw new Error(`duplicate recipient ${campaignId}/${e.position}`);
          rows.push({ campaignId, position: e.position, phone: e.phone, variables: { ...e.variables }, status: e.status, error: e.error, messageId: null, dispatchedAt: null, repliedAt: null });
        }
        s.recipients.set(campaignId, rows);
      },
      async nextQueued(campaignId, limit) {
        return recipientsOf(campaignId)
          .filter((r) => r.status === 'QUEUED')
          .sort((a, b) => a.position - b.position)
          .slice(0, limit)
          .map(clone);
      },
      async settle(campaignId, outcomes) {
        if (outcomes.length === 0) return;
        const at = outcomes[0]!.at;
        for (const o of outcomes) {
          const r = recipientsOf(campaignId).find((x) => x.position === o.position);
          if (!r) continue;
          if (o.status === 'DISPATCHED') Object.assign(r, { status: 'DISPATCHED', dispatchedAt: at, error: null, messageId: o.messageId });
          else Object.assign(r, { status: o.status, error: o.error, dispatchedAt: o.at });
        }
      },
      async cancelQueued(campaignId) {
        let n = 0;
        for (const r of recipientsOf(campaignId)) {
          if (r.status !== 'QUEUED') continue;
          r.status = 'CANCELLED';
          r.error = 'the campaign ended before this recipient was sent to';
          n += 1;
        }
        return n;
      },
      async countQueued(campaignId) {
        return recipientsOf(campaignId).filter((r) => r.status === 'QUEUED').length;
      },
      async countInFlight(campaignId) {
        return recipientsOf(campaignId).filter((r) => r.status === 'DISPATCHED' && messageOf(r)?.status === 'PENDING').length;
      },
      async sentSince(campaignId, since) {
        const times = recipientsOf(campaignId)
          .filter((r) => r.status === 'DISPATCHED' && r.dispatchedAt !== null && r.dispatchedAt.getTime() > since.getTime())
          .map((r) => r.dispatchedAt!.getTime());
        return { count: times.length, oldest: times.length > 0 ? new Date(Math.min(...times)) : null };
      },
      async progress(campaignId) {
        const p: CampaignProgress = { total: 0, queued: 0, sending: 0, sent: 0, delivered: 0, read: 0, failed: 0, replied: 0, skipped: 0, optedOut: 0, cancelled: 0, invalid: 0 };
        for (const r of recipientsOf(campaignId)) {
          p.total += 1;
          if (r.repliedAt) p.replied += 1;
          const status = reportedStatus(r, messageOf(r));
          if (status === 'QUEUED') p.queued += 1;
          else if (status === 'SENDING') p.sending += 1;
          else if (status === 'SENT' || status === 'DELIVERED' || status === 'READ') {
            p.sent += 1;
            if (status !== 'SENT') p.delivered += 1;
            if (status === 'READ') p.read += 1;
          } else if (status === 'FAILED') p.failed += 1;
          else if (status === 'SKIPPED') p.skipped += 1;
          else if (status === 'OPTED_OUT') p.optedOut += 1;
          else if (status === 'CANCELLED') p.cancelled += 1;
          else p.invalid += 1;
        }
        return p;
      },
      async list(campaignId, request) {
        const digits = request.search?.replace(/[^\d]/g, '');
        const rows = recipientsOf(campaignId)
          .filter((r) => !request.status || reportedStatus(r, messageOf(r)) === request.status)
          .filter((r) => !request.search || r.phone.includes(digits ?? ''))
          .sort((a, b) => a.position - b.position);
        const from = (request.page - 1) * request.perPage;
        const data = rows.slice(from, from + request.perPage).map((r): RecipientView => {
          const m = messageOf(r);
          const messageError = m?.error ? [m.error.code, m.error.title].filter((x) => x !== undefined && x !== null && x !== '').join(': ') || null : null;
          return { position: r.position, phone: r.phone, variables: { ...r.variables }, status: reportedStatus(r, m), error: r.error ?? messageError, messageId: r.messageId, dispatchedAt: r.dispatchedAt, repliedAt: r.repliedAt };
        });
        return page(data, rows.length, request);
      },
      async markReplied(connectionId, phone, at) {
        let latest: CampaignRecipient | undefined;
        for (const [campaignId, rows] of s.recipients) {
          if (s.campaigns.get(campaignId)?.connectionId !== connectionId) continue;
          for (const r of rows) {
            if (r.phone !== phone || r.status !== 'DISPATCHED' || !r.dispatchedAt || r.dispatchedAt > at) continue;
            if (!latest || r.dispatchedAt > latest.dispatchedAt!) latest = r;
          }
        }
        if (latest && !latest.repliedAt) latest.repliedAt = at;
      },
    },

    optOuts: {
      async add(workspaceId, phone, at, reason) {
        const list = s.optOuts.get(workspaceId) ?? new Map();
        if (!list.has(phone)) list.set(phone, { at, reason });
        s.optOuts.set(workspaceId, list);
      },
      async among(workspaceId, phones) {
        const list = s.optOuts.get(workspaceId);
        return new Set(phones.filter((p) => list?.has(p)));
      },
      async list(workspaceId, request) {
        const digits = request.search?.replace(/[^\d]/g, '') ?? '';
        const all = [...(s.optOuts.get(workspaceId) ?? new Map()).entries()]
          .filter(([phone]) => !request.search || phone.includes(digits))
          .map(([phone, o]) => ({ phone, reason: o.reason, createdAt: o.at }))
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.phone < b.phone ? -1 : a.phone > b.phone ? 1 : 0));
        const from = (request.page - 1) * request.perPage;
        return page(all.slice(from, from + request.perPage), all.length, request);
      },
      async remove(workspaceId, phone) {
        return s.optOuts.get(workspaceId)?.delete(phone) ?? false;
      },
    },

    connections: {
      async get(workspaceId, id) {
        const c = s.connections.get(id);
        return c && c.workspaceId === workspaceId ? clone(c) : undefined;
      },
      async find(id) {
        const c = s.connections.get(id);
        return c && clone(c);
      },
      async lock(id) {
        const c = s.connections.get(id);
        return c && clone(c);
      },
      async insert(connection) {
        s.connections.set(connection.id, clone(connection));
      },
      async update(connection) {
        s.connections.set(connection.id, clone(connection));
      },
      async delete(id) {
        s.connections.delete(id);
      },
      async list(workspaceId) {
        return [...s.connections.values()].filter((c) => c.workspaceId === workspaceId).map(clone);
      },
      async count(workspaceId) {
        return [...s.connections.values()].filter((c) => c.workspaceId === workspaceId).length;
      },
      wantingSession: unsupported('connections.wantingSession'),
    },

    credits: {
      async lockAccount(workspaceId) {
        const a = s.accounts.get(workspaceId);
        return a && clone(a);
      },
      async createAccount(account) {
        if (!s.accounts.has(account.workspaceId)) s.accounts.set(account.workspaceId, clone(account));
        return clone(s.accounts.get(account.workspaceId)!);
      },
      async saveAccount(account) {
        s.accounts.set(account.workspaceId, clone(account));
      },
      async reserveIfCovered(r, periodStart) {
        const a = s.accounts.get(r.workspaceId);
        if (!a || a.periodStart.getTime() !== periodStart.getTime() || a.available < r.amount) return false;
        if (s.reservations.has(r.id)) throw new Error(`duplicate reservation ${r.id}`);
        a.available -= r.amount;
        s.reservations.set(r.id, clone(r));
        return true;
      },
      async insertReservation(r) {
        if (s.reservations.has(r.id)) throw new Error(`duplicate reservation ${r.id}`);
        s.reservations.set(r.id, clone(r));
      },
      async lockReservation(id) {
        const r = s.reservations.get(id);
        return r && clone(r);
      },
      async lockReservations(ids) {
        return [...ids].sort().flatMap((id) => (s.reservations.has(id) ? [clone(s.reservations.get(id)!)] : []));
      },
      async findReservation(id) {
        const r = s.reservations.get(id);
        return r && clone(r);
      },
      async saveReservation(r) {
        const stored = s.reservations.get(r.id);
        if (stored) s.reservations.set(r.id, { ...stored, consumed: r.consumed, refunded: r.refunded, status: r.status });
      },
      async saveReservations(rs) {
        for (const r of rs) await this.saveReservation(r);
      },
      async accountsOffQuota(periodStart, quotas) {
        return [...s.accounts.values()]
          .map((a) => ({ a, plan: s.workspaces.get(a.workspaceId)?.plan }))
          .filter(({ a, plan }) => plan && a.periodStart.getTime() === periodStart.getTime() && a.allowance !== quotas[plan])
          .map(({ a, plan }) => ({ workspaceId: a.workspaceId, plan: plan! }));
      },
      async usage(workspaceId, since) {
        let reserved = 0;
        let consumed = 0;
        for (const r of s.reservations.values()) {
          if (r.workspaceId !== workspaceId) continue;
          if (r.status === 'OPEN') reserved += r.amount - r.consumed - r.refunded;
          if (r.createdAt >= since) consumed += r.consumed;
        }
        return { reserved, consumed };
      },
    },

    identity: {
      async getWorkspace(id: string) {
        const w = s.workspaces.get(id);
        return w && clone(w);
      },
    } as unknown as CampaignStores['identity'],

    // No stored templates: a template campaign is checked as one made elsewhere.
    templates: {
      async findByName() {
        return undefined;
      },
    },

    media: {
      get: unsupported('media.get'),
      bytes: unsupported('media.bytes'),
    } as unknown as CampaignStores['media'],

    messages: {
      async insert(message) {
        if (message.externalId && [...s.messages.values()].some((m) => m.connectionId === message.connectionId && m.externalId === message.externalId)) return false;
        await this.insertMany([message]);
        return true;
      },
      insertReceived: unsupported('messages.insertReceived'),
      async insertMany(messages) {
        for (const m of messages) {
          if (s.messages.has(m.id)) throw new Error(`duplicate message id ${m.id}`);
          if (m.idempotencyKey && [...s.messages.values()].some((x) => x.connectionId === m.connectionId && x.idempotencyKey === m.idempotencyKey)) {
            throw new Error(`duplicate key value violates unique constraint (idempotency key ${m.idempotencyKey})`);
          }
          s.messages.set(m.id, clone(m));
        }
      },
      async get(id) {
        const m = s.messages.get(id);
        return m && clone(m);
      },
      async getMany(ids) {
        return ids.flatMap((id) => (s.messages.has(id) ? [clone(s.messages.get(id)!)] : []));
      },
      async lock(id) {
        const m = s.messages.get(id);
        return m && clone(m);
      },
      async lockMany(ids) {
        return this.getMany([...ids].sort());
      },
      async findByExternalId(connectionId, externalId) {
        const m = [...s.messages.values()].find((x) => x.connectionId === connectionId && x.externalId === externalId);
        return m && clone(m);
      },
      async findByIdempotencyKey(connectionId, key) {
        const m = [...s.messages.values()].find((x) => x.connectionId === connectionId && x.idempotencyKey === key);
        return m && clone(m);
      },
      async update(message) {
        if (s.messages.has(message.id)) s.messages.set(message.id, clone(message));
      },
      async recordSent(messages) {
        for (const m of messages) await this.update(m);
      },
      async lockNetworkId() {},
      async lockNetworkIds() {},
      holdReceipt: unsupported('messages.holdReceipt'),
      async takeHeldReceipts() {
        return [];
      },
      history: unsupported('messages.history'),
    },

    chats: {
      async get(connectionId, remoteJid) {
        const c = s.chats.get(`${connectionId} ${remoteJid}`);
        return c && clone(c);
      },
      async touch(connectionId, remoteJid, update) {
        const key = `${connectionId} ${remoteJid}`;
        const c = s.chats.get(key);
        s.chats.set(key, {
          connectionId,
          remoteJid,
          name: update.name ?? c?.name ?? null,
          lastMessageAt: c && c.lastMessageAt > update.at ? c.lastMessageAt : update.at,
          lastContactMessageAt: update.fromContact ? update.at : (c?.lastContactMessageAt ?? null),
        });
      },
      touchMany: unsupported('chats.touchMany'),
      async touchOutgoing(connectionId, remoteJids, at) {
        for (const remoteJid of new Set(remoteJids)) {
          const key = `${connectionId} ${remoteJid}`;
          const c = s.chats.get(key);
          s.chats.set(key, c ? { ...c, lastMessageAt: c.lastMessageAt > at ? c.lastMessageAt : at } : { connectionId, remoteJid, name: null, lastMessageAt: at, lastContactMessageAt: null });
        }
      },
      list: unsupported('chats.list'),
    },

    outbox: {
      async enqueue(queue, data, options) {
        if (options?.dedupeKey && s.jobs.some((j) => j.queue === queue && j.dedupeKey === options.dedupeKey)) return;
        s.jobs.push({ queue, data: clone(data), dedupeKey: options?.dedupeKey, startAfterSeconds: options?.startAfterSeconds });
      },
      async enqueueMany(queue, jobs) {
        for (const job of jobs) {
          if (job.dedupeKey && s.jobs.some((j) => j.queue === queue && j.dedupeKey === job.dedupeKey)) continue;
          s.jobs.push({ queue, data: clone(job.data), dedupeKey: job.dedupeKey });
        }
      },
    },

    notifier: {
      async notify(campaign, event) {
        s.notifications.push({ campaignId: campaign.id, event });
      },
    },

    pacer: {
      async wake(campaignId, tick, at) {
        s.wakes.push({ campaignId, tick, at: new Date(at.getTime()) });
      },
    },
  };
}
