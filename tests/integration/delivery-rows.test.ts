import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { deliveryStore } from '../../adapters/postgres/repositories/webhook-store.ts';
import type { Delivery } from '../../core/webhooks/dispatch.ts';

/**
 * The fan-out writes its deliveries in one statement, a column per array parameter: every field
 * comes back as written (a batch's event ids, a body with quotes, new lines and emoji, a claim
 * only where the fan-out holds the delivery), and a delivery already there is kept, not doubled.
 */
let database: TestDatabase;

beforeAll(async () => {
  database = await openTestDatabase();
}, 60_000);
afterAll(async () => {
  await database.close();
});

const at = new Date('2026-11-28T12:00:00.000Z');
const delivery = (fields: Partial<Delivery>): Delivery => ({
  id: crypto.randomUUID(),
  webhookId: crypto.randomUUID(),
  target: 'connection',
  workspaceId: crypto.randomUUID(),
  event: 'messages.upsert',
  eventIds: [crypto.randomUUID()],
  body: '{"event":"messages.upsert"}',
  state: 'PENDING',
  attempts: 0,
  nextAttemptAt: at,
  createdAt: at,
  updatedAt: at,
  ...fields,
});

describe('deliveryStore.insertMany', () => {
  test('every column as written; the claim only on the deliveries born held; a second insert keeps the first', async () => {
    const batch = delivery({ eventIds: [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()], body: JSON.stringify({ text: 'a "quoted"\nline, a tab\t, \\ and 🎉' }) });
    const settled = delivery({ state: 'SUCCEEDED', attempts: 2, nextAttemptAt: null, event: 'messages.update' });
    const claim = { claimId: crypto.randomUUID(), claimedUntil: new Date('2026-11-28T12:05:00.000Z'), ids: new Set([batch.id]) };

    const inserted = await database.db.transaction().execute(async (trx) => {
      // Rows of no workspace or webhook: the foreign keys are not what this test is about.
      await sql`set local session_replication_role = replica`.execute(trx);
      const first = await deliveryStore(trx).insertMany([batch, settled], claim);
      const again = await deliveryStore(trx).insertMany([{ ...batch, body: 'changed' }], undefined);
      return { first, again };
    });
    expect(inserted).toEqual({ first: new Set([batch.id, settled.id]), again: new Set() });

    const rows = await database.db.selectFrom('webhook_deliveries').selectAll().where('id', 'in', [batch.id, settled.id]).execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    const written = (d: Delivery) => {
      const row = byId.get(d.id)!;
      return {
        webhookId: row.webhook_id,
        target: row.target,
        workspaceId: row.workspace_id,
        event: row.event,
        eventIds: row.event_ids,
        body: row.body,
        state: row.state,
        attempts: row.attempts,
        nextAttemptAt: row.next_attempt_at && new Date(row.next_attempt_at).toISOString(),
        createdAt: new Date(row.created_at).toISOString(),
        claimId: row.claim_id,
        claimedUntil: row.claimed_until && new Date(row.claimed_until).toISOString(),
      };
    };
    const expected = (d: Delivery, held?: { claimId: string; claimedUntil: Date }) => ({
      webhookId: d.webhookId,
      target: d.target,
      workspaceId: d.workspaceId,
      event: d.event,
      eventIds: d.eventIds,
      body: d.body,
      state: d.state,
      attempts: d.attempts,
      nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
      createdAt: d.createdAt.toISOString(),
      claimId: held?.claimId ?? null,
      claimedUntil: held?.claimedUntil.toISOString() ?? null,
    });
    expect(written(batch)).toEqual(expected(batch, claim));
    expect(written(settled)).toEqual(expected(settled));
  });
});
