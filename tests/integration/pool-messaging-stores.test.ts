import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { createConnection } from '../../core/connections/connections.ts';
import { messagingDeps, messagingUnitOfWork, poolMessagingStores } from '../../adapters/connections/stores.ts';
import { openTestContext, type TestContext } from '../support/context.ts';
import { HOOK_TIMEOUT } from '../support/service.ts';

/**
 * The messaging stores over a context's pool are made once per context (reads outside a
 * transaction build none), and they stay bound to that context's own database.
 */
let first: TestContext;
let second: TestContext;

beforeAll(async () => {
  [first, second] = await Promise.all([openTestContext(), openTestContext()]);
}, HOOK_TIMEOUT);
afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
}, HOOK_TIMEOUT);

describe('poolMessagingStores', () => {
  test('one set of stores per context, the same for every read', async () => {
    expect(poolMessagingStores(first.ctx)).toBe(poolMessagingStores(first.ctx));
    expect(await messagingUnitOfWork(first.ctx).read!(async (stores) => stores)).toBe(poolMessagingStores(first.ctx));
    expect(poolMessagingStores(second.ctx)).not.toBe(poolMessagingStores(first.ctx));
  });

  test("each context's stores read its own database", async () => {
    const { ctx } = first;
    const connection = await messagingUnitOfWork(ctx).transaction(async (stores) => {
      const owner = await bootstrapOwner(stores, ctx, { email: 'pool@example.com', workspace: 'Pool', plan: 'PRO' });
      return createConnection(stores, messagingDeps(ctx), { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'] }, { name: 'pooled', driver: 'sandbox' });
    });
    expect((await poolMessagingStores(first.ctx).connections.find(connection.id))?.name).toBe('pooled');
    expect(await poolMessagingStores(second.ctx).connections.find(connection.id)).toBeUndefined();
  });
});
