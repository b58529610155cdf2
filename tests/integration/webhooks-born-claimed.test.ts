import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import type { AppContext } from '../../adapters/http/context.ts';
import { uuidV7 } from '../../adapters/system.ts';
import { messagingDeps, messagingUnitOfWork } from '../../adapters/connections/stores.ts';
import { dispatchDeps } from '../../adapters/webhooks/jobs.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { createConnection } from '../../core/connections/connections.ts';
import { fanOutEvents, type LoggedEvent } from '../../core/webhooks/dispatch.ts';
import { createWebhook } from '../../core/webhooks/webhooks.ts';
import { openTestContext, type TestContext } from '../support/context.ts';
import { useTestService } from '../support/service.ts';
import { useReceiver } from '../support/webhook-receiver.ts';
import { connectedWithWebhook } from '../support/connections.ts';
import { eventually } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * The deliveries a worker's fan-out makes are born claimed by that worker (as far as it has room
 * and does not hold enough of their webhook's already), so it sends them without a claim
 * statement of their own; the rest wait for any worker's claim. A fan-out replayed after its
 * deliveries exist claims nothing: they may be another worker's.
 */
describe('fan-out with a claim, on real stores', () => {
  let testContext: TestContext;
  let ctx: AppContext;
  let actor: Actor;
  let connectionId: string;

  beforeAll(async () => {
    testContext = await openTestContext();
    ({ ctx } = testContext);
    ({ actor, connectionId } = await messagingUnitOfWork(ctx).transaction(async (stores) => {
      const owner = await bootstrapOwner(stores, ctx, { email: `born-${crypto.randomUUID().slice(0, 8)}@example.com`, workspace: 'Born claimed', plan: 'PRO' });
      const actor: Actor = { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'] };
      const connection = await createConnection(stores, messagingDeps(ctx), actor, { name: 'born', driver: 'sandbox' });
      return { actor, connectionId: connection.id };
    }));
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    await testContext?.close();
  }, HOOK_TIMEOUT);

  test('up to the limit, skipping the webhooks named, are inserted held by the claim; a replay claims none', async () => {
    const uow = messagingUnitOfWork(ctx);
    const deps = dispatchDeps(ctx);
    const hook = (name: string) =>
      uow.transaction((stores) => createWebhook(stores, ctx, actor, { url: `http://receiver.invalid/${name}`, events: ['messages.upsert'], connections: [connectionId] }));
    const [first, second, skipped] = [await hook('first'), await hook('second'), await hook('skipped')];
    const events: LoggedEvent[] = [];
    for (const n of [1, 2]) {
      const id = uuidV7.next();
      const remoteJid = `5511990000${n}@s.whatsapp.net`;
      await ctx.db
        .insertInto('events')
        .values({ id, workspace_id: actor.workspaceId, connection_id: connectionId, event: 'messages.upsert', remote_jid: remoteJid, payload: { event: 'messages.upsert', connectionId, remoteJid, data: { n } }, created_at: new Date() })
        .execute();
      events.push((await uow.transaction((stores) => stores.eventLog.get(id)))!);
    }

    const claim = { claimId: uuidV7.next(), claimedUntil: new Date(Date.now() + 30_000), limit: 3, skipWebhooks: new Set([skipped.id]) };
    const made = await uow.transaction((stores) => fanOutEvents(stores, deps, events, claim));
    expect(made.deliveries).toBe(6);
    expect(made.claimed).toHaveLength(3);
    expect(made.claimed.every((d) => d.webhookId !== skipped.id && d.claimId === claim.claimId)).toBe(true);
    expect(new Set(made.claimed.map((d) => d.webhookId))).toEqual(new Set([first.id, second.id]));

    const rows = await ctx.db.selectFrom('webhook_deliveries').select(['id', 'webhook_id', 'claim_id', 'claimed_until']).where('workspace_id', '=', actor.workspaceId).execute();
    expect(rows).toHaveLength(6);
    const held = rows.filter((r) => r.claim_id !== null);
    expect(held.map((r) => r.id).sort()).toEqual(made.claimed.map((d) => d.id).sort());
    expect(held.every((r) => r.claim_id === claim.claimId && new Date(r.claimed_until!).getTime() === claim.claimedUntil.getTime())).toBe(true);

    // Replayed (the same events fanned out again): nothing new, and nothing of it is claimed.
    const again = await uow.transaction((stores) => fanOutEvents(stores, deps, events, { ...claim, claimId: uuidV7.next(), limit: 10, skipWebhooks: new Set() }));
    expect(again.claimed).toEqual([]);
    const after = await ctx.db.selectFrom('webhook_deliveries').select(['id', 'claim_id']).where('workspace_id', '=', actor.workspaceId).execute();
    expect(after.filter((r) => r.claim_id !== null).map((r) => r.id).sort()).toEqual(held.map((r) => r.id).sort());
  });
});

describe('the worker sends what its fan-out made without claiming it again', () => {
  const receiver = useReceiver();
  const service = useTestService();
  let token: string;

  beforeAll(async () => {
    ({ token } = await service.bootstrap({ plan: 'PRO' }));
    // Each delivery as it was inserted: held or not.
    await sql.raw('create table born (id uuid primary key, claimed boolean not null)').execute(service.runtime.ctx.db);
    await sql
      .raw(
        `create function note_born() returns trigger language plpgsql as $$
         begin insert into born values (new.id, new.claim_id is not null); return new; end $$`,
      )
      .execute(service.runtime.ctx.db);
    await sql.raw('create trigger note_born after insert on webhook_deliveries for each row execute function note_born()').execute(service.runtime.ctx.db);
    // Each statement that updates deliveries (a claim among them, even one that claims nothing), by its text.
    await sql.raw('create table delivery_updates (query text not null)').execute(service.runtime.ctx.db);
    await sql
      .raw(
        `create function note_update() returns trigger language plpgsql as $$
         begin insert into delivery_updates values (current_query()); return null; end $$`,
      )
      .execute(service.runtime.ctx.db);
    await sql.raw('create trigger note_update after update on webhook_deliveries for each statement execute function note_update()').execute(service.runtime.ctx.db);
  }, HOOK_TIMEOUT);

  const claims = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from delivery_updates where query like ${'%"picked"%from "webhook_deliveries"%'}`.execute(service.runtime.ctx.db)).rows[0]!.n;

  test('messages received are delivered, each delivery inserted held by the worker', async () => {
    const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: token, body });
    const path = '/hooks/born-claimed';
    const connection = await connectedWithWebhook(service, token, 'born claimed', receiver.url(path));
    for (const text of ['one', 'two', 'three']) {
      expect((await call('POST', `/v3/connections/${connection}/sandbox/messages`, { from: '5511990000777', text })).status).toBe(201);
    }
    await eventually(async () => (receiver.hits(path).length >= 3 ? true : undefined), 'three deliveries', 20_000);
    expect(receiver.hits(path).map((h) => h.json.data.message.conversation).sort()).toEqual(['one', 'three', 'two']);
    const born = await sql<{ claimed: boolean }>`select claimed from born`.execute(service.runtime.ctx.db);
    expect(born.rows).toHaveLength(3);
    expect(born.rows.every((r) => r.claimed)).toBe(true);
  });

  test('live deliveries, recorded as they finish, make the worker claim nothing after them', async () => {
    // Settling a delivery makes room worth a claim only when its webhook falls to half its share
    // (or the worker to half of all it may hold); a claim after every recorded batch found
    // nothing here, and on the embedded database took more of its one connection than storing.
    const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: token, body });
    const path = '/hooks/no-claims-after';
    const connection = await connectedWithWebhook(service, token, 'no claims after', receiver.url(path));
    const messages = 300;
    const before = await claims();
    const started = performance.now();
    for (let i = 0; i < messages; i++) {
      expect((await call('POST', `/v3/connections/${connection}/sandbox/messages`, { from: '5511990000888', text: `live ${i}` })).status).toBe(201);
    }
    await eventually(async () => (receiver.hits(path).length >= messages ? true : undefined), 'every delivery', 30_000);
    const seconds = (performance.now() - started) / 1000;
    // Only the claim loop's idle polls remain: its back-off (growing from 5 ms to 250 ms) makes at
    // most about twenty in a second, then four a second. A claim after every recorded batch made
    // one for every three to five messages.
    expect((await claims()) - before).toBeLessThan(20 + 4 * seconds);
  });
});
