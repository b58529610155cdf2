import { beforeAll, describe, expect, test } from 'bun:test';
import { useInstallation } from '../support/installation.ts';
import { callProcess, type ServerProcess } from '../support/server-process.ts';
import { eventually } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 8 item 4: "Exactly-once sending per recipient across worker crashes and restarts (an
 * idempotency key per recipient; a test kills the worker mid-campaign)". The service runs as a
 * real process on a database that outlives it; it is killed with SIGKILL while a paced campaign
 * is sending, started again on the same data, and the campaign finishes by itself: every
 * recipient has exactly one message and exactly their credits were used.
 */
const installation = useInstallation('switchboard-campaign-crash-');
let token: string;

beforeAll(() => {
  token = installation.bootstrapOwner('campaign-crash@example.com', 'Crash');
}, HOOK_TIMEOUT);

function call(server: ServerProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return callProcess(server, token, method, path, body);
}

const RECIPIENTS = 30;
const numbers = Array.from({ length: RECIPIENTS }, (_, i) => `+3361${String(2_000_000 + i)}`);

describe('a worker killed mid-campaign', () => {
  test('SIGKILL while sending; after a restart the campaign completes and no recipient gets two messages', async () => {
    let server = await installation.startServer();
    try {
      const created = await call(server, 'POST', '/v3/connections', { name: 'crash line' });
      const connectionId = created.body.id;
      expect((await call(server, 'POST', `/v3/connections/${connectionId}/connect`)).body.status).toBe('CONNECTED');
      const before = (await call(server, 'GET', '/v3/summary')).body.messages.available;
      const campaign = await call(server, 'POST', '/v3/campaigns', {
        name: 'Crash test',
        connectionId,
        message: { text: 'Sent once, whatever happens' },
        audience: { numbers },
        pace: { messagesPerMinute: 120, jitterSeconds: 0 },
      });
      expect(campaign.status).toBe(201);
      const id = campaign.body.id;
      const sentBeforeKill = await eventually(async () => {
        const c = (await call(server, 'GET', `/v3/campaigns/${id}`)).body;
        return c.progress.sent >= 4 ? c.progress.sent : undefined;
      }, 'a few sends', 30_000);
      expect(sentBeforeKill).toBeLessThan(RECIPIENTS);

      await server.kill();
      server = await installation.startServer();

      const done = await eventually(async () => {
        const c = (await call(server, 'GET', `/v3/campaigns/${id}`)).body;
        return c.status === 'COMPLETED' ? c : undefined;
      }, 'the campaign to complete after the restart', 90_000);
      expect(done.progress).toMatchObject({ total: RECIPIENTS, sent: RECIPIENTS, failed: 0, queued: 0 });
      expect(done.credits).toEqual({ reserved: RECIPIENTS, consumed: RECIPIENTS, refunded: 0, held: 0 });
      expect((await call(server, 'GET', '/v3/summary')).body.messages.available).toBe(before - RECIPIENTS);

      const recipients = (await call(server, 'GET', `/v3/campaigns/${id}/recipients?per_page=100`)).body.data;
      expect(new Set(recipients.map((r: any) => r.messageId)).size).toBe(RECIPIENTS);
      for (const number of numbers) {
        const chat = `${number.slice(1)}@s.whatsapp.net`;
        const history = await call(server, 'GET', `/v3/connections/${connectionId}/chats/messages?chat=${chat}`);
        expect(history.body.length ?? history.body.data?.length).toBe(1);
      }
    } finally {
      await server.stop();
    }
  }, 180_000);
});
