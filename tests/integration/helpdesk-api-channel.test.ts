import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { useTestService, useOwner } from '../support/service.ts';
import { connectionInbox, eventually, helpdeskEvents, messageWhen, setInboxMembers, workerSettled, type Member, type Owner } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * The helpdesk API channel (issue 6 item 5; spec 2.10, 3.2, 4.5, 5.6, 6.6): the customer's own
 * app pushes its users' messages into an API inbox at `POST /webhooks/helpdesk/{inboxId}` (no
 * apikey; `x-helpdesk-token` or `x-helpdesk-signature`), agents reply, and each reply is POSTed
 * signed to the inbox's `channelConfig.webhookUrl`; the app answers `{ sourceId }` and later
 * reports statuses by that id.
 *
 * Spec 5.6: "`x-helpdesk-token` or `x-helpdesk-signature`; with `channelConfig.hmacMandatory:
 * true` one of them is required; when false or omitted a request with neither is accepted; a
 * credential that is present but invalid is always rejected".
 * Spec 6.6: "each outgoing message is POSTed signed with the same secret: `{ event:
 * "message.created", data: { sourceId, recipientIdentifier, content, attachments: [] },
 * deliveredAt }`. The endpoint may answer `{ sourceId: <own id> }`, which the service remembers
 * for that message so later `status_update` calls can refer to it."
 */

/** The customer's app: records every POST (raw bytes, headers) and answers per path. */
interface Received {
  path: string;
  at: number;
  raw: string;
  headers: Headers;
  json: any;
  /** The id the app answered (`{ sourceId }`), if it did. */
  answered?: string;
}
let received: Received[] = [];
let appCounter = 0;
const app = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const raw = await request.text();
    const path = new URL(request.url).pathname;
    const hit: Received = { path, at: Date.now(), raw, headers: request.headers, json: JSON.parse(raw) };
    received.push(hit);
    if (path === '/fail') return new Response('down for maintenance', { status: 500 });
    if (path === '/plain') return new Response(null, { status: 204 });
    appCounter += 1;
    hit.answered = `ext-${appCounter}`;
    return Response.json({ sourceId: hit.answered });
  },
});
const appUrl = (path: string) => `http://127.0.0.1:${app.port}${path}`;
const hitsOf = (path: string) => received.filter((r) => r.path === path);

let agent: Member;
let outsider: Member;
/** API inbox, signatures optional, replies to /ok. */
let open: { id: string; secret: string };
/** API inbox, hmacMandatory, replies to /fail. */
let strict: { id: string; secret: string };
let connectionInboxId: string;

async function apiInbox(apikey: string, body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const res = await service.call('POST', '/v3/helpdesk/inboxes', { apikey, body: { channelType: 'API', ...body } });
  expect(res.status).toBe(201);
  return { id: res.body.id, secret: res.body.inboundWebhookSecret };
}

const service = useTestService();
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  agent = await memberWithToken(service, owner, 'AGENT');
  outsider = await memberWithToken(service, owner, 'AGENT');
  open = await apiInbox(owner.token, { name: 'Shop app', webhookUrl: appUrl('/ok') });
  strict = await apiInbox(owner.token, { name: 'Strict app', webhookUrl: appUrl('/fail'), hmacMandatory: true });
  await setInboxMembers(service, owner.token, open.id, [agent.userId]);
  const connection = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'line' } });
  connectionInboxId = await connectionInbox(service, owner.token, 'Line', connection.body.id);
}, HOOK_TIMEOUT);

afterAll(async () => {
  app.stop(true);
}, HOOK_TIMEOUT);

const sign = (secret: string, raw: string) => createHmac('sha256', secret).update(raw).digest('hex');

/** A push as the app sends it: the raw text is what gets signed. */
function push(inboxId: string, body: unknown, headers: Record<string, string> = {}) {
  return service.call('POST', `/webhooks/helpdesk/${inboxId}`, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
}

const message = (sourceId: string, email: string, content = `hello from ${email}`, sender: Record<string, unknown> = {}) => ({ sourceId, content, sender: { name: 'Ana Souza', email, ...sender } });
const messages = (id: string, apikey = owner.token) => service.call('GET', `/v3/helpdesk/conversations/${id}/messages?limit=100`, { apikey });
const reply = (id: string, content: string, apikey = owner.token, extra: Record<string, unknown> = {}) =>
  service.call('POST', `/v3/helpdesk/conversations/${id}/messages`, { apikey, body: { content, ...extra } });

async function statusEvents(messageId: string): Promise<any[]> {
  return (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.message.status_changed')).filter((d: any) => d.messageId === messageId);
}

describe('inbound credentials (spec 5.6)', () => {
  test('x-helpdesk-token: 201 with the ids; the contact is made from the sender and a conversation opens in the inbox', async () => {
    const res = await push(open.id, message('app-msg-1', 'ana@shop.example', 'Where is my order?'), { 'x-helpdesk-token': open.secret });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['contactId', 'conversationId', 'messageId']);
    for (const id of Object.values(res.body)) expect(id).toMatch(UUID);

    const list = await service.call('GET', `/v3/helpdesk/conversations?inboxId=${open.id}`, { apikey: owner.token });
    const conversation = list.body.data.find((c: any) => c.id === res.body.conversationId);
    expect(conversation).toMatchObject({ inboxId: open.id, contactId: res.body.contactId, status: 'OPEN' });
    const shown = await messages(res.body.conversationId);
    expect(shown.body).toHaveLength(1);
    expect(shown.body[0]).toMatchObject({ id: res.body.messageId, direction: 'incoming', content: 'Where is my order?', status: null });
    const contact = await service.call('GET', `/v3/helpdesk/contacts/${res.body.contactId}`, { apikey: owner.token });
    expect(contact.body).toMatchObject({ name: 'Ana Souza', email: 'ana@shop.example', phone: null });
  });

  test('x-helpdesk-signature over the raw body (hex, or sha256=hex) is accepted; the same person joins the same conversation', async () => {
    const first = JSON.stringify(message('app-msg-2', 'ANA@shop.example', 'Any news?'));
    const a = await push(open.id, first, { 'x-helpdesk-signature': sign(open.secret, first) });
    expect(a.status).toBe(201);
    // Spacing is part of the raw body: the signature covers the bytes sent, not a re-serialisation.
    const second = `{ "sourceId": "app-msg-3",  "content": "Hello?", "sender": { "email": "ana@shop.example" } }`;
    const b = await push(open.id, second, { 'x-helpdesk-signature': `sha256=${sign(open.secret, second)}` });
    expect(b.status).toBe(201);
    const firstPush = await push(open.id, message('app-msg-1', 'ana@shop.example', 'Where is my order?'), { 'x-helpdesk-token': open.secret });
    expect(a.body.conversationId).toBe(firstPush.body.conversationId);
    expect(b.body.contactId).toBe(a.body.contactId);
    expect((await messages(a.body.conversationId)).body.map((m: any) => m.content)).toEqual(['Where is my order?', 'Any news?', 'Hello?']);
  });

  test('no credential: accepted when hmacMandatory is false, 401 when it is true', async () => {
    expect((await push(open.id, message('app-msg-4', 'bruno@shop.example'))).status).toBe(201);
    const refused = await push(strict.id, message('strict-1', 'bruno@shop.example'));
    expectStandardError(refused, 401, 'Unauthorized');
    expect(refused.body.message).toMatch(/x-helpdesk-token|x-helpdesk-signature/);
    // With a credential the strict inbox takes it.
    const body = JSON.stringify(message('strict-1', 'bruno@shop.example'));
    expect((await push(strict.id, body, { 'x-helpdesk-signature': sign(strict.secret, body) })).status).toBe(201);
    expect((await push(strict.id, message('strict-2', 'bruno@shop.example'), { 'x-helpdesk-token': strict.secret })).status).toBe(201);
  });

  test('a credential that is present but wrong is always 401, and stores nothing', async () => {
    const body = JSON.stringify(message('bad-1', 'carla@shop.example'));
    const cases: Array<[string, Record<string, string>]> = [
      ['wrong token (inbox not mandatory)', { 'x-helpdesk-token': 'hdsec_wrong' }],
      ['another inbox\'s token', { 'x-helpdesk-token': strict.secret }],
      ['empty token', { 'x-helpdesk-token': '' }],
      ['signature with another key', { 'x-helpdesk-signature': sign(strict.secret, body) }],
      ['signature of another body', { 'x-helpdesk-signature': sign(open.secret, `${body} `) }],
      ['garbage signature', { 'x-helpdesk-signature': 'sha256=zz' }],
      ['right token, wrong signature', { 'x-helpdesk-token': open.secret, 'x-helpdesk-signature': sign(open.secret, 'other') }],
    ];
    for (const [what, headers] of cases) {
      const res = await push(open.id, body, headers);
      expect({ what, status: res.status }).toEqual({ what, status: 401 });
      expectStandardError(res, 401, 'Unauthorized');
    }
    expectStandardError(await push(strict.id, body, { 'x-helpdesk-token': open.secret }), 401, 'Unauthorized');
    const contacts = await service.call('GET', '/v3/helpdesk/contacts?s=carla', { apikey: owner.token });
    expect(contacts.body.data).toEqual([]);
  });

  test('unknown inbox, a malformed id and a CONNECTION inbox are 404', async () => {
    expectStandardError(await push(crypto.randomUUID(), message('x', 'x@shop.example'), { 'x-helpdesk-token': open.secret }), 404, 'Not Found');
    expectStandardError(await push('not-an-id', message('x', 'x@shop.example')), 404, 'Not Found');
    expectStandardError(await push(connectionInboxId, message('x', 'x@shop.example')), 404, 'Not Found');
  });

  test('a replayed push stores nothing twice and answers the same', async () => {
    const body = message('replay-1', 'dora@shop.example', 'only once');
    const first = await push(open.id, body, { 'x-helpdesk-token': open.secret });
    const again = await push(open.id, body, { 'x-helpdesk-token': open.secret });
    // Replays at once, side by side, as a retrying app might send them.
    const burst = await Promise.all([1, 2, 3].map(() => push(open.id, body, { 'x-helpdesk-token': open.secret })));
    expect(first.status).toBe(201);
    for (const res of [again, ...burst]) {
      expect(res.status).toBe(201);
      expect(res.body).toEqual(first.body);
    }
    expect((await messages(first.body.conversationId)).body.filter((m: any) => m.content === 'only once')).toHaveLength(1);
    // The same sourceId in another inbox is another message.
    const elsewhere = await push(strict.id, body, { 'x-helpdesk-token': strict.secret });
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.messageId).not.toBe(first.body.messageId);
  });

  test('bad bodies are 400 listing every problem', async () => {
    const auth = { 'x-helpdesk-token': open.secret };
    const empty = await push(open.id, {}, auth);
    expectStandardError(empty, 400, 'Bad Request');
    expect(empty.body.message.join('\n')).toMatch(/sourceId[\s\S]*content[\s\S]*sender/);
    const badEmail = await push(open.id, { sourceId: 's', content: 'x', sender: { email: 'not-an-email' } }, auth);
    expectStandardError(badEmail, 400, 'Bad Request');
    expect(badEmail.body.message).toEqual(['body.sender.email must be an email address']);
    expectStandardError(await push(open.id, 'not json', { ...auth, 'content-type': 'text/plain' }), 400, 'Bad Request');
    expectStandardError(await push(open.id, '[1]', auth), 400, 'Bad Request');
    const badStatus = await push(open.id, { event: 'status_update', sourceId: 'x', status: 'ARCHIVED' }, auth);
    expectStandardError(badStatus, 400, 'Bad Request');
    expect(badStatus.body.message).toEqual(['body.status must be one of SENT, DELIVERED, READ, FAILED']);
    expectStandardError(await push(open.id, { event: 'other', sourceId: 'x' }, auth), 400, 'Bad Request');
    // A bad credential is 401 before the body is looked at.
    expectStandardError(await push(open.id, {}, { 'x-helpdesk-token': 'nope' }), 401, 'Unauthorized');
  });
});

describe('replies go out to the app (spec 6.6) and come back with statuses', () => {
  let conversationId: string;
  let replyId: string;

  test('an agent replies: 201 PENDING at once; the app gets the signed POST, answers { sourceId }, the reply becomes SENT', async () => {
    const pushed = await push(open.id, message('round-1', 'eva@shop.example', 'Can I change my address?', { identifier: 'user-42' }), { 'x-helpdesk-token': open.secret });
    conversationId = pushed.body.conversationId;
    const before = received.length;
    const res = await reply(conversationId, 'Sure, send it here.', agent.token);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ direction: 'outgoing', private: false, content: 'Sure, send it here.', status: 'PENDING', externalError: null, senderUserId: agent.userId });
    replyId = res.body.id;

    const hit = await eventually(async () => received.slice(before).find((r) => r.json?.data?.sourceId === replyId), 'the POST to the app');
    expect(hit.path).toBe('/ok');
    expect(hit.headers.get('content-type')).toBe('application/json');
    // Signed over the raw body exactly as received, with the inbox's secret.
    expect(hit.headers.get('x-helpdesk-signature')).toBe(sign(open.secret, hit.raw));
    expect(Object.keys(hit.json).sort()).toEqual(['data', 'deliveredAt', 'event']);
    expect(hit.json.event).toBe('message.created');
    expect(hit.json.data).toEqual({ sourceId: replyId, recipientIdentifier: 'user-42', content: 'Sure, send it here.', attachments: [] });
    expect(new Date(hit.json.deliveredAt).toISOString()).toBe(hit.json.deliveredAt);

    const sent = await messageWhen(service, owner.token, conversationId, replyId, (m) => m.status === 'SENT');
    expect(sent.externalError).toBeNull();
    const events = await eventually(async () => ((await statusEvents(replyId)).length > 0 ? statusEvents(replyId) : undefined), 'status_changed');
    expect(events[0]).toMatchObject({ type: 'helpdesk.message.status_changed', messageId: replyId, toStatus: 'SENT', externalError: null, conversationId, inboxId: open.id });
    // One attempt: nothing is sent twice.
    await workerSettled(service);
    expect(received.filter((r) => r.json?.data?.sourceId === replyId)).toHaveLength(1);
  });

  test('status_update with the app\'s sourceId and READ → READ (GET messages shows it); a late DELIVERED changes nothing', async () => {
    const appId = received.find((r) => r.json?.data?.sourceId === replyId)!.answered!;
    expect(appId).toBe('ext-1');
    const read = await push(open.id, { event: 'status_update', sourceId: appId, status: 'READ' }, { 'x-helpdesk-token': open.secret });
    expect(read.status).toBe(201);
    expect(read.body).toEqual({ messageId: replyId, conversationId, status: 'READ', externalError: null });
    expect((await messages(conversationId)).body.find((m: any) => m.id === replyId)).toMatchObject({ status: 'READ', externalError: null });
    expect((await statusEvents(replyId)).map((e) => e.toStatus)).toEqual(['SENT', 'READ']);

    const late = await push(open.id, { event: 'status_update', sourceId: appId, status: 'DELIVERED' }, { 'x-helpdesk-token': open.secret });
    expect(late.status).toBe(201);
    expect(late.body.status).toBe('READ');
    expect((await statusEvents(replyId)).map((e) => e.toStatus)).toEqual(['SENT', 'READ']);
  });

  test('the reply\'s own id names it too; FAILED carries the app\'s error as externalError; unknown ids are 404', async () => {
    const res = await reply(conversationId, 'Second answer');
    const id = res.body.id;
    await messageWhen(service, owner.token, conversationId, id, (m) => m.status === 'SENT');
    const failed = await push(open.id, { event: 'status_update', sourceId: id, status: 'failed', error: 'user blocked the app' }, { 'x-helpdesk-token': open.secret });
    expect(failed.status).toBe(201);
    expect(failed.body).toMatchObject({ messageId: id, status: 'FAILED', externalError: 'user blocked the app' });
    expect((await messages(conversationId)).body.find((m: any) => m.id === id)).toMatchObject({ status: 'FAILED', externalError: 'user blocked the app' });
    expect((await statusEvents(id)).at(-1)).toMatchObject({ toStatus: 'FAILED', externalError: 'user blocked the app' });

    expectStandardError(await push(open.id, { event: 'status_update', sourceId: 'ext-nope', status: 'READ' }, { 'x-helpdesk-token': open.secret }), 404, 'Not Found');
    // An incoming message's id is not a reply; nor is a reply of another inbox.
    const incoming = (await messages(conversationId)).body.find((m: any) => m.direction === 'incoming');
    expectStandardError(await push(open.id, { event: 'status_update', sourceId: incoming.id, status: 'READ' }, { 'x-helpdesk-token': open.secret }), 404, 'Not Found');
    expectStandardError(await push(strict.id, { event: 'status_update', sourceId: id, status: 'READ' }, { 'x-helpdesk-token': strict.secret }), 404, 'Not Found');
  });

  test('a private note is stored and never POSTed', async () => {
    const before = received.length;
    const note = await reply(conversationId, 'internal: VIP customer', agent.token, { private: true });
    expect(note.status).toBe(201);
    expect(note.body.status).toBeNull();
    await workerSettled(service);
    expect(received.slice(before).filter((r) => r.json?.data?.sourceId === note.body.id)).toEqual([]);
  });

  test('without identifier the recipient is the sender\'s email; an app answering without { sourceId } still gives SENT', async () => {
    const inbox = await apiInbox(owner.token, { name: 'Plain app', webhookUrl: appUrl('/plain') });
    const pushed = await push(inbox.id, message('plain-1', 'Fabio@Shop.example'), { 'x-helpdesk-token': inbox.secret });
    const res = await reply(pushed.body.conversationId, 'hi Fabio');
    const hit = await eventually(async () => hitsOf('/plain').find((r) => r.json.data.sourceId === res.body.id), 'the POST');
    expect(hit.json.data.recipientIdentifier).toBe('fabio@shop.example');
    await messageWhen(service, owner.token, pushed.body.conversationId, res.body.id, (m) => m.status === 'SENT');
  });
});

describe('delivery failures', () => {
  test('an app answering 500: 3 attempts about 5 s then 10 s apart, then FAILED with externalError naming the last answer', async () => {
    const pushed = await push(strict.id, message('fail-1', 'gil@shop.example'), { 'x-helpdesk-token': strict.secret });
    const res = await reply(pushed.body.conversationId, 'this will not arrive');
    expect(res.body.status).toBe('PENDING');
    const failed = await messageWhen(service, owner.token, pushed.body.conversationId, res.body.id, (m) => m.status === 'FAILED', { timeoutMs: 30_000 });
    expect(failed.externalError).toMatch(/3 attempts.*HTTP 500/);
    const attempts = hitsOf('/fail').filter((r) => r.json.data.sourceId === res.body.id);
    expect(attempts).toHaveLength(3);
    // Every attempt is freshly signed and carries the same message.
    for (const a of attempts) expect(a.headers.get('x-helpdesk-signature')).toBe(sign(strict.secret, a.raw));
    const gaps = attempts.slice(1).map((a, i) => (a.at - attempts[i]!.at) / 1000);
    expect(gaps[0]).toBeGreaterThanOrEqual(4.5);
    expect(gaps[0]).toBeLessThan(9);
    expect(gaps[1]).toBeGreaterThanOrEqual(9.5);
    expect(gaps[1]).toBeLessThan(15);
    expect((await statusEvents(res.body.id)).map((e) => e.toStatus)).toEqual(['FAILED']);
    // No 4th attempt comes on its own. A sleep: a FAILED reply waits for nothing, so only time can show one.
    await Bun.sleep(1500);
    expect(hitsOf('/fail').filter((r) => r.json.data.sourceId === res.body.id)).toHaveLength(3);
  }, 45_000);

  test('an API inbox without webhookUrl refuses replies with 422 (nothing stored)', async () => {
    const inbox = await apiInbox(owner.token, { name: 'No URL' });
    const pushed = await push(inbox.id, message('nourl-1', 'hugo@shop.example'), { 'x-helpdesk-token': inbox.secret });
    const res = await reply(pushed.body.conversationId, 'hello?');
    expectStandardError(res, 422, 'Unprocessable Entity');
    expect(res.body.message).toMatch(/webhookUrl/);
    expect((await messages(pushed.body.conversationId)).body.map((m: any) => m.direction)).toEqual(['incoming']);
    // A private note needs no URL.
    expect((await reply(pushed.body.conversationId, 'note', owner.token, { private: true })).status).toBe(201);
  });
});

describe('who may see and reply', () => {
  test('an Agent outside the inbox gets 404 on the conversation and on replying; a member Agent replies', async () => {
    const pushed = await push(open.id, message('who-1', 'ivo@shop.example'), { 'x-helpdesk-token': open.secret });
    const id = pushed.body.conversationId;
    expectStandardError(await service.call('GET', `/v3/helpdesk/conversations/${id}`, { apikey: outsider.token }), 404, 'Not Found');
    expectStandardError(await messages(id, outsider.token), 404, 'Not Found');
    expectStandardError(await reply(id, 'not mine', outsider.token), 404, 'Not Found');
    expect((await service.call('GET', `/v3/helpdesk/conversations/${id}`, { apikey: agent.token })).status).toBe(200);
    expect((await reply(id, 'mine', agent.token)).status).toBe(201);
  });

  test('FREE plan: the app still pushes, reading works, a reply is 403 HELPDESK_PLAN_REQUIRED', async () => {
    const free = await service.bootstrap({ plan: 'PRO' });
    const inbox = await apiInbox(free.token, { name: 'Later free', webhookUrl: appUrl('/ok') });
    const db = service.runtime.ctx.db;
    await db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', free.workspaceId).execute();
    const pushed = await push(inbox.id, message('free-1', 'jo@shop.example'), { 'x-helpdesk-token': inbox.secret });
    expect(pushed.status).toBe(201);
    expect((await messages(pushed.body.conversationId, free.token)).status).toBe(200);
    const res = await reply(pushed.body.conversationId, 'hi', free.token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'HELPDESK_PLAN_REQUIRED', hint: expect.any(String) });
  });
});

describe('OpenAPI', () => {
  test('the inbound endpoint is documented with both credentials, both bodies and its answers', async () => {
    const doc = (await service.call('GET', '/docs/json')).body;
    const op = doc.paths['/webhooks/helpdesk/{inboxId}'].post;
    expect(op.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['x-helpdesk-token', 'x-helpdesk-signature']));
    expect(op.requestBody.content['application/json'].schema.oneOf.map((s: any) => s.title)).toEqual(['Message', 'Status update']);
    expect(Object.keys(op.responses).sort()).toEqual(['201', '400', '401', '404', '429']);
    expect(op.description).toMatch(/HMAC-SHA256 of the raw request body/);
  });
});
