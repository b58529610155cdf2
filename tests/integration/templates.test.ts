import { beforeAll, describe, expect, test } from 'bun:test';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { teachTemplates, type TemplateSimulator } from '../support/graph-simulator-templates.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { waitUntil } from '../support/wait.ts';
import { officialConnection } from '../support/official-connection.ts';
import { expectStandardError, HOOK_TIMEOUT, UUID } from './helpers.ts';

/**
 * Templates on an official connection end to end against the Graph simulator (issue 9 item 1;
 * spec 3.5: "Creation returns `PENDING`; polling `GET /templates/{templateId}` reaches
 * `APPROVED`; a `rejected_reason` field explains a rejection"; spec 4.3 rows header-media,
 * send-media, send-template).
 */

let platform: TemplateSimulator;
let connectionId: string;
let sandboxId: string;

// The contacts' phones stay offline: after a send the platform posts `sent` only, so a send is SENT where tests look.
const sim = useGraphSimulator({ statusCallbacks: { upTo: 'sent' } });

beforeAll(() => {
  platform = teachTemplates(sim);
});

const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  ({ connectionId } = await officialConnection(service, sim, owner.token));
  sandboxId = (await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'sandbox' } })).body.id;
}, HOOK_TIMEOUT);

const base = () => `/v3/connections/${connectionId}/templates`;
const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });

let counter = 0;
const uniqueName = (prefix: string) => `${prefix}_${Date.now() % 100_000}_${++counter}`;

const orderTemplate = (name: string) => ({
  name,
  language: 'en_US',
  category: 'UTILITY',
  components: [
    { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}' },
    { type: 'BODY', text: 'Hi {{1}}, your order {{2}} ships today.', example: { body_text: [['Dana', '42']] } },
    { type: 'FOOTER', text: 'Switchboard' },
    {
      type: 'BUTTONS',
      buttons: [
        { type: 'URL', text: 'Track', url: 'https://example.com/track/{{1}}' },
        { type: 'QUICK_REPLY', text: 'Stop' },
      ],
    },
  ],
});

async function createPending(name = uniqueName('order')) {
  const res = await call('POST', base(), orderTemplate(name));
  expect(res.status).toBe(201);
  return res.body;
}

async function upload(path: string, bytes: Uint8Array, type: string, fileName = 'file.jpg') {
  const form = new FormData();
  form.append('file', new File([bytes as Uint8Array<ArrayBuffer>], fileName, { type }));
  const response = await fetch(`${service.url}${path}`, { method: 'POST', headers: { apikey: owner.token }, body: form });
  return { status: response.status, body: (await response.json()) as any };
}

const waitFor = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => waitUntil(read, done, { timeout: 10_000 });

const stored = (id: string) => service.runtime.ctx.db.selectFrom('templates').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('create, list, approval', () => {
  test('create answers the template PENDING, with the platform id; the list shows it', async () => {
    const template = await createPending();
    expect(template.id).toMatch(UUID);
    expect(template).toMatchObject({ connectionId, status: 'PENDING', rejected_reason: null, category: 'UTILITY', language: 'en_US' });
    expect(platform.templates.get(template.externalId)?.status).toBe('PENDING');
    expect(sim.log).toContain(`POST /v23.0/${sim.businessAccountId}/message_templates`);

    const list = await call('GET', `${base()}?per_page=100`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ currentPage: 1, perPage: 100 });
    expect(list.body.data.map((t: any) => t.id)).toContain(template.id);
    const searched = await call('GET', `${base()}?s=${template.name}`);
    expect(searched.body.data.map((t: any) => t.id)).toEqual([template.id]);
  });

  test('the signed status callback moves it to APPROVED', async () => {
    const template = await createPending();
    const answer = await platform.approve(template.externalId);
    expect(answer.status).toBe(200);
    expect((await stored(template.id)).status).toBe('APPROVED');
  });

  test('polling GET reads the platform: APPROVED without any callback', async () => {
    const template = await createPending();
    platform.setStatus(template.externalId, 'APPROVED');
    expect((await stored(template.id)).status).toBe('PENDING');
    const got = await call('GET', `${base()}/${template.id}`);
    expect(got.status).toBe(200);
    expect(got.body.status).toBe('APPROVED');
    expect((await stored(template.id)).status).toBe('APPROVED');
    // The platform's id is accepted as {templateId} too.
    expect((await call('GET', `${base()}/${template.externalId}`)).body.id).toBe(template.id);
  });

  test('a rejection shows rejected_reason, by callback and by polling', async () => {
    const byCallback = await createPending();
    await platform.reject(byCallback.externalId, 'INVALID_FORMAT');
    expect(await stored(byCallback.id)).toMatchObject({ status: 'REJECTED', rejected_reason: 'INVALID_FORMAT' });

    const byPolling = await createPending();
    platform.setStatus(byPolling.externalId, 'REJECTED', 'PROMOTIONAL');
    const got = await call('GET', `${base()}/${byPolling.id}`);
    expect(got.body).toMatchObject({ status: 'REJECTED', rejected_reason: 'PROMOTIONAL' });
  });

  test('a late callback the transition table does not allow is ignored (PAUSED stays PAUSED on a stale PENDING)', async () => {
    const template = await createPending();
    await platform.approve(template.externalId);
    await platform.pause(template.externalId);
    expect((await stored(template.id)).status).toBe('PAUSED');
    await platform.replay(template.externalId, 'PENDING');
    expect((await stored(template.id)).status).toBe('PAUSED');
  });

  test('delete removes it on the platform and here', async () => {
    const template = await createPending();
    const res = await call('DELETE', `${base()}/${template.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: template.id, deleted: true });
    expect(platform.templates.has(template.externalId)).toBe(false);
    expect((await call('GET', `${base()}/${template.id}`)).status).toBe(404);
  });
});

describe('definition errors', () => {
  test('every problem of a definition at once, in the standard shape; nothing reaches the platform', async () => {
    const before = sim.log.length;
    const res = await call('POST', base(), {
      name: 'Bad Name',
      language: 'english',
      category: 'PROMO',
      components: [
        { type: 'header', format: 'TEXT', text: 'x' },
        { type: 'BODY', text: 'Hi {{1}} and {{3}}' },
        { type: 'HEADER', format: 'IMAGE' },
        { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Go', url: 'ftp://x' }] },
        { type: 'POLL' },
      ],
    });
    expectStandardError(res, 400, 'Bad Request');
    const messages: string[] = res.body.message;
    for (const fragment of ['body.name', 'body.language', 'body.category', 'components[0].type: definition casing is upper case', 'without gaps', 'example.header_handle', 'buttons[0].url', 'unknown component type POLL']) {
      expect({ fragment, found: messages.some((m) => m.includes(fragment)) }).toEqual({ fragment, found: true });
    }
    expect(sim.log.slice(before).some((line) => line.includes('message_templates'))).toBe(false);
  });

  test('the same name and language twice is 409', async () => {
    const template = await createPending();
    expectStandardError(await call('POST', base(), orderTemplate(template.name)), 409, 'Conflict');
  });

  test('templates on a connection whose network has none are 422', async () => {
    expectStandardError(await call('GET', `/v3/connections/${sandboxId}/templates`), 422, 'Unprocessable Entity');
    expectStandardError(await call('POST', `/v3/connections/${sandboxId}/templates`, orderTemplate('x_sandbox')), 422, 'Unprocessable Entity');
  });
});

describe('media', () => {
  const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, ...Array.from({ length: 64 }, (_, i) => i)]);

  test('header-media: the resumable upload answers a permanent handle, usable as example.header_handle', async () => {
    const res = await upload(`${base()}/header-media`, jpeg, 'image/jpeg');
    expect(res.status).toBe(201);
    expect(res.body.handle).toMatch(/^4::/);
    expect(platform.handles.get(res.body.handle)?.bytes).toEqual(jpeg);
    expect(sim.log).toContain('GET /v23.0/app');
    expect(sim.log).toContain(`POST /v23.0/${platform.appId}/uploads`);

    const created = await call('POST', base(), {
      name: uniqueName('with_image'),
      language: 'en',
      category: 'MARKETING',
      components: [
        { type: 'HEADER', format: 'IMAGE', example: { header_handle: [res.body.handle] } },
        { type: 'BODY', text: 'Look at this' },
      ],
    });
    expect(created.status).toBe(201);
  });

  test('send-media answers a media id of the number, valid about 30 days', async () => {
    const before = Date.now();
    const res = await upload(`${base()}/send-media`, jpeg, 'image/jpeg');
    expect(res.status).toBe(201);
    expect(sim.media.get(res.body.mediaId)?.bytes).toEqual(jpeg);
    const days = (Date.parse(res.body.expiresAt) - before) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
  });

  test('a JPEG over the network\'s image limit (5 MB) is 413 naming it, for header-media and send-media (core/media/media-limits.ts); exactly 5 MB is taken', async () => {
    const uploads = sim.media.size;
    for (const route of ['header-media', 'send-media']) {
      const over = await upload(`${base()}/${route}`, new Uint8Array(5 * 1024 * 1024 + 1), 'image/jpeg');
      expectStandardError(over, 413, 'Payload Too Large');
      expect(over.body.message).toBe('image larger than 5 MB (5242880 bytes)');
    }
    expect(sim.media.size).toBe(uploads);
    expect((await upload(`${base()}/send-media`, new Uint8Array(5 * 1024 * 1024), 'image/jpeg')).status).toBe(201);
  }, 60_000);

  test('an upload of the wrong type, or without a file, is 400', async () => {
    expectStandardError(await upload(`${base()}/header-media`, new Uint8Array([1, 2, 3]), 'text/plain', 'a.txt'), 400, 'Bad Request');
    expectStandardError(await call('POST', `${base()}/send-media`, { file: 'x' }), 400, 'Bad Request');
  });
});

describe('send-template', () => {
  const sendTemplate = (body: Record<string, unknown>) => call('POST', `/v3/connections/${connectionId}/chats/messages/send-template`, body);
  const to = '447700900123';

  const goodComponents = [
    { type: 'header', parameters: [{ type: 'text', text: '42' }] },
    { type: 'body', parameters: [{ type: 'text', text: 'Dana' }, { type: 'text', text: '42' }] },
    { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'text', text: 'abc' }] },
  ];

  test('an APPROVED template with fitting variables: 201, and the platform accepted the call', async () => {
    const template = await createPending();
    await platform.approve(template.externalId);
    const res = await sendTemplate({ to, name: template.name, language: 'en_US', components: goodComponents });
    expect(res.status).toBe(201);
    const message = await waitFor(
      () => call('GET', `/v3/connections/${connectionId}/chats/messages/${res.body.id}`),
      (r) => r.body.status !== 'PENDING',
    );
    expect(message.body.status).toBe('SENT');
    expect(sim.sent.find((m) => m.id === message.body.externalId)?.body.template.name).toBe(template.name);
  });

  test('variables that do not fit the template: 400 with every problem at once, nothing sent', async () => {
    const template = await createPending();
    await platform.approve(template.externalId);
    const sentBefore = sim.sent.length;
    const res = await sendTemplate({
      to,
      name: template.name,
      language: 'en_US',
      components: [
        { type: 'header', parameters: [{ type: 'image', image: { id: '1' } }] },
        { type: 'body', parameters: [{ type: 'text', text: 'only one' }] },
        { type: 'button', sub_type: 'quick_reply', index: 5, parameters: [{ type: 'payload', payload: 'x' }] },
      ],
    });
    expectStandardError(res, 400, 'Bad Request');
    const messages: string[] = res.body.message;
    expect(messages.some((m) => m.includes('components[1].parameters') && m.includes('2 variable(s), 1 parameter(s) given'))).toBe(true);
    expect(messages.some((m) => m.includes('components[0].parameters'))).toBe(true);
    expect(messages.some((m) => m.includes('components[2].index'))).toBe(true);
    expect(messages.some((m) => m.includes('URL button 0 needs a button component'))).toBe(true);
    expect(sim.sent.length).toBe(sentBefore);
  });

  test('a template not APPROVED is refused with 422', async () => {
    const pending = await createPending();
    expectStandardError(await sendTemplate({ to, name: pending.name, language: 'en_US', components: goodComponents }), 422, 'Unprocessable Entity');
    const rejected = await createPending();
    await platform.reject(rejected.externalId, 'SCAM');
    expectStandardError(await sendTemplate({ to, name: rejected.name, language: 'en_US', components: goodComponents }), 422, 'Unprocessable Entity');
  });

  test('a template unknown here goes to the platform, which refuses it with 132001: the message FAILS', async () => {
    const res = await sendTemplate({ to, name: 'never_created', language: 'en_US' });
    expect(res.status).toBe(201);
    const message = await waitFor(
      () => call('GET', `/v3/connections/${connectionId}/chats/messages/${res.body.id}`),
      (r) => r.body.status !== 'PENDING',
    );
    expect(message.body.status).toBe('FAILED');
    expect(message.body.error.code).toBe(132001);
  });
});

describe('the list reads the platform (templates made elsewhere)', () => {
  const listCalls = () => sim.log.filter((line) => line.startsWith(`GET /v23.0/${sim.businessAccountId}/message_templates`)).length;
  const elsewhere = (name: string, status = 'APPROVED') =>
    platform.addElsewhere({ name, language: 'en_US', category: 'MARKETING', status, components: [{ type: 'BODY', text: 'Hi {{1}}, your code is {{2}}', example: { body_text: [['Dana', '42']] } }] });
  const listed = async (query = '?per_page=100') => (await call('GET', `${base()}${query}`)).body;
  const sendTemplate = (body: Record<string, unknown>) => call('POST', `/v3/connections/${connectionId}/chats/messages/send-template`, body);
  const to = '447700900123';

  test('a template made in the platform’s own manager appears on the first page with its status, and send-template holds sends to it', async () => {
    const made = elsewhere(uniqueName('promo'));
    const page = await listed(`?s=${made.name}`);
    expect(page.data).toHaveLength(1);
    expect(page.data[0]).toMatchObject({ externalId: made.id, name: made.name, status: 'APPROVED', category: 'MARKETING' });
    expect(page.data[0].id).toMatch(UUID);
    // Known now: its variables are checked before the call goes out.
    const misfit = await sendTemplate({ to, name: made.name, language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: 'Dana' }] }] });
    expect(misfit.status).toBe(400);
  });

  test('a status changed on the platform without any callback shows on the next list; a template deleted there leaves it', async () => {
    const made = elsewhere(uniqueName('status'), 'PENDING');
    const first = (await listed(`?s=${made.name}`)).data[0];
    expect(first.status).toBe('PENDING');
    platform.setStatus(made.id, 'REJECTED', 'INVALID_FORMAT');
    expect((await listed(`?s=${made.name}`)).data[0]).toMatchObject({ id: first.id, status: 'REJECTED', rejected_reason: 'INVALID_FORMAT' });
    platform.templates.delete(made.id);
    expect((await listed(`?s=${made.name}`)).data).toEqual([]);
    expect((await call('GET', `${base()}/${first.id}`)).status).toBe(404);
  });

  test('a status this service does not keep (ARCHIVED) leaves the last known one', async () => {
    const made = elsewhere(uniqueName('archived'));
    expect((await listed(`?s=${made.name}`)).data[0].status).toBe('APPROVED');
    platform.setStatus(made.id, 'ARCHIVED');
    expect((await listed(`?s=${made.name}`)).data[0].status).toBe('APPROVED');
  });

  test('the platform’s list is read page by page (cursor paging); later pages of ours do not call the platform', async () => {
    const prefix = uniqueName('bulk');
    for (let i = 0; i < 130; i++) elsewhere(`${prefix}_${i}`);
    const before = listCalls();
    const first = await listed(`?s=${prefix}&per_page=50`);
    expect(first.total).toBe(130);
    expect(listCalls() - before).toBeGreaterThanOrEqual(2);
    const calls = listCalls();
    const second = await listed(`?s=${prefix}&per_page=50&page=2`);
    expect(second.data).toHaveLength(50);
    expect(listCalls()).toBe(calls);
    const ids = new Set([...first.data, ...second.data].map((t: any) => t.id));
    expect(ids.size).toBe(100);
  });

  test('with the platform unreachable the list answers what is known, and removes nothing', async () => {
    const known = elsewhere(uniqueName('known'));
    expect((await listed(`?s=${known.name}`)).data).toHaveLength(1);
    platform.setListOutage(true);
    try {
      platform.templates.delete(known.id);
      const during = await call('GET', `${base()}?s=${known.name}`);
      expect(during.status).toBe(200);
      expect(during.body.data.map((t: any) => t.externalId)).toEqual([known.id]);
    } finally {
      platform.setListOutage(false);
    }
    expect((await listed(`?s=${known.name}`)).data).toEqual([]);
  });
});
