import { afterAll, describe, expect, test } from 'bun:test';
import { sharedDatabase, startTestService, type SharedDatabase, type TestService } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 20, item 10. Spec 5.4: "Connections and messages are metered against plan limits"; spec 8:
 * "Messages | metered: each sent message uses one plan credit". The quotas are configuration
 * (`PLAN_<NAME>_MESSAGES`): a change reaches the workspaces already in the month at the next
 * start, and the summary never shows more available than the limit leaves
 * (available = max(0, limit − used)). The service is started several times on one database.
 */

let database: SharedDatabase | undefined;
let service: TestService | undefined;

afterAll(async () => {
  await service?.stop();
  await database?.drop();
}, HOOK_TIMEOUT);

async function restart(messages: string): Promise<TestService> {
  await service?.stop();
  service = await startTestService({ database, env: { PLAN_FREE_MESSAGES: messages } });
  return service;
}

describe('issue 20 §10: plan quotas follow configuration within the month', () => {
  test('lowering, then raising FREE’s message quota moves the workspace’s credits at once', async () => {
    database = await sharedDatabase();
    let running = await restart('1000');
    const { token: apikey } = await running.bootstrap({ plan: 'FREE' });
    const connection = (await running.call('POST', '/v3/connections', { apikey, body: { name: 'metered' } })).body;
    await running.call('POST', `/v3/connections/${connection.id}/connect`, { apikey });
    for (let i = 0; i < 4; i++) {
      expect((await running.call('POST', `/v3/connections/${connection.id}/chats/messages`, { apikey, body: { to: '+5511966660000', text: `m${i}` } })).status).toBe(201);
    }
    const messages = async (s: TestService) => (await s.call('GET', '/v3/summary', { apikey })).body.messages;
    expect(await messages(running)).toMatchObject({ limit: 1000, available: 996 });

    // Lowered under what the month used: nothing left, never a negative or an old number.
    running = await restart('3');
    expect(await messages(running)).toMatchObject({ limit: 3, available: 0 });
    const refused = await running.call('POST', `/v3/connections/${connection.id}/chats/messages`, { apikey, body: { to: '+5511966660000', text: 'over' } });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('USER_PLAN_EXCEEDED_MESSAGES');

    // Raised: what was used stays used; the rest of the new quota is available.
    running = await restart('10');
    expect(await messages(running)).toMatchObject({ limit: 10, available: 6 });
    expect((await running.call('POST', `/v3/connections/${connection.id}/chats/messages`, { apikey, body: { to: '+5511966660000', text: 'fits' } })).status).toBe(201);
    expect(await messages(running)).toMatchObject({ limit: 10, available: 5 });

    // Started again with the same configuration: nothing moves.
    running = await restart('10');
    expect(await messages(running)).toMatchObject({ limit: 10, available: 5 });
  }, 120_000);
});
