import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { loadConfig } from '../../apps/config.ts';
import { startService, type RunningService } from '../../apps/server/server.ts';
import { clientAddress } from '../../adapters/http/auth-failures.ts';
import type { AppContext } from '../../adapters/http/context.ts';
import { freshDatabase, onPostgres, useTestService, useOwner } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 19 §5: "Failed API-key authentications are rate-limited per client address (429 with
 * `Retry-After`) without locking out valid keys from the same address … Limits hold across server
 * processes (state in Postgres)". The clock stands still unless a test moves it, so the minute
 * window does not depend on how fast the machine is.
 */
const LIMIT = 5;
let now = new Date('2026-03-02T10:00:00Z');
const clock = { now: () => now };

const service = useTestService({ env: { AUTH_FAILURE_LIMIT: String(LIMIT) }, clock });
const owner = useOwner(service, { plan: 'PRO' });

const withKey = (apikey: string, headers: Record<string, string> = {}) => service.call('GET', '/v3/api-tokens', { apikey, headers });
const wrongKey = () => `sk_live_${crypto.randomUUID().replace(/-/g, '')}`;

describe('failed API keys are limited per client address', () => {
  test(`after ${LIMIT} wrong keys a minute the next is 429 with Retry-After; a valid key from the same address still passes`, async () => {
    for (let i = 0; i < LIMIT; i++) expect((await withKey(wrongKey())).status).toBe(401);
    const limited = await withKey(wrongKey());
    expectStandardError(limited, 429, 'Too Many Requests');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // The owner's own key from the same address is not locked out.
    expect((await withKey(owner.token)).status).toBe(200);
    // A wrong OAuth bearer token counts the same; a request with no credential is not a guess.
    expect((await service.call('GET', '/v3/api-tokens', { headers: { authorization: 'Bearer not-a-token' } })).status).toBe(429);
    expect((await service.call('GET', '/v3/api-tokens')).status).toBe(401);
    // Without TRUST_PROXY a client cannot pick its own address.
    expect((await withKey(wrongKey(), { 'x-forwarded-for': '203.0.113.7' })).status).toBe(429);

    // Once the minute is over, a wrong key is a plain 401 again.
    now = new Date(now.getTime() + 61_000);
    expect((await withKey(wrongKey())).status).toBe(401);
  });

  test('a valid key costs no limiter write: only failures are counted', async () => {
    const rows = () => service.runtime.ctx.db.selectFrom('auth_failures').selectAll().execute();
    now = new Date(now.getTime() + 3_600_000);
    await service.runtime.ctx.db.deleteFrom('auth_failures').execute();
    for (let i = 0; i < 20; i++) expect((await withKey(owner.token)).status).toBe(200);
    expect(await rows()).toEqual([]);
    expect((await withKey(wrongKey())).status).toBe(401);
    expect((await rows()).map((r) => [r.kind, r.failures])).toEqual([['credential', 1]]);
  });
});

describe('the helpdesk inbound token and signed links are limited the same way', () => {
  test(`a wrong x-helpdesk-token: ${LIMIT} failures a minute, then 429; the right token still passes`, async () => {
    now = new Date(now.getTime() + 3_600_000);
    const inbox = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: owner.token, body: { channelType: 'API', name: 'Shop app', webhookUrl: 'https://example.com/hook' } });
    expect(inbox.status).toBe(201);
    const inbound = (token: string) =>
      service.call('POST', `/webhooks/helpdesk/${inbox.body.id}`, { headers: { 'x-helpdesk-token': token }, body: { sourceId: crypto.randomUUID(), contact: { identifier: 'c-1' }, content: 'hi' } });
    for (let i = 0; i < LIMIT; i++) expect((await inbound(`wrong-${i}`)).status).toBe(401);
    const limited = await inbound('wrong-again');
    expectStandardError(limited, 429, 'Too Many Requests');
    expect(limited.headers.get('retry-after')).not.toBeNull();
    expect((await inbound(inbox.body.inboundWebhookSecret)).status).not.toBe(429);
  });

  test(`a forged media download link: ${LIMIT} failures a minute, then 429`, async () => {
    const download = () => service.call('GET', `/v3/connections/media/${crypto.randomUUID()}/download?token=forged.${crypto.randomUUID()}`);
    for (let i = 0; i < LIMIT; i++) expect((await download()).status).toBe(401);
    expectStandardError(await download(), 429, 'Too Many Requests');
    const attachment = await service.call('GET', `/v3/helpdesk/messages/attachments/${crypto.randomUUID()}/public/download?token=forged`);
    expect(attachment.status).toBe(429);
  });
});

describe('the client address', () => {
  const ctx = (trustProxy: number) => ({ config: { publicUrl: '', trustProxy }, peerAddress: () => '10.0.0.2' }) as unknown as AppContext;
  const request = new Request('http://x/', { headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' } });

  test('is the TCP peer unless TRUST_PROXY says how many proxies stand in front', () => {
    expect(clientAddress(ctx(0), request)).toBe('10.0.0.2');
    // One proxy appends the address it saw: the last entry. What the client wrote before it is not trusted.
    expect(clientAddress(ctx(1), request)).toBe('203.0.113.9');
    expect(clientAddress(ctx(2), request)).toBe('198.51.100.1');
    // A request with fewer entries than proxies did not come through them all: its peer counts.
    expect(clientAddress(ctx(3), request)).toBe('10.0.0.2');
  });
});

describe.skipIf(!onPostgres)('the limit holds across server processes (Postgres only: the embedded database is one process)', () => {
  let database: { url: string; drop(): Promise<void> };
  let first: RunningService;
  let second: RunningService;

  beforeAll(async () => {
    database = await freshDatabase(process.env.TEST_DATABASE_URL!);
    const config = () => loadConfig({ PORT: '0', DATA_DIR: 'memory://', DATABASE_URL: database.url, AUTH_FAILURE_LIMIT: String(LIMIT) });
    first = await startService(config(), { worker: false, clock });
    second = await startService(config(), { worker: false, clock });
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    await database?.drop();
  }, HOOK_TIMEOUT);

  test(`${LIMIT} failures on one process, and the other answers 429`, async () => {
    const call = (server: RunningService) => fetch(`${server.url}/v3/api-tokens`, { headers: { apikey: wrongKey() } });
    for (let i = 0; i < LIMIT; i++) expect((await call(first)).status).toBe(401);
    const limited = await call(second);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).not.toBeNull();
  });
});
