import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { AppContext } from '../../adapters/http/context.ts';
import { messagingDeps, messagingStores, messagingUnitOfWork } from '../../adapters/connections/stores.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { applySessionUpdate, createConnection } from '../../core/connections/connections.ts';
import { acceptSend } from '../../core/messaging/send.ts';
import { deliverNow } from '../support/sends.ts';
import { receiveReceipt } from '../../core/messaging/receive.ts';
import type { TestDatabase } from '../support/database.ts';
import { openTestContext, type TestContext } from '../support/context.ts';

/**
 * A provider may call back with a message's status before the service has stored the network id
 * its own answer to the send carried (the race of a fast callback). Such a receipt is held and
 * applied when the id lands, so "delivery receipts update the message" (issue 3) holds even then.
 * The use cases run on real stores and a real queue (no worker, so the test decides the order).
 */
let database: TestDatabase;
let testContext: TestContext;
let ctx: AppContext;

beforeAll(async () => {
  testContext = await openTestContext();
  ({ ctx, database } = testContext);
});

afterAll(async () => {
  await testContext.close();
});

test('a READ receipt that arrives before the send is recorded is applied when it is', async () => {
  const deps = messagingDeps(ctx);
  const uow = messagingUnitOfWork(ctx);
  const { message, connection } = await uow.transaction(async (stores) => {
    const owner = await bootstrapOwner(stores, ctx, { email: `held-${crypto.randomUUID().slice(0, 6)}@example.com`, workspace: 'Held', plan: 'PRO' });
    const actor = { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER' as const] };
    const created = await createConnection(stores, deps, actor, { name: 'sandbox', driver: 'sandbox' });
    await applySessionUpdate(stores, deps, created.id, { event: 'connect' });
    const connection = (await applySessionUpdate(stores, deps, created.id, { event: 'opened', phoneNumber: '15550100000' }))!;
    const { message } = await acceptSend(stores, deps, actor, connection.id, { to: '+5511988887777', content: { kind: 'text', text: 'hi' } });
    return { message, connection };
  });
  // The sandbox's network id is derived from our id, so the test knows it before the send.
  const externalId = `SANDBOX.${message.id.replace(/-/g, '').toUpperCase()}`;

  await uow.transaction((stores) => receiveReceipt(stores, deps, connection, { externalId, remoteJid: message.remoteJid, status: 'READ' }));
  expect((await messagingStores(ctx.db, ctx).messages.get(message.id))!.status).toBe('PENDING');

  expect(await deliverNow(ctx, [message.id], deps)).toEqual([]);
  const after = (await messagingStores(ctx.db, ctx).messages.get(message.id))!;
  expect(after.externalId).toBe(externalId);
  expect(after.status).toBe('READ');
  // Handed over once: nothing stays held.
  expect(await ctx.db.selectFrom('held_receipts').selectAll().execute()).toEqual([]);
});

test('a receipt for a message that has its network id already applies at once, and nothing is held', async () => {
  const rows = await ctx.db.selectFrom('messages').select(['id', 'external_id', 'connection_id', 'remote_jid']).where('direction', '=', 'outbound').execute();
  const row = rows[0]!;
  const connection = (await messagingStores(ctx.db, ctx).connections.find(row.connection_id))!;
  await messagingUnitOfWork(ctx).transaction((stores) =>
    receiveReceipt(stores, messagingDeps(ctx), connection, { externalId: row.external_id!, remoteJid: row.remote_jid, status: 'DELIVERED' }),
  );
  // READ already: a late DELIVERED changes nothing (statuses move forward only).
  expect((await messagingStores(ctx.db, ctx).messages.get(row.id))!.status).toBe('READ');
  expect(await ctx.db.selectFrom('held_receipts').selectAll().execute()).toEqual([]);
});
