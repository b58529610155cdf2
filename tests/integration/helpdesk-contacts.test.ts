import { beforeAll, describe, expect, test } from 'bun:test';
import { type Owner, useTestService, useOwner } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT, useMember, UUID } from './helpers.ts';

/** Helpdesk contacts (issue 6 items 2 and 4; spec 2.2, 4.6, 5.4, 7.2). */

const service = useTestService();
const owner = useOwner(service, { plan: 'PRO' });
const other = useOwner(service, { plan: 'PRO' });
const free = useOwner(service, { plan: 'FREE' });
const agent = useMember(service, owner, 'AGENT');

const create = (body: unknown, apikey = owner.token) => service.call('POST', '/v3/helpdesk/contacts', { apikey, body });
const list = (query: string, apikey = owner.token) => service.call('GET', `/v3/helpdesk/contacts${query}`, { apikey });

describe('contacts', () => {
  test('POST creates a contact with its phone normalised to E.164; GET reads it', async () => {
    const res = await create({ name: 'Ana Souza', phone: '+55 (11) 98888-7777', email: 'Ana@Example.com', customAttributes: { plan: 'gold', seats: 3 } });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(UUID);
    expect(res.body).toMatchObject({ name: 'Ana Souza', phone: '+5511988887777', email: 'ana@example.com', customAttributes: { plan: 'gold', seats: 3 } });
    const read = await service.call('GET', `/v3/helpdesk/contacts/${res.body.id}`, { apikey: owner.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    // Not visible from another workspace.
    expectStandardError(await service.call('GET', `/v3/helpdesk/contacts/${res.body.id}`, { apikey: other.token }), 404, 'Not Found');
    expectStandardError(await service.call('GET', '/v3/helpdesk/contacts/not-a-uuid', { apikey: owner.token }), 404, 'Not Found');
  });

  test('a phone already used in the workspace is 409, whatever its spelling; another workspace may use it', async () => {
    expect((await create({ name: 'First', phone: '+44 20 7946 0001' })).status).toBe(201);
    expectStandardError(await create({ name: 'Second', phone: '00442079460001' }), 409, 'Conflict');
    expectStandardError(await create({ name: 'Third', phone: '442079460001' }), 409, 'Conflict');
    expect((await create({ name: 'Elsewhere', phone: '+442079460001' }, other.token)).status).toBe(201);

    // PATCH onto a taken phone is 409 too; onto its own phone is fine.
    const b = await create({ name: 'B', phone: '+442079460002' });
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/contacts/${b.body.id}`, { apikey: owner.token, body: { phone: '+442079460001' } }), 409, 'Conflict');
    const same = await service.call('PATCH', `/v3/helpdesk/contacts/${b.body.id}`, { apikey: owner.token, body: { phone: '+44 20 7946 0002', name: 'B2' } });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ name: 'B2', phone: '+442079460002' });
  });

  test('validation: a bad phone or email, or no name, phone or email at all, is 400', async () => {
    const bad = await create({ phone: 'call me', email: 'nope' });
    expectStandardError(bad, 400, 'Bad Request');
    expect(bad.body.message.length).toBeGreaterThanOrEqual(2);
    expectStandardError(await create({}), 400, 'Bad Request');
    expectStandardError(await create({ phone: '123@s.whatsapp.net' }), 400, 'Bad Request');
  });

  test('PATCH keeps what is left out, clears with null, replaces customAttributes', async () => {
    const c = await create({ name: 'Patchy', email: 'patchy@example.com', customAttributes: { a: 1 } });
    const res = await service.call('PATCH', `/v3/helpdesk/contacts/${c.body.id}`, { apikey: owner.token, body: { email: null, phone: '+1 415 555 0100', customAttributes: { b: 2 } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Patchy', email: null, phone: '+14155550100', customAttributes: { b: 2 } });
    expect((await service.call('GET', `/v3/helpdesk/contacts/${c.body.id}`, { apikey: owner.token })).body).toEqual(res.body);
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/contacts/${crypto.randomUUID()}`, { apikey: owner.token, body: { name: 'x' } }), 404, 'Not Found');
  });
});

describe('listing: page envelope and `s`', () => {
  let ws: Owner;
  beforeAll(async () => {
    ws = await service.bootstrap({ plan: 'PRO' });
    const people = [
      { name: 'Carla Mendes', phone: '+5511911110001', email: 'carla@acme.test' },
      { name: 'Bruno Lima', phone: '+5511911110002', email: 'bruno@globex.test' },
      { name: 'Diego Alves', phone: '+351912345678', email: 'diego@acme.test' },
      { name: 'Eva Rocha', email: 'eva@initech.test' },
      { name: 'Fabio Costa', phone: '+14155550199' },
    ];
    for (const p of people) expect((await create(p, ws.token)).status).toBe(201);
  }, HOOK_TIMEOUT);

  test('page and per_page; pages do not overlap', async () => {
    const first = await list('?per_page=2', ws.token);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 5, totalPages: 3, currentPage: 1, perPage: 2 });
    const seen = new Set<string>();
    for (const page of [1, 2, 3]) {
      const res = await list(`?per_page=2&page=${page}`, ws.token);
      for (const c of res.body.data) seen.add(c.id);
    }
    expect(seen.size).toBe(5);
    expect((await list('?perPage=1&search=zzz', ws.token)).body).toMatchObject({ total: 5, perPage: 10 });
    expectStandardError(await list('?page=0&per_page=1000', ws.token), 400, 'Bad Request');
  });

  test('`s` searches name, email and phone', async () => {
    const names = async (s: string) => (await list(`?s=${encodeURIComponent(s)}`, ws.token)).body.data.map((c: any) => c.name).sort();
    expect(await names('bruno')).toEqual(['Bruno Lima']);
    expect(await names('acme.test')).toEqual(['Carla Mendes', 'Diego Alves']);
    expect(await names('+55119111')).toEqual(['Bruno Lima', 'Carla Mendes']);
    expect(await names('351 912')).toEqual(['Diego Alves']);
    expect(await names('initech')).toEqual(['Eva Rocha']);
    expect(await names('nobody-here')).toEqual([]);
    const counted = await list('?s=acme&per_page=1', ws.token);
    expect(counted.body).toMatchObject({ total: 2, totalPages: 2, perPage: 1 });
  });
});

describe('permissions and plan', () => {
  test('an Agent reads and writes contacts ("Helpdesk: reply, assign, label")', async () => {
    const res = await create({ name: 'From agent', phone: '+5521977776666' }, agent.token);
    expect(res.status).toBe(201);
    expect((await list('?s=From agent', agent.token)).body.total).toBe(1);
    expect((await service.call('PATCH', `/v3/helpdesk/contacts/${res.body.id}`, { apikey: agent.token, body: { name: 'Edited by agent' } })).body.name).toBe('Edited by agent');
  });

  test('a FREE workspace: writes are 403 HELPDESK_PLAN_REQUIRED, reads work', async () => {
    const refused = await create({ name: 'Free person' }, free.token);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ message: 'HELPDESK_PLAN_REQUIRED', hint: 'The helpdesk is available on the PRO plan' });
    const read = await list('', free.token);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ data: [], total: 0 });

    // A contact made while PRO stays readable after a downgrade; PATCH stops.
    const ws = await service.bootstrap({ plan: 'PRO' });
    const c = await create({ name: 'Kept' }, ws.token);
    await service.runtime.ctx.db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', ws.workspaceId).execute();
    expect((await service.call('GET', `/v3/helpdesk/contacts/${c.body.id}`, { apikey: ws.token })).status).toBe(200);
    const patch = await service.call('PATCH', `/v3/helpdesk/contacts/${c.body.id}`, { apikey: ws.token, body: { name: 'Changed' } });
    expect(patch.status).toBe(403);
    expect(patch.body.message).toBe('HELPDESK_PLAN_REQUIRED');
    expect((await service.call('GET', `/v3/helpdesk/contacts/${c.body.id}`, { apikey: ws.token })).body.name).toBe('Kept');
  });

  test('without a credential: 401', async () => {
    expectStandardError(await service.call('GET', '/v3/helpdesk/contacts'), 401, 'Unauthorized');
  });
});
