import { sql, type Selectable } from 'kysely';
import { anyOf, camelCased, compiledOnce, containing, findInWorkspace, lockById, pageOfRows, snakeCased, type DatabaseHandle } from '../kernel/storage.ts';
import type { SecretBox } from '../kernel/security.ts';
import { isUuid } from '../../core/shared/ids.ts';
import { reportedRecipientStatus } from '../../core/campaigns/campaign.ts';
import type {
  Campaign,
  CampaignProgress,
  CampaignStore,
  OptOutStore,
  RecipientStore,
  RecipientView,
  ReportedRecipientStatus,
} from '../../core/campaigns/campaign.ts';
import type { CampaignStatus } from '../../core/campaigns/campaign-status.ts';
import { campaignsDb, type CampaignsTable } from './tables.ts';

/** Rows per INSERT when storing an audience (Postgres takes at most 65,535 parameters a statement). */
const INSERT_CHUNK = 5_000;

export function campaignStore(base: DatabaseHandle, box: SecretBox): CampaignStore {
  const db = campaignsDb(base);
  const toCampaign = (row: Selectable<CampaignsTable>): Campaign => {
    const { webhook_url, webhook_secret, ...campaign } = row;
    return {
      ...camelCased(campaign),
      status: row.status as CampaignStatus,
      message: json(row.message) as Campaign['message'],
      pace: json(row.pace) as Campaign['pace'],
      webhook: webhook_url ? { url: webhook_url, secret: webhook_secret ? box.open(webhook_secret) : null } : null,
    };
  };
  const toRow = ({ webhook, ...c }: Campaign) => ({
    ...snakeCased(c),
    message: JSON.stringify(c.message),
    pace: JSON.stringify(c.pace),
    webhook_url: webhook?.url ?? null,
    webhook_secret: webhook?.secret ? box.seal(webhook.secret) : null,
  });

  return {
    async insert(campaign) {
      await db.insertInto('campaigns').values(toRow(campaign)).execute();
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'campaigns', workspaceId, id, toCampaign);
    },
    async lock(id) {
      return lockById(db, 'campaigns', id, toCampaign);
    },
    async update(campaign) {
      const { id, workspace_id, created_at, ...changes } = toRow(campaign);
      await db.updateTable('campaigns').set(changes).where('id', '=', id).execute();
    },
    async delete(id) {
      await db.deleteFrom('campaigns').where('id', '=', id).execute();
    },
    async list(workspaceId, request) {
      let query = db.selectFrom('campaigns').where('workspace_id', '=', workspaceId);
      if (request.status) query = query.where('status', '=', request.status);
      if (request.connectionId) query = isUuid(request.connectionId) ? query.where('connection_id', '=', request.connectionId) : query.where((eb) => eb.val(false));
      if (request.search) query = query.where('name', 'ilike', containing(request.search));
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'), toCampaign);
    },
    async ofConnection(connectionId, statuses) {
      const rows = await db.selectFrom('campaigns').selectAll().where('connection_id', '=', connectionId).where('status', 'in', [...statuses]).orderBy('created_at').execute();
      return rows.map(toCampaign);
    },
  };
}

export function recipientStore(base: DatabaseHandle): RecipientStore {
  const db = campaignsDb(base);
  const recipients = (campaignId: string) => db.selectFrom('campaign_recipients as r').where('r.campaign_id', '=', campaignId);
  const withMessages = (campaignId: string) => recipients(campaignId).leftJoin('messages as m', 'm.id', 'r.message_id');

  return {
    async insertMany(campaignId, entries) {
      for (let i = 0; i < entries.length; i += INSERT_CHUNK) {
        const rows = entries.slice(i, i + INSERT_CHUNK).map((e) => ({
          campaign_id: campaignId,
          position: e.position,
          phone: e.phone,
          variables: JSON.stringify(e.variables),
          status: e.status,
          error: e.error,
        }));
        await db.insertInto('campaign_recipients').values(rows).execute();
      }
    },
    async nextQueued(campaignId, limit) {
      const rows = await recipients(campaignId)
        .selectAll('r')
        .where('r.status', '=', 'QUEUED')
        .orderBy('r.position')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      return rows.map((row) => ({ ...camelCased(row), variables: json(row.variables) as Record<string, string>, status: row.status as 'QUEUED' }));
    },
    async settle(campaignId, outcomes) {
      if (outcomes.length === 0) return;
      const at = outcomes[0]!.at;
      const dispatched = outcomes.filter((o) => o.status === 'DISPATCHED');
      if (dispatched.length > 0) {
        // One statement for the batch: each position gets its own message id, joined from two
        // arrays (a CASE of one branch per recipient costs Kysely time in the square of the batch).
        const positions = dispatched.map((o) => o.position);
        const messageIds = dispatched.map((o) => o.messageId);
        await db
          .updateTable('campaign_recipients')
          .from(sql<{ position: number; message_id: string }>`(select unnest(${positions}::integer[]) as position, unnest(${messageIds}::uuid[]) as message_id)`.as('sent'))
          .set((eb) => ({ status: 'DISPATCHED', dispatched_at: at, error: null, message_id: eb.ref('sent.message_id') }))
          .where('campaign_recipients.campaign_id', '=', campaignId)
          .whereRef('campaign_recipients.position', '=', 'sent.position')
          .execute();
      }
      for (const o of outcomes.filter((o) => o.status !== 'DISPATCHED')) {
        await db
          .updateTable('campaign_recipients')
          .set({ status: o.status, error: o.error, dispatched_at: o.at })
          .where('campaign_id', '=', campaignId)
          .where('position', '=', o.position)
          .execute();
      }
    },
    async cancelQueued(campaignId) {
      const result = await db
        .updateTable('campaign_recipients')
        .set({ status: 'CANCELLED', error: 'the campaign ended before this recipient was sent to' })
        .where('campaign_id', '=', campaignId)
        .where('status', '=', 'QUEUED')
        .executeTakeFirst();
      return Number(result.numUpdatedRows ?? 0n);
    },
    async countQueued(campaignId) {
      const row = await recipients(campaignId).where('r.status', '=', 'QUEUED').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async countInFlight(campaignId) {
      const row = await withMessages(campaignId)
        .where('r.status', '=', 'DISPATCHED')
        .where('m.status', '=', 'PENDING')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async sentSince(campaignId, since) {
      const row = await recipients(campaignId)
        .where('r.status', '=', 'DISPATCHED')
        .where('r.dispatched_at', '>', since)
        .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.min('r.dispatched_at').as('oldest')])
        .executeTakeFirstOrThrow();
      return { count: Number(row.n), oldest: row.oldest ? new Date(row.oldest as Date) : null };
    },
    async progress(campaignId) {
      const rows = await withMessages(campaignId)
        .select((eb) => ['r.status as recipient', 'm.status as message', eb.fn.countAll<string>().as('n'), eb.fn.count<string>('r.replied_at').as('replied')])
        .groupBy(['r.status', 'm.status'])
        .execute();
      const progress: CampaignProgress = { total: 0, queued: 0, sending: 0, sent: 0, delivered: 0, read: 0, failed: 0, replied: 0, skipped: 0, optedOut: 0, cancelled: 0, invalid: 0 };
      for (const row of rows) {
        const n = Number(row.n);
        progress.total += n;
        progress.replied += Number(row.replied);
        const status = reportedRecipientStatus(row.recipient, row.message);
        if (status === 'QUEUED') progress.queued += n;
        else if (status === 'SENDING') progress.sending += n;
        else if (status === 'SENT' || status === 'DELIVERED' || status === 'READ') {
          progress.sent += n;
          if (status !== 'SENT') progress.delivered += n;
          if (status === 'READ') progress.read += n;
        } else if (status === 'FAILED') progress.failed += n;
        else if (status === 'SKIPPED') progress.skipped += n;
        else if (status === 'OPTED_OUT') progress.optedOut += n;
        else if (status === 'CANCELLED') progress.cancelled += n;
        else progress.invalid += n;
      }
      return progress;
    },
    async list(campaignId, request) {
      let query = withMessages(campaignId);
      if (request.status) query = query.where((eb) => reportedFilter(eb, request.status!));
      if (request.search) query = query.where('r.phone', 'like', `%${request.search.replace(/[^\d]/g, '')}%`);
      return pageOfRows(
        query,
        request,
        (q) =>
          q
            .select(['r.position', 'r.phone', 'r.variables', 'r.status', 'r.error', 'r.message_id', 'r.dispatched_at', 'r.replied_at', 'm.status as message_status', 'm.error as message_error'])
            .orderBy('r.position'),
        ({ message_status, message_error, ...row }): RecipientView => ({
          ...camelCased(row),
          variables: json(row.variables) as Record<string, string>,
          status: reportedRecipientStatus(row.status, message_status),
          error: row.error ?? messageError(message_error),
        }),
      );
    },
    async markReplied(connectionId, phone, at) {
      const latest = await db
        .selectFrom('campaign_recipients as r')
        .innerJoin('campaigns as c', 'c.id', 'r.campaign_id')
        .select(['r.campaign_id', 'r.position', 'r.replied_at'])
        .where('c.connection_id', '=', connectionId)
        .where('r.phone', '=', phone)
        .where('r.status', '=', 'DISPATCHED')
        .where('r.dispatched_at', '<=', at)
        .orderBy('r.dispatched_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (!latest || latest.replied_at) return;
      await db
        .updateTable('campaign_recipients')
        .set({ replied_at: at })
        .where('campaign_id', '=', latest.campaign_id)
        .where('position', '=', latest.position)
        .where('replied_at', 'is', null)
        .execute();
    },
  };
}

/**
 * Of these contacts (connection and phone), those a campaign message was dispatched to and who
 * have not replied since (`connectionId|phone`): the only ones a reply can mark (`markReplied`).
 */
export async function contactsAwaitingReply(base: DatabaseHandle, contacts: ReadonlyArray<{ connectionId: string; phone: string }>): Promise<Set<string>> {
  if (contacts.length === 0) return new Set();
  const { rows } = await awaitingReply(base, [...new Set(contacts.map((c) => c.phone))], [...new Set(contacts.map((c) => c.connectionId))]);
  return new Set(rows.map((row) => `${row.connection_id}|${row.phone}`));
}

/** Runs for every batch of incoming messages: one shape (phones and connections as arrays), compiled once. */
const awaitingReply = compiledOnce((base: DatabaseHandle, phones: string[], connectionIds: string[]) =>
  campaignsDb(base)
    .selectFrom('campaign_recipients as r')
    .innerJoin('campaigns as c', 'c.id', 'r.campaign_id')
    .select(['c.connection_id', 'r.phone'])
    .distinct()
    .where('r.status', '=', 'DISPATCHED')
    .where('r.phone', '=', anyOf(phones, 'text'))
    .where('r.replied_at', 'is', null)
    .where('c.connection_id', '=', anyOf(connectionIds, 'uuid')),
);

export function optOutStore(base: DatabaseHandle): OptOutStore {
  const db = campaignsDb(base);
  return {
    async add(workspaceId, phone, at, reason) {
      await db
        .insertInto('campaign_opt_outs')
        .values({ workspace_id: workspaceId, phone, reason, created_at: at })
        .onConflict((oc) => oc.columns(['workspace_id', 'phone']).doNothing())
        .execute();
    },
    async among(workspaceId, phones) {
      const found = new Set<string>();
      const distinct = [...new Set(phones)];
      for (let i = 0; i < distinct.length; i += INSERT_CHUNK) {
        const chunk = distinct.slice(i, i + INSERT_CHUNK);
        const rows = await db.selectFrom('campaign_opt_outs').select('phone').where('workspace_id', '=', workspaceId).where('phone', 'in', chunk).execute();
        for (const row of rows) found.add(row.phone);
      }
      return found;
    },
    async list(workspaceId, request) {
      let query = db.selectFrom('campaign_opt_outs').where('workspace_id', '=', workspaceId);
      if (request.search) query = query.where('phone', 'like', `%${request.search.replace(/[^\d]/g, '')}%`);
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('phone'), ({ workspace_id: _workspace, ...optOut }) => camelCased(optOut));
    },
    async remove(workspaceId, phone) {
      const result = await db.deleteFrom('campaign_opt_outs').where('workspace_id', '=', workspaceId).where('phone', '=', phone).executeTakeFirst();
      return Number(result.numDeletedRows ?? 0n) > 0;
    },
  };
}

function reportedFilter(eb: any, status: ReportedRecipientStatus) {
  const dispatched = (messageStatus: string) => eb.and([eb('r.status', '=', 'DISPATCHED'), eb('m.status', '=', messageStatus)]);
  switch (status) {
    case 'SENDING':
      return dispatched('PENDING');
    case 'SENT':
    case 'DELIVERED':
    case 'READ':
      return dispatched(status);
    case 'FAILED':
      return eb.and([eb('r.status', '=', 'DISPATCHED'), eb.or([eb('m.status', '=', 'FAILED'), eb('m.id', 'is', null)])]);
    default:
      return eb('r.status', '=', status);
  }
}

function messageError(error: unknown): string | null {
  const value = json(error) as { code?: unknown; title?: unknown } | null;
  if (!value) return null;
  return [value.code, value.title].filter((part) => part !== undefined && part !== null && part !== '').join(': ') || null;
}

function json(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
