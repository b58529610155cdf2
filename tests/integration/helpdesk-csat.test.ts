import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { DEFAULT_SURVEY_MESSAGE } from '../../core/helpdesk/csat/csat.ts';
import { CSAT_ATTEMPTS_PER_MINUTE } from '../../plugins/helpdesk/csat/page.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { useTestService } from '../support/service.ts';
import { connectHelpdesk } from '../support/socket.ts';
import { useReceiver, type Hit } from '../support/webhook-receiver.ts';
import {
  anotherLine,
  conversationFromContact,
  eventually,
  helpdeskEvents,
  helpdeskLine,
  helpdeskWorkspace,
  sentToContact,
  setInboxMembers,
  subscribersDone,
  type Member,
  type Owner,
} from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * CSAT (issue 7 item 3; spec 4.5 "GET, POST `/public/helpdesk/csat/{conversationId}` | the
 * conversation id itself | view and submit a satisfaction survey once"; 5.6 "conversation id
 * only; no token, no expiry; anyone with the link may view and submit once"; 6.5
 * `helpdesk.csat.response_received`). A real service on the sandbox network, a real webhook
 * receiver, and the survey answered in headless Chromium.
 */

const SECRET = 'csat-webhook-secret-0123456789';
const MESSAGE = 'Thanks for talking to Acme Support! Tell us how we did:';
let browser: TestBrowser;
const receiver = useReceiver();
let owner: Owner;
let agent: Member;
let connectionId: string;
let inboxId: string;
let quietConnectionId: string;
let quietInboxId: string;
let nextPhone = 5511970000001;

const service = useTestService();

beforeAll(async () => {
  browser = await startBrowser();
  const line = await helpdeskWorkspace(service, { connection: 'csat line', inbox: 'Support' });
  ({ owner, agent, connectionId, inboxId } = line);
  ({ connectionId: quietConnectionId, inboxId: quietInboxId } = await anotherLine(service, line, { connection: 'quiet line', inbox: 'Sales' }));
  const webhook = await service.call('POST', '/v3/helpdesk/webhooks', {
    apikey: owner.token,
    body: { url: receiver.url('/csat'), subscriptions: ['helpdesk.csat.response_received'], signingSecret: SECRET },
  });
  expect(webhook.status).toBe(201);
}, HOOK_TIMEOUT);

afterAll(async () => {
  await browser?.close();
}, HOOK_TIMEOUT);

const db = () => helpdeskDb(service.runtime.ctx.db);
const settings = (id = inboxId, apikey = owner.token) => service.call('GET', `/v3/helpdesk/inboxes/${id}/csat`, { apikey });
const configure = (body: unknown, id = inboxId, apikey = owner.token) => service.call('PUT', `/v3/helpdesk/inboxes/${id}/csat`, { apikey, body });
const setStatus = (conversationId: string, status: string, apikey = agent.token) => service.call('POST', `/v3/helpdesk/conversations/${conversationId}/status`, { apikey, body: { status } });
const surveyUrl = (conversationId: string) => `${service.url}/public/helpdesk/csat/${conversationId}`;
const postForm = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields) });
const responseRow = (conversationId: string) => db().selectFrom('helpdesk_csat_responses').selectAll().where('conversation_id', '=', conversationId).executeTakeFirst();
const isResolve = (conversationId: string) => (d: any) => d.conversationId === conversationId && d.toStatus === 'RESOLVED';

/** The outbound chat messages to `phone` on the connection that carry a survey link. */
async function surveyMessages(phone: string, connection = connectionId): Promise<any[]> {
  const history = await service.call('GET', `/v3/connections/${connection}/chats/messages?chat=${phone}`, { apikey: owner.token });
  expect(history.status).toBe(200);
  return (history.body as any[]).filter((m) => m.direction === 'outbound' && JSON.stringify(m).includes('/public/helpdesk/csat/'));
}

/** A contact writes to the inbox's connection; the Agent takes the conversation and resolves it. */
async function resolvedConversation(connection = connectionId): Promise<{ id: string; phone: string }> {
  const phone = String(nextPhone++);
  const conversation = await conversationFromContact(service, owner.token, connection, phone, { text: 'I need help with my order', pushName: 'Ana' });
  const assigned = await service.call('PATCH', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner.token, body: { assigneeUserId: agent.userId } });
  expect(assigned.status).toBe(200);
  expect((await setStatus(conversation.id, 'RESOLVED')).status).toBe(201);
  return { id: conversation.id, phone };
}

/** A resolved conversation of the CSAT inbox whose survey link has reached the contact; answers the link. */
async function surveyed(): Promise<{ id: string; phone: string; link: string }> {
  const { id, phone } = await resolvedConversation();
  const sent = await sentToContact(service, owner.token, connectionId, phone, `/public/helpdesk/csat/${id}`);
  return { id, phone, link: /https?:\/\/[^\s"]+\/public\/helpdesk\/csat\/[0-9a-f-]{36}/.exec(sent.content.text)![0] };
}

function verifies(hit: Hit, secret: string): boolean {
  return hit.headers.get('x-helpdesk-signature') === createHmac('sha256', secret).update(hit.raw).digest('hex');
}

describe('the inbox setting', () => {
  test('off by default; an Owner turns it on with a message; Agents may not; FREE needs PRO; bad input is 400; unknown inbox 404', async () => {
    const initial = await settings();
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({ inboxId, enabled: false, message: null });

    expectStandardError(await settings(inboxId, agent.token), 403, 'Forbidden');
    expectStandardError(await configure({ enabled: true }, inboxId, agent.token), 403, 'Forbidden');
    const free = await service.bootstrap({ plan: 'FREE' });
    const unknown = crypto.randomUUID();
    const plan = await service.call('PUT', `/v3/helpdesk/inboxes/${unknown}/csat`, { apikey: free.token, body: { enabled: true } });
    expect(plan.status).toBe(403);
    expect(plan.body.message).toBe('HELPDESK_PLAN_REQUIRED');

    expectStandardError(await settings(unknown), 404, 'Not Found');
    expectStandardError(await configure({ enabled: true }, unknown), 404, 'Not Found');
    expectStandardError(await configure({ enabled: true, message: '   ' }), 400, 'Bad Request');
    expectStandardError(await configure({ enabled: true, message: 'x'.repeat(1001) }), 400, 'Bad Request');
    expect((await configure({ message: 'no enabled' })).status).toBe(400);

    const on = await configure({ enabled: true, message: `  ${MESSAGE}  ` });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ inboxId, enabled: true, message: MESSAGE });
    expect((await settings()).body).toEqual({ inboxId, enabled: true, message: MESSAGE });
    // The other inbox stays off.
    expect((await settings(quietInboxId)).body).toEqual({ inboxId: quietInboxId, enabled: false, message: null });
  });
});

describe('the survey', () => {
  let first: { id: string; phone: string; link: string };

  test('resolving sends the contact the link once, as a reply from the helpdesk itself', async () => {
    first = await surveyed();
    // The link is on the service's public URL (PUBLIC_URL).
    expect(first.link).toBe(`${service.runtime.ctx.config.publicUrl}/public/helpdesk/csat/${first.id}`);
    const [sent] = await surveyMessages(first.phone);
    expect(sent.content.text).toBe(`${MESSAGE}\n${first.link}`);
    // In the conversation: an outgoing reply with no person as its sender.
    const messages = (await service.call('GET', `/v3/helpdesk/conversations/${first.id}/messages?limit=100`, { apikey: owner.token })).body as any[];
    const reply = messages.find((m) => m.direction === 'outgoing' && m.content.includes('/public/helpdesk/csat/'));
    expect(reply).toMatchObject({ private: false, senderUserId: null, content: sent.content.text });
    expect(['PENDING', 'SENT', 'DELIVERED', 'READ']).toContain(reply.status);

    // Reopened and resolved again: no second link.
    expect((await setStatus(first.id, 'OPEN')).status).toBe(201);
    expect((await setStatus(first.id, 'RESOLVED')).status).toBe(201);
    await eventually(async () => ((await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.status_changed')).filter(isResolve(first.id)).length === 2 ? true : undefined), 'the second resolve');
    await subscribersDone(service, owner.workspaceId, 'helpdesk.conversation.status_changed', isResolve(first.id));
    expect(await surveyMessages(first.phone)).toHaveLength(1);
  });

  test('answered in Chromium: workspace and inbox named, 4 with a comment, thank-you; opened again: already answered', async () => {
    await browser.withPage(async (page) => {
      const opened = await page.goto(first.link);
      expect(opened!.status()).toBe(200);
      const policy = opened!.headers()['content-security-policy']!;
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("form-action 'self'");
      expect(opened!.headers()['referrer-policy']).toBe('no-referrer');
      expect(await opened!.text()).not.toContain('<script');
      expect(await page.locator('script').count()).toBe(0);
      const workspace = await service.runtime.ctx.db.selectFrom('workspaces').select('name').where('id', '=', owner.workspaceId).executeTakeFirstOrThrow();
      expect(await page.textContent('#workspace-name')).toBe(workspace.name);
      expect(await page.textContent('#inbox-name')).toBe('Support');
      expect(await page.locator('input[type=radio][name=rating]').count()).toBe(5);

      await page.check('#rating-4');
      await page.fill('#comment', 'Quick and kind <b>help</b>, thanks!');
      await Promise.all([page.waitForSelector('#thanks'), page.click('#submit')]);
      expect(await page.textContent('#given-rating')).toBe('4');
      // The comment is shown as text, never as markup.
      expect(await page.textContent('#given-comment')).toBe('Quick and kind <b>help</b>, thanks!');
      expect(await page.locator('#given-comment b').count()).toBe(0);

      await page.goto(first.link);
      expect(await page.locator('#answered').count()).toBe(1);
      expect(await page.locator('form').count()).toBe(0);
      expect(await page.textContent('#given-rating')).toBe('4');
    });

    const row = await responseRow(first.id);
    expect(row).toMatchObject({ workspace_id: owner.workspaceId, inbox_id: inboxId, rating: 4, comment: 'Quick and kind <b>help</b>, thanks!', assignee_user_id: agent.userId, team_id: null });
  });

  test('a direct second POST changes nothing (409, already answered)', async () => {
    const before = await responseRow(first.id);
    const again = await postForm(first.link, { rating: '1', comment: 'changed my mind' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('already been answered');
    expect(await responseRow(first.id)).toEqual(before!);
    expect((await helpdeskEvents(service, owner.workspaceId, 'helpdesk.csat.response_received')).filter((e) => e.conversationId === first.id)).toHaveLength(1);
  });

  test('helpdesk.csat.response_received reached the webhook, signed, and is in the event log', async () => {
    const hits = await receiver.waitFor('/csat', 1);
    const hit = hits.find((h) => h.json?.data?.conversationId === first.id)!;
    expect(verifies(hit, SECRET)).toBe(true);
    expect(hit.headers.get('x-helpdesk-event')).toBe('helpdesk.csat.response_received');
    const row = await responseRow(first.id);
    const expected = {
      type: 'helpdesk.csat.response_received',
      accountId: owner.workspaceId,
      conversationId: first.id,
      inboxId,
      rating: 4,
      comment: 'Quick and kind <b>help</b>, thanks!',
      assigneeUserId: agent.userId,
      submittedAt: row!.submitted_at.toISOString(),
    };
    expect(hit.json).toEqual({ event: 'helpdesk.csat.response_received', data: expected, deliveredAt: expect.any(String) });
    const logged = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.csat.response_received')).filter((e) => e.conversationId === first.id);
    expect(logged).toEqual([expected]);
  });

  test('managers list the answers (filters inboxId, from, to; s searches comments); Agents may not; bad filters are 400', async () => {
    const list = (query = '', apikey = owner.token) => service.call('GET', `/v3/helpdesk/csat-responses${query}`, { apikey });
    const all = await list();
    expect(all.status).toBe(200);
    const mine = all.body.data.find((r: any) => r.conversationId === first.id);
    expect(mine).toEqual({
      conversationId: first.id,
      displayId: expect.any(Number),
      inboxId,
      contactId: expect.stringMatching(UUID),
      rating: 4,
      comment: 'Quick and kind <b>help</b>, thanks!',
      assigneeUserId: agent.userId,
      teamId: null,
      submittedAt: expect.any(String),
    });
    expect(all.body).toMatchObject({ currentPage: 1, perPage: 10 });

    const today = mine.submittedAt.slice(0, 10);
    const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
    const ids = async (query: string) => ((await list(query)).body.data as any[]).map((r) => r.conversationId);
    expect(await ids(`?inboxId=${inboxId}`)).toContain(first.id);
    expect(await ids(`?inboxId=${quietInboxId}`)).toEqual([]);
    // Inclusive on both ends: a day is the whole UTC day; the exact instant is inside.
    expect(await ids(`?from=${today}&to=${today}`)).toContain(first.id);
    expect(await ids(`?from=${mine.submittedAt}&to=${mine.submittedAt}`)).toContain(first.id);
    expect(await ids(`?to=${yesterday}`)).toEqual([]);
    expect(await ids('?s=KIND')).toContain(first.id);
    expect(await ids('?s=nowhere')).toEqual([]);

    expectStandardError(await list('', agent.token), 403, 'Forbidden');
    const bad = await list(`?from=2025-02-30&to=yesterday&inboxId=nope`);
    expectStandardError(bad, 400, 'Bad Request');
    expect(bad.body.message).toEqual(expect.arrayContaining([expect.stringContaining('query.from'), expect.stringContaining('query.to'), expect.stringContaining('query.inboxId')]));
    expectStandardError(await list(`?from=${today}&to=${yesterday}`), 400, 'Bad Request');
  });

  test('bad input is a 400 page naming the problem, storing nothing; a valid answer then goes through', async () => {
    const { id, link } = await surveyed();
    const noRating = await postForm(link, { comment: 'no rating' });
    expect(noRating.status).toBe(400);
    expect(await noRating.text()).toContain('Choose a rating from 1 to 5.');
    const outOfRange = await postForm(link, { rating: '7' });
    expect(outOfRange.status).toBe(400);
    const tooLong = await postForm(link, { rating: '3', comment: 'x'.repeat(1001) });
    expect(tooLong.status).toBe(400);
    const page = await tooLong.text();
    expect(page).toContain('at most 1000 characters');
    expect(page).toContain('id="rating-3" name="rating" value="3" required checked'); // what was chosen is kept
    const json = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rating: '5' }) });
    expect(json.status).toBe(415);
    expect(await responseRow(id)).toBeUndefined();

    const ok = await postForm(link, { rating: '5', comment: '' });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('id="thanks"');
    expect(await responseRow(id)).toMatchObject({ rating: 5, comment: null });
  });

  test('submissions at once: exactly one is stored, with one event', async () => {
    const { id, link } = await surveyed();
    const answers = await Promise.all([1, 2, 3, 4, 5, 1, 2, 3].map((rating) => postForm(link, { rating: String(rating) })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    const row = await responseRow(id);
    expect(row).toBeDefined();
    await eventually(async () => ((await helpdeskEvents(service, owner.workspaceId, 'helpdesk.csat.response_received')).some((e) => e.conversationId === id) ? true : undefined), 'the event');
    const events = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.csat.response_received')).filter((e) => e.conversationId === id);
    expect(events.map((e) => e.rating)).toEqual([row!.rating]);
  });

  test('on the websocket the answer reaches the inbox\'s room, not agents of other inboxes', async () => {
    const outsider = await memberWithToken(service, owner, 'AGENT');
    await setInboxMembers(service, owner.token, quietInboxId, [agent.userId, outsider.userId]);
    const { id, link } = await surveyed();
    const inside = await connectHelpdesk(service.url, agent.token);
    const outside = await connectHelpdesk(service.url, outsider.token);
    try {
      expect((await postForm(link, { rating: '2', comment: 'slow' })).status).toBe(200);
      const heard = await inside.next('helpdesk.csat.response_received', (p) => p.conversationId === id);
      expect(heard).toMatchObject({ type: 'helpdesk.csat.response_received', accountId: owner.workspaceId, inboxId, rating: 2, comment: 'slow', assigneeUserId: agent.userId });
      await subscribersDone(service, owner.workspaceId, 'helpdesk.csat.response_received', (d) => d.conversationId === id);
      expect(outside.received.filter((r) => r.event.startsWith('helpdesk.csat'))).toEqual([]);
    } finally {
      inside.close();
      outside.close();
    }
  });

  test('CSAT off: resolving sends nothing and the link is 404', async () => {
    const { id, phone } = await resolvedConversation(quietConnectionId);
    await subscribersDone(service, owner.workspaceId, 'helpdesk.conversation.status_changed', isResolve(id));
    expect(await surveyMessages(phone, quietConnectionId)).toEqual([]);
    expect(await db().selectFrom('helpdesk_csat_surveys').selectAll().where('conversation_id', '=', id).executeTakeFirst()).toBeUndefined();
    const page = await fetch(surveyUrl(id));
    expect(page.status).toBe(404);
    expect((await postForm(surveyUrl(id), { rating: '5' })).status).toBe(404);
  });

  test('unknown or malformed ids are a 404 page with the strict policy and no script', async () => {
    await browser.withPage(async (page) => {
      const answer = await page.goto(surveyUrl(crypto.randomUUID()));
      expect(answer!.status()).toBe(404);
      expect(answer!.headers()['content-security-policy']).toContain("default-src 'none'");
      expect(await page.textContent('h1')).toBe('Survey not found');
      expect(await page.locator('script').count()).toBe(0);
    });
    expect((await fetch(surveyUrl('not-an-id'))).status).toBe(404);
  });
});

// A service of its own: the other tests use up part of this IP's allowance.
describe('rate limit', () => {
  const limited = useTestService();

  test(`guesses and submissions from one IP are limited to ${CSAT_ATTEMPTS_PER_MINUTE} a minute; viewing a real survey does not count; then even a real link is 429`, async () => {
    const line = await helpdeskLine(limited, { connection: 'limited line', inbox: 'Limited' });
    expect((await limited.call('PUT', `/v3/helpdesk/inboxes/${line.inboxId}/csat`, { apikey: line.owner.token, body: { enabled: true } })).status).toBe(200);
    const conversation = await conversationFromContact(limited, line.owner.token, line.connectionId, '5511970009999', { text: 'hi' });
    expect((await limited.call('POST', `/v3/helpdesk/conversations/${conversation.id}/status`, { apikey: line.owner.token, body: { status: 'RESOLVED' } })).status).toBe(201);
    const sent = await sentToContact(limited, line.owner.token, line.connectionId, '5511970009999', `/public/helpdesk/csat/${conversation.id}`);
    // The default text, then the link.
    expect(sent.content.text).toBe(`${DEFAULT_SURVEY_MESSAGE}\n${limited.runtime.ctx.config.publicUrl}/public/helpdesk/csat/${conversation.id}`);
    const link = `${limited.url}/public/helpdesk/csat/${conversation.id}`;

    for (let i = 0; i < CSAT_ATTEMPTS_PER_MINUTE + 5; i++) expect((await fetch(link)).status).toBe(200);
    const guesses: number[] = [];
    for (let i = 0; i < CSAT_ATTEMPTS_PER_MINUTE - 1; i++) guesses.push((await fetch(`${limited.url}/public/helpdesk/csat/${crypto.randomUUID()}`)).status);
    expect(guesses).toEqual(Array(CSAT_ATTEMPTS_PER_MINUTE - 1).fill(404));
    expect((await postForm(link, { rating: 'nine' })).status).toBe(400); // the last allowed attempt
    const refused = await fetch(link);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await postForm(link, { rating: '5' })).status).toBe(429);
    expect(await limited.runtime.ctx.db.selectFrom('helpdesk_csat_responses' as any).selectAll().execute()).toEqual([]);
  });
});
