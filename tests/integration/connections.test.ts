import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startGraphSimulator, type GraphSimulator } from '../support/graph-simulator.ts';
import { connectionEvents } from '../support/connections.ts';
import { useTestService } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * Connections over HTTP on the sandbox driver (issue 3, item 2; spec 1.2, 3.6, 4.3, 7.2) and
 * the official driver's creation rules (credentials, paid plan). Pairing on the sandbox
 * completes at once (ARCHITECTURE.md, "Network drivers": "Pairing completes at once").
 */

let sim: GraphSimulator;
type Owner = { userId: string; workspaceId: string; token: string };

beforeAll(async () => {
  // Issue 3 item 2: "Quota `USER_PLAN_EXCEEDED_CONNECTIONS`". The FREE plan holds one connection here.
  sim = await startGraphSimulator();
}, HOOK_TIMEOUT);

const service = useTestService(() => ({ env: { PLAN_FREE_CONNECTIONS: '1', CLOUD_API_BASE_URL: sim.baseUrl } }));

afterAll(async () => {
  sim?.stop();
}, HOOK_TIMEOUT);

const create = (apikey: string, body: unknown) => service.call('POST', '/v3/connections', { apikey, body });
const get = (apikey: string, id: string) => service.call('GET', `/v3/connections/${id}`, { apikey });
const list = (apikey: string) => service.call('GET', '/v3/connections', { apikey });
const action = (apikey: string, id: string, what: 'connect' | 'disconnect' | 'logout') => service.call('POST', `/v3/connections/${id}/${what}`, { apikey });

/** Spec 7.2 (2): "Coded: `{ message: <MACHINE_CODE>, hint: <localized human text> }`". */
function expectCoded(res: { status: number; body: any }, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(['hint', 'message']);
  expect(res.body.message).toBe(code);
  expect(typeof res.body.hint).toBe('string');
  expect(res.body.hint.length).toBeGreaterThan(0);
}

const connectionUpdates = (connectionId: string) => connectionEvents(service, connectionId, 'connection.update');

describe('sandbox connection lifecycle', () => {
  let owner: Owner;
  let id: string;

  beforeAll(async () => {
    owner = await service.bootstrap({ plan: 'PRO' });
  }, HOOK_TIMEOUT);

  test('POST /v3/connections {name} creates a DISCONNECTED sandbox connection (201)', async () => {
    // Spec 7.1: "201 | Created; default for POST". Issue 3 item 2: "unofficial: name only".
    const res = await create(owner.token, { name: '  Support line  ' });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(UUID);
    expect(res.body).toMatchObject({
      name: 'Support line',
      driver: 'sandbox',
      official: false,
      status: 'DISCONNECTED',
      phoneNumber: null,
      qr: null,
      qrDataUrl: null,
      pairingCode: null,
      callbackUrl: null,
      credentials: {},
    });
    // Spec 2.1: "Timestamps in and out: ISO 8601 in UTC with milliseconds".
    expect(res.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    id = res.body.id;
  });

  test('GET /v3/connections lists it with its status; GET one answers the same connection', async () => {
    // Spec 4.3: "GET /v3/connections | connections of the workspace"; issue 3: "list (`GET /v3/connections`, with status)".
    const all = await list(owner.token);
    expect(all.status).toBe(200);
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((c: any) => [c.id, c.status])).toEqual([[id, 'DISCONNECTED']]);
    const one = await get(owner.token, id);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(all.body[0]);
  });

  test('an unknown id answers the coded CONNECTION_NOT_FOUND (404); a malformed id too', async () => {
    // Spec 7.2: "unknown connection | `CONNECTION_NOT_FOUND`" in the coded shape; 7.1 "404 | Does not exist".
    expectCoded(await get(owner.token, crypto.randomUUID()), 404, 'CONNECTION_NOT_FOUND');
    expectCoded(await get(owner.token, 'not-a-uuid'), 404, 'CONNECTION_NOT_FOUND');
    expectCoded(await action(owner.token, crypto.randomUUID(), 'connect'), 404, 'CONNECTION_NOT_FOUND');
    expectCoded(await service.call('PATCH', '/v3/connections/not-a-uuid', { apikey: owner.token, body: { name: 'x' } }), 404, 'CONNECTION_NOT_FOUND');
    expectCoded(await service.call('DELETE', `/v3/connections/${crypto.randomUUID()}`, { apikey: owner.token }), 404, 'CONNECTION_NOT_FOUND');
  });

  test("another workspace's connection is not found", async () => {
    // Spec 7.1: "404 | Does not exist or is not visible to the caller".
    const other = await service.bootstrap({ plan: 'PRO' });
    expectCoded(await get(other.token, id), 404, 'CONNECTION_NOT_FOUND');
    expectCoded(await action(other.token, id, 'connect'), 404, 'CONNECTION_NOT_FOUND');
    expect((await list(other.token)).body).toEqual([]);
  });

  test('PATCH renames the connection; an empty name is 400', async () => {
    // Issue 3 item 2: "create, list, get, edit, delete".
    const res = await service.call('PATCH', `/v3/connections/${id}`, { apikey: owner.token, body: { name: 'Sales line' } });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Sales line');
    expect((await get(owner.token, id)).body.name).toBe('Sales line');
    expectStandardError(await service.call('PATCH', `/v3/connections/${id}`, { apikey: owner.token, body: { name: '   ' } }), 400, 'Bad Request');
    expect((await get(owner.token, id)).body.name).toBe('Sales line');
  });

  test('connect pairs at once on the sandbox: CONNECTED with a phone number', async () => {
    // ARCHITECTURE.md: "`sandbox`: a simulated network inside the service. Pairing completes at once".
    const res = await action(owner.token, id, 'connect');
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('CONNECTED');
    expect(res.body.phoneNumber).toMatch(/^\d{7,15}$/);
    expect(res.body.qr).toBeNull();
    const listed = (await list(owner.token)).body.find((c: any) => c.id === id);
    expect(listed.status).toBe('CONNECTED');
    expect(listed.phoneNumber).toBe(res.body.phoneNumber);
  });

  test('disconnect → DISCONNECTED, logout → LOGGED_OUT, connect again → CONNECTED', async () => {
    // Issue 3 item 2: "disconnect/logout, status changes as a state machine in `core/`
    // (names are ours: e.g. `DISCONNECTED`, `CONNECTING`, `QR_PENDING`, `CONNECTED`, `LOGGED_OUT`)".
    const disconnected = await action(owner.token, id, 'disconnect');
    expect(disconnected.status).toBe(201);
    expect(disconnected.body.status).toBe('DISCONNECTED');
    expect((await get(owner.token, id)).body.status).toBe('DISCONNECTED');

    const loggedOut = await action(owner.token, id, 'logout');
    expect(loggedOut.status).toBe(201);
    expect(loggedOut.body.status).toBe('LOGGED_OUT');
    expect((await list(owner.token)).body.find((c: any) => c.id === id).status).toBe('LOGGED_OUT');

    const again = await action(owner.token, id, 'connect');
    expect(again.status).toBe(201);
    expect(again.body.status).toBe('CONNECTED');
  });

  test('every status change is recorded as a connection.update event (spec 3.6, 6.1 envelope)', async () => {
    // Spec 3.6: "The connection changes state (event `connection.update`)".
    // Spec 6.1: "Envelope: `{ event, connectionId, remoteJid, sender, data }`".
    const events = await connectionUpdates(id);
    expect(events.map((e) => [e.data.from, e.data.to])).toEqual([
      ['DISCONNECTED', 'CONNECTING'],
      ['CONNECTING', 'CONNECTED'],
      ['CONNECTED', 'DISCONNECTED'],
      ['DISCONNECTED', 'LOGGED_OUT'],
      ['LOGGED_OUT', 'CONNECTING'],
      ['CONNECTING', 'CONNECTED'],
    ]);
    for (const e of events) {
      expect(Object.keys(e).sort()).toEqual(['connectionId', 'data', 'event', 'remoteJid', 'sender']);
      expect(e.event).toBe('connection.update');
      expect(e.connectionId).toBe(id);
    }
    // Once paired, `sender` is the connection's own number.
    const phone = (await get(owner.token, id)).body.phoneNumber;
    expect(events.at(-1).sender).toBe(phone);
  });

  test('DELETE removes it: 404 afterwards, gone from the list, and the quota is freed', async () => {
    const res = await service.call('DELETE', `/v3/connections/${id}`, { apikey: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, deleted: true });
    expectCoded(await get(owner.token, id), 404, 'CONNECTION_NOT_FOUND');
    expect((await list(owner.token)).body).toEqual([]);
    expectCoded(await service.call('DELETE', `/v3/connections/${id}`, { apikey: owner.token }), 404, 'CONNECTION_NOT_FOUND');
    expect((await service.call('GET', '/v3/summary', { apikey: owner.token })).body.connections.used).toBe(0);
  });

  test('validation: a missing name or an unknown driver is 400', async () => {
    // Spec 7.1: "400 | Malformed request".
    expectStandardError(await create(owner.token, {}), 400, 'Bad Request');
    expectStandardError(await create(owner.token, { name: 'x', driver: 'carrier-pigeon' }), 400, 'Bad Request');
    expect((await list(owner.token)).body).toEqual([]);
  });
});

describe('plan quotas', () => {
  test('FREE allows one connection: the second is 403 USER_PLAN_EXCEEDED_CONNECTIONS and nothing is created', async () => {
    // Spec 7.2: "connection quota reached | `USER_PLAN_EXCEEDED_CONNECTIONS` | 403".
    const owner = await service.bootstrap({ plan: 'FREE' });
    expect((await create(owner.token, { name: 'first' })).status).toBe(201);
    expectCoded(await create(owner.token, { name: 'second' }), 403, 'USER_PLAN_EXCEEDED_CONNECTIONS');
    const all = (await list(owner.token)).body;
    expect(all.map((c: any) => c.name)).toEqual(['first']);
    const summary = (await service.call('GET', '/v3/summary', { apikey: owner.token })).body;
    expect(summary.connections).toEqual({ limit: 1, used: 1, remaining: 0 });
  });

  test('two creations at once on FREE: exactly one is created', async () => {
    const owner = await service.bootstrap({ plan: 'FREE' });
    const answers = await Promise.all([create(owner.token, { name: 'a' }), create(owner.token, { name: 'b' })]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 403]);
    expect((await list(owner.token)).body).toHaveLength(1);
  });

  test('an official (cloud-api) connection on FREE is 403 USER_PLAN_OFFICIAL_CONNECTIONS', async () => {
    // Issue 3 item 2: "official connections need a paid plan"; spec 7.1 "403 | … the plan does not include it".
    const owner = await service.bootstrap({ plan: 'FREE' });
    const res = await create(owner.token, { name: 'official', driver: 'cloud-api', credentials: goodCredentials() });
    expectCoded(res, 403, 'USER_PLAN_OFFICIAL_CONNECTIONS');
    expect((await list(owner.token)).body).toEqual([]);
  });
});

/** The credentials of a business of its own on the platform (the Graph simulator): its token owns its number. */
function goodCredentials() {
  const business = sim.addBusiness({ accessToken: `EAAG${crypto.randomUUID().replace(/-/g, '')}SECRETTAIL` });
  return {
    phoneNumberId: business.phoneNumberId,
    businessAccountId: business.businessAccountId,
    accessToken: business.accessToken,
    appSecret: `appsecret${crypto.randomUUID().replace(/-/g, '')}`,
    verifyToken: `verify-${crypto.randomUUID()}`,
  };
}

describe('official (cloud-api) connections on PRO', () => {
  let owner: Owner;

  beforeAll(async () => {
    owner = await service.bootstrap({ plan: 'PRO' });
  }, HOOK_TIMEOUT);

  test('bad credentials are 400 with one message per bad field, all at once', async () => {
    // Spec 7.2: "message: <array of strings for validation failures, one per broken rule>".
    // Issue 3 item 2: "official: phone number id, business account id, access token, app secret, verify token".
    const res = await create(owner.token, { name: 'official', driver: 'cloud-api', credentials: { phoneNumberId: 'abc', accessToken: 'has space' } });
    expectStandardError(res, 400, 'Bad Request');
    expect(Array.isArray(res.body.message)).toBe(true);
    const text = res.body.message.join('\n');
    for (const field of ['phoneNumberId', 'businessAccountId', 'accessToken', 'verifyToken']) expect(text).toContain(field);
    expect(res.body.message).toHaveLength(4);
    // Without credentials at all: the same four fields are named.
    const none = await create(owner.token, { name: 'official', driver: 'cloud-api' });
    expectStandardError(none, 400, 'Bad Request');
    expect(none.body.message).toHaveLength(4);
    expect((await list(owner.token)).body).toEqual([]);
  });

  test('good credentials: 201, secrets masked in every answer, callbackUrl given', async () => {
    const credentials = goodCredentials();
    const created = await create(owner.token, { name: 'official', driver: 'cloud-api', credentials });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ driver: 'cloud-api', official: true, status: 'DISCONNECTED' });
    expect(created.body.capabilities).toMatchObject({ sendWindow: true, templates: true });
    const id = created.body.id;
    // ARCHITECTURE.md: the callback path is `/v3/webhooks/whatsapp/{connectionId}`.
    expect(created.body.callbackUrl).toBe(`${service.runtime.ctx.config.publicUrl}/v3/webhooks/whatsapp/${id}`);
    // Ids are not secret; the access token, app secret and verify token are shown by their last 4 characters.
    expect(created.body.credentials.phoneNumberId).toBe(credentials.phoneNumberId);
    expect(created.body.credentials.businessAccountId).toBe(credentials.businessAccountId);
    expect(created.body.credentials.accessToken).toBe(`••••${credentials.accessToken.slice(-4)}`);
    expect(created.body.credentials.appSecret).toBe(`••••${credentials.appSecret.slice(-4)}`);

    const answers = [
      created,
      await get(owner.token, id),
      await list(owner.token),
      await service.call('PATCH', `/v3/connections/${id}`, { apikey: owner.token, body: { name: 'renamed' } }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeLessThan(300);
      const raw = JSON.stringify(answer.body);
      expect(raw).not.toContain(credentials.accessToken);
      expect(raw).not.toContain(credentials.appSecret);
      expect(raw).not.toContain(credentials.verifyToken);
    }

    // Rotating just the access token keeps the other fields (PATCH: "fields left out keep their value").
    sim.addBusiness({ phoneNumberId: credentials.phoneNumberId, accessToken: 'EAAGnewtokenWXYZ' });
    const rotated = await service.call('PATCH', `/v3/connections/${id}`, { apikey: owner.token, body: { credentials: { accessToken: 'EAAGnewtokenWXYZ' } } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.credentials).toMatchObject({ phoneNumberId: credentials.phoneNumberId, accessToken: '••••WXYZ' });
    expect(JSON.stringify(rotated.body)).not.toContain('EAAGnewtokenWXYZ');

    // Credentials are sealed at rest, not stored in clear.
    const row = await service.runtime.ctx.db.selectFrom('connections').select('credentials').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.credentials).not.toContain(credentials.appSecret);
  });

  test('a second connection for the same phone number id collides (409), not a server error', async () => {
    // Spec 7.1: "409 | Collides with something existing".
    const credentials = goodCredentials();
    expect((await create(owner.token, { name: 'one', driver: 'cloud-api', credentials })).status).toBe(201);
    const before = (await list(owner.token)).body.length;
    const res = await create(owner.token, { name: 'two', driver: 'cloud-api', credentials });
    expectStandardError(res, 409, 'Conflict');
    expect((await list(owner.token)).body).toHaveLength(before);
  });
});

describe('issue 19 §5: "A cloud-api connection claims its phone number id only after the platform confirms the credentials own it"', () => {
  let victim: Owner;
  let intruder: Owner;

  beforeAll(async () => {
    victim = await service.bootstrap({ plan: 'PRO' });
    intruder = await service.bootstrap({ plan: 'PRO' });
  }, HOOK_TIMEOUT);

  const phoneNumberIdRows = async (phoneNumberId: string) =>
    (await service.runtime.ctx.db.selectFrom('connections').select('id').where('routing_key', '=', phoneNumberId).execute()).length;

  test('a bogus connection in another workspace claims nothing (422), and the real owner then connects its number (201, not 409)', async () => {
    const real = goodCredentials();
    const bogus = { ...goodCredentials(), phoneNumberId: real.phoneNumberId, accessToken: 'EAAGbogus0000' };
    const squat = await create(intruder.token, { name: 'squat', driver: 'cloud-api', credentials: bogus });
    expectStandardError(squat, 422, 'Unprocessable Entity');
    expect(squat.body.message).toContain(`did not confirm that these credentials own phone number id ${real.phoneNumberId}`);
    expect(await phoneNumberIdRows(real.phoneNumberId)).toBe(0);

    // A working token of the intruder's own business does not own the victim's number either.
    const ownToken = goodCredentials();
    const borrowed = await create(intruder.token, { name: 'squat', driver: 'cloud-api', credentials: { ...ownToken, phoneNumberId: real.phoneNumberId } });
    expectStandardError(borrowed, 422, 'Unprocessable Entity');

    const owned = await create(victim.token, { name: 'ours', driver: 'cloud-api', credentials: real });
    expect(owned.status).toBe(201);
    expect(await phoneNumberIdRows(real.phoneNumberId)).toBe(1);
  });

  test('the 409 does not tell a workspace without working credentials which numbers are registered', async () => {
    const registered = goodCredentials();
    expect((await create(victim.token, { name: 'registered', driver: 'cloud-api', credentials: registered })).status).toBe(201);
    const unregistered = goodCredentials();
    const probe = (phoneNumberId: string) =>
      create(intruder.token, { name: 'probe', driver: 'cloud-api', credentials: { ...goodCredentials(), phoneNumberId, accessToken: 'EAAGguess' } });
    const [onRegistered, onUnregistered] = [await probe(registered.phoneNumberId), await probe(unregistered.phoneNumberId)];
    expect([onRegistered.status, onUnregistered.status]).toEqual([422, 422]);
    expect(onRegistered.body.message.replace(registered.phoneNumberId, 'N')).toBe(onUnregistered.body.message.replace(unregistered.phoneNumberId, 'N'));
  });

  test('changing credentials to a number the token does not own is 422 and changes nothing', async () => {
    const mine = goodCredentials();
    const created = await create(intruder.token, { name: 'mine', driver: 'cloud-api', credentials: mine });
    expect(created.status).toBe(201);
    const theirs = goodCredentials();
    const moved = await service.call('PATCH', `/v3/connections/${created.body.id}`, { apikey: intruder.token, body: { credentials: { phoneNumberId: theirs.phoneNumberId } } });
    expectStandardError(moved, 422, 'Unprocessable Entity');
    expect((await get(intruder.token, created.body.id)).body.credentials.phoneNumberId).toBe(mine.phoneNumberId);
    expect(await phoneNumberIdRows(theirs.phoneNumberId)).toBe(0);
  });

  test('when the platform cannot be asked, creation is 502 and no connection is stored', async () => {
    const credentials = goodCredentials();
    const before = (await list(victim.token)).body.length;
    sim.outageNext(1);
    const res = await create(victim.token, { name: 'later', driver: 'cloud-api', credentials });
    expectStandardError(res, 502, 'Bad Gateway');
    expect(res.body.message).toContain('nothing was stored');
    expect((await list(victim.token)).body).toHaveLength(before);
    expect(await phoneNumberIdRows(credentials.phoneNumberId)).toBe(0);
    // Once it answers again, the same request succeeds.
    expect((await create(victim.token, { name: 'later', driver: 'cloud-api', credentials })).status).toBe(201);
  });
});

describe('roles (spec 2.14: "Connections, integrations, webhooks | yes | yes | yes | no"; "Read the workspace | yes | yes | yes | yes")', () => {
  let owner: Owner;
  let manager: { token: string };
  let agent: { token: string };
  let id: string;

  beforeAll(async () => {
    owner = await service.bootstrap({ plan: 'PRO' });
    manager = await memberWithToken(service, owner, 'MANAGER');
    agent = await memberWithToken(service, owner, 'AGENT');
    id = (await create(owner.token, { name: 'team line' })).body.id;
  }, HOOK_TIMEOUT);

  test('an Agent may list and read connections (workspace read) but not create, change, pair or delete them', async () => {
    const listed = await list(agent.token);
    expect(listed.status).toBe(200);
    expect(listed.body.map((c: any) => c.id)).toEqual([id]);
    expect((await get(agent.token, id)).status).toBe(200);
    // Spec 7.2: "role denied | `Insufficient account permissions` | 403".
    const denied = [
      await create(agent.token, { name: 'mine' }),
      await service.call('PATCH', `/v3/connections/${id}`, { apikey: agent.token, body: { name: 'mine' } }),
      await action(agent.token, id, 'connect'),
      await action(agent.token, id, 'disconnect'),
      await action(agent.token, id, 'logout'),
      await service.call('DELETE', `/v3/connections/${id}`, { apikey: agent.token }),
    ];
    for (const res of denied) {
      expectStandardError(res, 403, 'Forbidden');
      expect(res.body.message).toBe('Insufficient account permissions');
    }
    const after = (await list(owner.token)).body;
    expect(after.map((c: any) => [c.id, c.name, c.status])).toEqual([[id, 'team line', 'DISCONNECTED']]);
  });

  test('a Manager can create, pair and delete connections', async () => {
    const created = await create(manager.token, { name: 'manager line' });
    expect(created.status).toBe(201);
    const connected = await action(manager.token, created.body.id, 'connect');
    expect(connected.body.status).toBe('CONNECTED');
    expect((await service.call('DELETE', `/v3/connections/${created.body.id}`, { apikey: manager.token })).status).toBe(200);
  });

  test('without an API key: 401', async () => {
    // Spec 7.1: "401 | API key missing, wrong or revoked".
    expectStandardError(await service.call('GET', '/v3/connections'), 401, 'Unauthorized');
    expectStandardError(await service.call('POST', '/v3/connections', { body: { name: 'x' } }), 401, 'Unauthorized');
  });
});
