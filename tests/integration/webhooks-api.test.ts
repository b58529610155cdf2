import { beforeAll, describe, expect, test } from 'bun:test';
import { newConnection } from '../support/connections.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * The connection-webhook resource over HTTP (issue 4 item 1; spec 2.8, 4.4, 6.1, 7, 8).
 * Delivery itself is in webhooks-delivery.test.ts.
 */

type Owner = { userId: string; workspaceId: string; token: string };
let other: Owner;
let connectionId: string;
let secondConnectionId: string;
let otherConnectionId: string;

const URL_A = 'http://127.0.0.1:9/hooks/a';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const service = useTestService();
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  other = await service.bootstrap({ plan: 'PRO' });
  connectionId = await newConnection(service, owner.token, 'main');
  secondConnectionId = await newConnection(service, owner.token, 'second');
  otherConnectionId = await newConnection(service, other.token, 'theirs');
}, HOOK_TIMEOUT);

const create = (body: unknown, apikey = owner.token) => service.call('POST', '/v3/webhooks', { apikey, body });
const get = (id: string, apikey = owner.token) => service.call('GET', `/v3/webhooks/${id}`, { apikey });
const patch = (id: string, body: unknown, apikey = owner.token) => service.call('PATCH', `/v3/webhooks/${id}`, { apikey, body });

/** Spec 7.2 (1): validation failures carry `message` as "array of strings …, one per broken rule". */
function expectValidation(res: { status: number; body: any }, mentions: string): void {
  expectStandardError(res, 400, 'Bad Request');
  expect(Array.isArray(res.body.message)).toBe(true);
  expect(res.body.message.join(' ')).toContain(mentions);
}

describe('create, read, list, update, delete (spec 4.4)', () => {
  let id: string;

  test('POST /v3/webhooks → 201 with the 2.8 fields; without connections it is bound to none', async () => {
    // Spec 7.1: "201 | Created; default for POST". Spec 2.8: "`connections` … If omitted, the webhook has no bindings".
    const res = await create({ url: URL_A, events: ['messages.upsert', 'send.message'] });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(UUID);
    expect(res.body).toMatchObject({ url: URL_A, events: ['messages.upsert', 'send.message'], connections: [], hmacEnabled: false, enableSimulateTyping: false, messageGroupDelay: null });
    expect(res.body.createdAt).toMatch(ISO);
    // The signing secret is only read through GET /{id}/secret (spec 4.4), never in the resource.
    expect(JSON.stringify(res.body)).not.toContain('whsec_');
    expect(res.body.secret).toBeUndefined();
    id = res.body.id;
  });

  test('GET one returns what was created', async () => {
    // Spec 2.8: the connection webhook's fields, as created.
    const res = await get(id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, url: URL_A, events: ['messages.upsert', 'send.message'], connections: [] });
  });

  test('GET list uses the pagination envelope (spec 2.2) and pages', async () => {
    // Spec 2.2: "Response body: `{ data: [..], total, totalPages, currentPage, perPage }`".
    const second = await create({ url: 'https://example.com/second', events: ['messages.update'] });
    expect(second.status).toBe(201);
    const res = await service.call('GET', '/v3/webhooks', { apikey: owner.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['currentPage', 'data', 'perPage', 'total', 'totalPages']);
    expect(res.body).toMatchObject({ total: 2, totalPages: 1, currentPage: 1, perPage: 10 });
    expect(res.body.data.map((w: any) => w.id).sort()).toEqual([id, second.body.id].sort());

    const paged = await service.call('GET', '/v3/webhooks?page=2&per_page=1', { apikey: owner.token });
    expect(paged.body).toMatchObject({ total: 2, totalPages: 2, currentPage: 2, perPage: 1 });
    expect(paged.body.data).toHaveLength(1);
    // Spec 2.2: "`s` … Free-text search".
    const searched = await service.call('GET', '/v3/webhooks?s=example.com', { apikey: owner.token });
    expect(searched.body.data.map((w: any) => w.id)).toEqual([second.body.id]);
    await service.call('DELETE', `/v3/webhooks/${second.body.id}`, { apikey: owner.token });
  });

  test('PATCH adds connections (spec 4.4 "update, including adding `connections`") and keeps the other fields', async () => {
    const res = await patch(id, { connections: [connectionId] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, url: URL_A, events: ['messages.upsert', 'send.message'], connections: [connectionId] });
    const both = await patch(id, { connections: [connectionId, secondConnectionId], messageGroupDelay: 5 });
    expect(both.body.connections.sort()).toEqual([connectionId, secondConnectionId].sort());
    expect(both.body.messageGroupDelay).toBe(5);
    expect((await get(id)).body).toMatchObject({ connections: both.body.connections, messageGroupDelay: 5, url: URL_A });
    // null turns batching off again.
    expect((await patch(id, { messageGroupDelay: null })).body.messageGroupDelay).toBeNull();
  });

  test('PATCH is validated like POST', async () => {
    expectValidation(await patch(id, { events: ['messages.upsert', 'nope'] }), 'nope');
    expectValidation(await patch(id, { connections: [crypto.randomUUID()] }), 'connections');
    expectValidation(await patch(id, { messageGroupDelay: 301 }), 'messageGroupDelay');
    // A refused patch changed nothing.
    expect((await get(id)).body.events).toEqual(['messages.upsert', 'send.message']);
  });

  test('DELETE → 200, then the webhook is 404 everywhere (spec 7.1: "404 | Does not exist")', async () => {
    const res = await service.call('DELETE', `/v3/webhooks/${id}`, { apikey: owner.token });
    expect(res.status).toBe(200);
    expectStandardError(await get(id), 404, 'Not Found');
    expectStandardError(await patch(id, { url: URL_A }), 404, 'Not Found');
    expectStandardError(await service.call('GET', `/v3/webhooks/${id}/secret`, { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('DELETE', `/v3/webhooks/${id}`, { apikey: owner.token }), 404, 'Not Found');
    expect((await service.call('GET', '/v3/webhooks', { apikey: owner.token })).body.data.some((w: any) => w.id === id)).toBe(false);
  });

  test('a malformed id is 404, not a server error', async () => {
    // Spec 7.1: "404 | Does not exist or is not visible to the caller".
    expectStandardError(await get('not-a-uuid'), 404, 'Not Found');
  });
});

describe('validation (spec 2.8, 6.1, 6.2, 8; errors in the 7.2 standard shape)', () => {
  test('an unknown event is refused; all eight of 6.1 are accepted', async () => {
    expectValidation(await create({ url: URL_A, events: ['messages.upsert', 'message.created'] }), 'message.created');
    expectValidation(await create({ url: URL_A, events: [] }), 'events');
    // Spec 6.1: "The eight values accepted in `events`" (connection.update: "accepted as a subscription").
    const all = ['messages.upsert', 'send.message', 'messages.update', 'messages.edited', 'messages.delete', 'presence.update', 'connection.update', 'flow.data_exchange'];
    const res = await create({ url: URL_A, events: all, hmacEnabled: true });
    expect(res.status).toBe(201);
    expect(res.body.events).toEqual(all);
  });

  test('flow.data_exchange without hmacEnabled → 400; with hmacEnabled: true → 201', async () => {
    // Spec 2.8: "`hmacEnabled` … Required true to subscribe `flow.data_exchange`"; 6.2: "otherwise the subscription is refused".
    expectValidation(await create({ url: URL_A, events: ['flow.data_exchange'] }), 'flow.data_exchange');
    expectValidation(await create({ url: URL_A, events: ['flow.data_exchange'], hmacEnabled: false }), 'hmacEnabled');
    const ok = await create({ url: URL_A, events: ['flow.data_exchange'], hmacEnabled: true });
    expect(ok.status).toBe(201);
    expect(ok.body.hmacEnabled).toBe(true);
    // Turning signing off later would break the same rule.
    expectValidation(await patch(ok.body.id, { hmacEnabled: false }), 'flow.data_exchange');
  });

  test('messageGroupDelay must be 1 to 300 seconds', async () => {
    // Spec 8: "`messageGroupDelay` | 1 to 300 seconds".
    for (const bad of [0, 301, -1]) expectValidation(await create({ url: URL_A, events: ['messages.upsert'], messageGroupDelay: bad }), 'messageGroupDelay');
    const fractional = await create({ url: URL_A, events: ['messages.upsert'], messageGroupDelay: 1.5 });
    expectStandardError(fractional, 400, 'Bad Request');
    for (const good of [1, 300]) {
      const res = await create({ url: URL_A, events: ['messages.upsert'], messageGroupDelay: good });
      expect(res.status).toBe(201);
      expect(res.body.messageGroupDelay).toBe(good);
    }
  });

  test('a URL that is not absolute http(s) is refused', async () => {
    for (const url of ['ftp://example.com/x', 'not a url', '/relative/path', 'javascript:alert(1)']) {
      expectValidation(await create({ url, events: ['messages.upsert'] }), 'url');
    }
    expect((await create({ url: 'https://example.com/hook', events: ['messages.upsert'] })).status).toBe(201);
  });

  test('an unknown connection id, or another workspace’s connection, is refused', async () => {
    expectValidation(await create({ url: URL_A, events: ['messages.upsert'], connections: [crypto.randomUUID()] }), 'connection');
    expectValidation(await create({ url: URL_A, events: ['messages.upsert'], connections: [connectionId, otherConnectionId] }), otherConnectionId);
  });

  test('several broken rules are reported at once, one message each (spec 7.2)', async () => {
    const res = await create({ url: 'ftp://x', events: ['bogus'], messageGroupDelay: 0 });
    expectStandardError(res, 400, 'Bad Request');
    expect(res.body.message.length).toBe(3);
  });

  test('missing or mistyped fields → 400 in the standard shape', async () => {
    expectStandardError(await create({ events: ['messages.upsert'] }), 400, 'Bad Request');
    expectStandardError(await create({ url: URL_A }), 400, 'Bad Request');
    expectStandardError(await create({ url: URL_A, events: 'messages.upsert' }), 400, 'Bad Request');
  });
});

describe('signing secret (spec 4.4)', () => {
  let id: string;

  beforeAll(async () => {
    id = (await create({ url: URL_A, events: ['messages.upsert'], hmacEnabled: true })).body.id;
  });

  test('GET /{id}/secret returns the secret, the same on every read', async () => {
    // Spec 4.4: "GET `/v3/webhooks/{id}/secret` | none | the signing secret (read once and store it)".
    const first = await service.call('GET', `/v3/webhooks/${id}/secret`, { apikey: owner.token });
    expect(first.status).toBe(200);
    expect(typeof first.body.secret).toBe('string');
    expect(first.body.secret.length).toBeGreaterThanOrEqual(32);
    const again = await service.call('GET', `/v3/webhooks/${id}/secret`, { apikey: owner.token });
    expect(again.body.secret).toBe(first.body.secret);
    // Each webhook has its own secret.
    const another = (await create({ url: URL_A, events: ['messages.upsert'] })).body.id;
    expect((await service.call('GET', `/v3/webhooks/${another}/secret`, { apikey: owner.token })).body.secret).not.toBe(first.body.secret);
  });

  test('rotate returns a new secret, and GET secret shows the new one from then on', async () => {
    // Spec 4.4: "POST `/v3/webhooks/{id}/secret/rotate` | none | old secret stops verifying immediately".
    const before = (await service.call('GET', `/v3/webhooks/${id}/secret`, { apikey: owner.token })).body.secret;
    const rotated = await service.call('POST', `/v3/webhooks/${id}/secret/rotate`, { apikey: owner.token });
    expect(rotated.status).toBe(201);
    expect(typeof rotated.body.secret).toBe('string');
    expect(rotated.body.secret).not.toBe(before);
    const after = await service.call('GET', `/v3/webhooks/${id}/secret`, { apikey: owner.token });
    expect(after.body.secret).toBe(rotated.body.secret);
    // The rest of the webhook is unchanged.
    expect((await get(id)).body).toMatchObject({ id, hmacEnabled: true, events: ['messages.upsert'] });
  });
});

describe('roles and workspaces (spec 2.14, 7.1)', () => {
  test('an Agent gets 403 on create, list, read, secret and delete; a Manager can create and manage', async () => {
    // Spec 2.14: "Connections, integrations, webhooks | yes | yes | yes | no".
    const agent = await memberWithToken(service, owner, 'AGENT');
    const manager = await memberWithToken(service, owner, 'MANAGER');
    const existing = (await create({ url: URL_A, events: ['messages.upsert'] })).body.id;

    const denied = [
      await create({ url: URL_A, events: ['messages.upsert'] }, agent.token),
      await service.call('GET', '/v3/webhooks', { apikey: agent.token }),
      await get(existing, agent.token),
      await service.call('GET', `/v3/webhooks/${existing}/secret`, { apikey: agent.token }),
      await service.call('POST', `/v3/webhooks/${existing}/secret/rotate`, { apikey: agent.token }),
      await service.call('GET', `/v3/webhooks/${existing}/deliveries`, { apikey: agent.token }),
      await service.call('DELETE', `/v3/webhooks/${existing}`, { apikey: agent.token }),
    ];
    for (const res of denied) {
      // Spec 7.2: "role denied | `Insufficient account permissions` | 403".
      expectStandardError(res, 403, 'Forbidden');
      expect(res.body.message).toBe('Insufficient account permissions');
    }
    expect((await get(existing)).status).toBe(200);

    const made = await create({ url: URL_A, events: ['messages.upsert'], connections: [connectionId] }, manager.token);
    expect(made.status).toBe(201);
    expect((await service.call('GET', '/v3/webhooks', { apikey: manager.token })).status).toBe(200);
    expect((await patch(made.body.id, { events: ['send.message'] }, manager.token)).body.events).toEqual(['send.message']);
    expect((await service.call('GET', `/v3/webhooks/${made.body.id}/secret`, { apikey: manager.token })).status).toBe(200);
    expect((await service.call('DELETE', `/v3/webhooks/${made.body.id}`, { apikey: manager.token })).status).toBe(200);
  });

  test('another workspace’s webhook is 404 on every route and absent from the list', async () => {
    // Spec 7.1: "404 | Does not exist or is not visible to the caller".
    const theirs = await create({ url: URL_A, events: ['messages.upsert'], connections: [otherConnectionId] }, other.token);
    expect(theirs.status).toBe(201);
    const id = theirs.body.id;
    for (const res of [
      await get(id),
      await patch(id, { url: 'https://evil.example.com/' }),
      await service.call('GET', `/v3/webhooks/${id}/secret`, { apikey: owner.token }),
      await service.call('POST', `/v3/webhooks/${id}/secret/rotate`, { apikey: owner.token }),
      await service.call('GET', `/v3/webhooks/${id}/deliveries`, { apikey: owner.token }),
      await service.call('POST', `/v3/webhooks/${id}/deliveries/${crypto.randomUUID()}/redeliver`, { apikey: owner.token }),
      await service.call('DELETE', `/v3/webhooks/${id}`, { apikey: owner.token }),
    ]) {
      expectStandardError(res, 404, 'Not Found');
    }
    const list = await service.call('GET', '/v3/webhooks?per_page=100', { apikey: owner.token });
    expect(list.body.data.some((w: any) => w.id === id)).toBe(false);
    // Untouched for its owner.
    expect((await get(id, other.token)).body).toMatchObject({ id, url: URL_A, connections: [otherConnectionId] });
  });

  test('without an API key → 401', async () => {
    // Spec 7.1: "401 | API key missing, wrong or revoked".
    expectStandardError(await service.call('GET', '/v3/webhooks'), 401, 'Unauthorized');
    expectStandardError(await service.call('POST', '/v3/webhooks', { body: { url: URL_A, events: ['messages.upsert'] } }), 401, 'Unauthorized');
  });
});
