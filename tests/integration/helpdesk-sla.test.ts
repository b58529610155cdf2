import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { SLA_DEADLINE_QUEUE } from '../../core/helpdesk/sla/tracking.ts';
import { jobIdFor } from '../../adapters/queue/queue.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { useTestService } from '../support/service.ts';
import { connectHelpdesk, type TestSocket } from '../support/socket.ts';
import { useReceiver } from '../support/webhook-receiver.ts';
import {
  anotherLine,
  connectedConnection,
  connectionInbox,
  conversationFromContact,
  eventually,
  helpdeskEvents,
  helpdeskWorkspace,
  injectContactMessage,
  sentToContact,
  subscribersDone,
  type Member,
  type Owner,
} from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * SLAs, business hours and the out-of-office reply (issue 7 item 2; spec 2.1 and 2.10 inbox
 * `timezone` "reference for working hours, out-of-office replies and business-hours SLAs"; 6.5
 * `helpdesk.sla.missed`; 6.7 "`helpdesk.sla.missed` is not broadcast"). A real service on the
 * sandbox network, a real signed webhook receiver and a real socket.
 *
 * The breach is real time, not a test hook: a policy of one business minute on an inbox without
 * business hours (open 24/7). Its conversation opens before the other tests run, and the last
 * test waits for the deadline job (about a minute after it opened).
 */

const SECRET = 'sla-webhook-secret-0123456789';
const MINUTE = 60_000;
const receiver = useReceiver();
let socket: TestSocket;
let owner: Owner;
let agent: Member;
let connectionId: string;
let inboxId: string;
/** The 24/7 inbox with a one-minute first-response policy. */
let quickConnectionId: string;
let quickInboxId: string;
let quickPolicyId: string;
let late: { id: string; phone: string };
let nextPhone = 5511960000001;

const db = () => helpdeskDb(service.runtime.ctx.db);
const call = (method: string, path: string, body?: unknown, apikey = owner.token) => service.call(method, path, { apikey, body });
const sla = (conversationId: string, apikey = owner.token) => call('GET', `/v3/helpdesk/conversations/${conversationId}/sla`, undefined, apikey);
const slaWhen = (conversationId: string, done: (s: any) => boolean, what: string, timeoutMs?: number) =>
  eventually(async () => {
    const s = (await sla(conversationId)).body;
    return done(s) ? s : undefined;
  }, what, timeoutMs);
const reply = (conversationId: string, content: string, apikey = agent.token) => call('POST', `/v3/helpdesk/conversations/${conversationId}/messages`, { content }, apikey);

async function contactWrites(connection: string, text: string, phone = String(nextPhone++)): Promise<{ id: string; phone: string }> {
  const conversation = await conversationFromContact(service, owner.token, connection, phone, { text, pushName: 'Bia' });
  return { id: conversation.id, phone };
}

const service = useTestService();

beforeAll(async () => {
  const workspace = await helpdeskWorkspace(service, { connection: 'sla line', inbox: 'Support' });
  ({ owner, agent, connectionId, inboxId } = workspace);
  ({ connectionId: quickConnectionId, inboxId: quickInboxId } = await anotherLine(service, workspace, { connection: 'quick line', inbox: 'Quick' }));
  const webhook = await call('POST', '/v3/helpdesk/webhooks', { url: receiver.url('/sla'), subscriptions: ['helpdesk.sla.missed', 'helpdesk.message.created'], signingSecret: SECRET });
  expect(webhook.status).toBe(201);
  // Managers and above hear every inbox's events on the socket: this one must never hear sla.missed.
  socket = await connectHelpdesk(service.url, owner.token);
  const policy = await call('POST', '/v3/helpdesk/sla-policies', { name: 'Quick', firstResponseMinutes: 1, nextResponseMinutes: 60, inboxIds: [quickInboxId] });
  expect(policy.status).toBe(201);
  quickPolicyId = policy.body.id;
  late = await contactWrites(quickConnectionId, 'Is anyone there?');
}, HOOK_TIMEOUT);

afterAll(async () => {
  socket?.close();
}, HOOK_TIMEOUT);

describe('SLA policies', () => {
  test('create, read, list, change and delete; validation, names and inboxes taken; roles and the PRO plan', async () => {
    const created = await call('POST', '/v3/helpdesk/sla-policies', { name: 'Standard', description: 'Weekday promise', firstResponseMinutes: 30, resolutionMinutes: 480 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Standard',
      description: 'Weekday promise',
      firstResponseMinutes: 30,
      nextResponseMinutes: null,
      resolutionMinutes: 480,
      onlyBusinessHours: true,
      inboxIds: [],
    });
    expect(created.body.id).toMatch(UUID);
    const id = created.body.id;

    expect((await call('GET', `/v3/helpdesk/sla-policies/${id}`)).body).toEqual(created.body);
    const listed = await call('GET', '/v3/helpdesk/sla-policies?s=stand');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ total: 1, currentPage: 1, perPage: 10 });
    expect(listed.body.data[0].id).toBe(id);

    const noTarget = await call('POST', '/v3/helpdesk/sla-policies', { name: 'Empty' });
    expectStandardError(noTarget, 400, 'Bad Request');
    const bad = await call('POST', '/v3/helpdesk/sla-policies', { name: ' ', firstResponseMinutes: 0, nextResponseMinutes: 1.5, inboxIds: [crypto.randomUUID()] });
    expectStandardError(bad, 400, 'Bad Request');
    expect(bad.body.message).toEqual(
      expect.arrayContaining([expect.stringContaining('body.name'), expect.stringContaining('body.firstResponseMinutes'), expect.stringContaining('body.nextResponseMinutes'), expect.stringContaining('body.inboxIds')]),
    );
    expectStandardError(await call('POST', '/v3/helpdesk/sla-policies', { name: 'STANDARD', firstResponseMinutes: 5 }), 409, 'Conflict');
    // The quick inbox has the Quick policy: an inbox has one.
    expectStandardError(await call('PATCH', `/v3/helpdesk/sla-policies/${id}`, { inboxIds: [quickInboxId] }), 409, 'Conflict');

    const patched = await call('PATCH', `/v3/helpdesk/sla-policies/${id}`, { nextResponseMinutes: 60, resolutionMinutes: null, inboxIds: [inboxId] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Standard', firstResponseMinutes: 30, nextResponseMinutes: 60, resolutionMinutes: null, inboxIds: [inboxId] });
    expectStandardError(await call('PATCH', `/v3/helpdesk/sla-policies/${id}`, { firstResponseMinutes: null, nextResponseMinutes: null }), 400, 'Bad Request');

    // Agents configure nothing, not even reading policies (spec 2.14 "Helpdesk: configure").
    expectStandardError(await call('GET', '/v3/helpdesk/sla-policies', undefined, agent.token), 403, 'Forbidden');
    expectStandardError(await call('POST', '/v3/helpdesk/sla-policies', { name: 'Agent', firstResponseMinutes: 5 }, agent.token), 403, 'Forbidden');
    const manager = await memberWithToken(service, owner, 'MANAGER');
    expect((await call('GET', `/v3/helpdesk/sla-policies/${id}`, undefined, manager.token)).status).toBe(200);

    const free = await service.bootstrap({ plan: 'FREE' });
    const refused = await call('POST', '/v3/helpdesk/sla-policies', { name: 'Free', firstResponseMinutes: 5 }, free.token);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('HELPDESK_PLAN_REQUIRED');
    expect((await call('GET', '/v3/helpdesk/sla-policies', undefined, free.token)).body.total).toBe(0);
    // Another workspace's policy is not there.
    expectStandardError(await call('GET', `/v3/helpdesk/sla-policies/${id}`, undefined, free.token), 404, 'Not Found');

    const removed = await call('DELETE', `/v3/helpdesk/sla-policies/${id}`);
    expect(removed.body).toEqual({ id, deleted: true });
    expectStandardError(await call('GET', `/v3/helpdesk/sla-policies/${id}`), 404, 'Not Found');
    expectStandardError(await call('DELETE', `/v3/helpdesk/sla-policies/${id}`), 404, 'Not Found');
  });
});

/** `YYYY-MM-DD` in São Paulo `days` from now, and its weekday (0 Sunday). */
function saoPauloDate(days: number): { date: string; weekday: number } {
  const at = new Date(Date.now() + days * 24 * 3600_000);
  const date = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(at);
  return { date, weekday: new Date(`${date}T12:00:00Z`).getUTCDay() };
}

describe('business hours and out-of-office', () => {
  test('open 24/7 by default; members who see the inbox read them; bad intervals and dates are 400; Agents may not change them; FREE needs PRO', async () => {
    const initial = await call('GET', `/v3/helpdesk/inboxes/${inboxId}/business-hours`, undefined, agent.token);
    expect(initial.status).toBe(200);
    expect(initial.body).toMatchObject({ inboxId, timezone: 'UTC', enabled: false, holidays: [], openNow: true, nextOpeningAt: null, updatedAt: null });
    expect(initial.body.weeklyHours).toEqual({ monday: [], tuesday: [], wednesday: [], thursday: [], friday: [], saturday: [], sunday: [] });
    expect((await call('GET', `/v3/helpdesk/inboxes/${inboxId}/out-of-office`, undefined, agent.token)).body).toMatchObject({ enabled: false, message: null, businessHoursEnabled: false });

    const bad = await call('PUT', `/v3/helpdesk/inboxes/${inboxId}/business-hours`, {
      enabled: true,
      weeklyHours: { monday: [{ start: '09:00', end: '25:00' }], tuesday: [{ start: '18:00', end: '09:00' }], wednesday: [{ start: '09:00', end: '13:00' }, { start: '12:00', end: '17:00' }] },
      holidays: [{ date: '2026-02-30' }],
    });
    expectStandardError(bad, 400, 'Bad Request');
    expect(bad.body.message).toHaveLength(4);
    expectStandardError(await call('PUT', `/v3/helpdesk/inboxes/${inboxId}/business-hours`, { enabled: true, weeklyHours: {} }), 400, 'Bad Request');
    expectStandardError(await call('PUT', `/v3/helpdesk/inboxes/${inboxId}/business-hours`, { enabled: false }, agent.token), 403, 'Forbidden');
    expectStandardError(await call('PUT', `/v3/helpdesk/inboxes/${inboxId}/out-of-office`, { enabled: true }, agent.token), 403, 'Forbidden');
    expectStandardError(await call('PUT', `/v3/helpdesk/inboxes/${inboxId}/out-of-office`, { enabled: true, message: '' }), 400, 'Bad Request');

    // An Agent outside an inbox gets 404 (spec 2.14), as for the inbox itself.
    const outsider = await memberWithToken(service, owner, 'AGENT');
    expectStandardError(await call('GET', `/v3/helpdesk/inboxes/${inboxId}/business-hours`, undefined, outsider.token), 404, 'Not Found');
    expectStandardError(await call('GET', `/v3/helpdesk/inboxes/${crypto.randomUUID()}/business-hours`), 404, 'Not Found');

    // Touching intervals merge; holidays come back sorted.
    const set = await call('PUT', `/v3/helpdesk/inboxes/${inboxId}/business-hours`, {
      enabled: false,
      weeklyHours: { friday: [{ start: '13:00', end: '24:00' }, { start: '08:00', end: '13:00' }] },
      holidays: [{ date: '2026-12-25', name: 'Christmas' }, { date: '2026-01-01' }],
    });
    expect(set.status).toBe(200);
    expect(set.body.weeklyHours.friday).toEqual([{ start: '08:00', end: '24:00' }]);
    expect(set.body.holidays).toEqual([{ date: '2026-01-01', name: null }, { date: '2026-12-25', name: 'Christmas' }]);
    expect(set.body.openNow).toBe(true);

    await service.runtime.ctx.db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', owner.workspaceId).execute();
    try {
      const refused = await call('PUT', `/v3/helpdesk/inboxes/${inboxId}/business-hours`, { enabled: false });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toBe('HELPDESK_PLAN_REQUIRED');
      expect((await call('GET', `/v3/helpdesk/inboxes/${inboxId}/business-hours`)).status).toBe(200);
    } finally {
      await service.runtime.ctx.db.updateTable('workspaces').set({ plan: 'PRO' }).where('id', '=', owner.workspaceId).execute();
    }
  });

  test('in São Paulo on holidays: due times in business time of the inbox\'s zone; one out-of-office reply per closed period, which is no first reply', async () => {
    const line = await connectedConnection(service, owner.token, 'sao paulo line');
    const spInbox = await connectionInbox(service, owner.token, 'São Paulo', line);
    expect((await call('PATCH', `/v3/helpdesk/inboxes/${spInbox}`, { timezone: 'America/Sao_Paulo' })).status).toBe(200);
    // Yesterday, today and tomorrow are holidays there: the inbox is closed now whatever the hour.
    const holidays = [-1, 0, 1].map((d) => ({ date: saoPauloDate(d).date, name: 'Carnaval' }));
    const weekdays = { start: '09:00', end: '18:00' };
    const hours = await call('PUT', `/v3/helpdesk/inboxes/${spInbox}/business-hours`, {
      enabled: true,
      weeklyHours: { monday: [weekdays], tuesday: [weekdays], wednesday: [weekdays], thursday: [weekdays], friday: [weekdays] },
      holidays,
    });
    expect(hours.status).toBe(200);
    expect(hours.body).toMatchObject({ timezone: 'America/Sao_Paulo', enabled: true, openNow: false });
    // The first working day after the holidays opens at 09:00 there, 12:00 UTC (São Paulo keeps -03:00 all year).
    const working: string[] = [];
    for (let d = 2; working.length < 2; d++) {
      const day = saoPauloDate(d);
      if (day.weekday >= 1 && day.weekday <= 5) working.push(day.date);
    }
    expect(hours.body.nextOpeningAt).toBe(`${working[0]}T12:00:00.000Z`);

    const policy = await call('POST', '/v3/helpdesk/sla-policies', { name: 'Business', firstResponseMinutes: 30, resolutionMinutes: 600, inboxIds: [spInbox] });
    expect(policy.status).toBe(201);
    const OOO = 'We are closed for Carnaval and will answer when we are back.';
    expect((await call('PUT', `/v3/helpdesk/inboxes/${spInbox}/out-of-office`, { enabled: true, message: OOO })).body).toMatchObject({ enabled: true, message: OOO, businessHoursEnabled: true });

    const phone = String(nextPhone++);
    const conversation = await contactWrites(line, 'Hello, my order is late', phone);
    // 30 business minutes: 09:30 on the first working day; 600: 540 that day (09:00–18:00), then 60 the next, 10:00.
    const timing = await slaWhen(conversation.id, (s) => s.resolutionDueAt !== null, 'the SLA of the São Paulo conversation');
    expect(timing).toMatchObject({
      policyId: policy.body.id,
      policyName: 'Business',
      firstResponseDueAt: `${working[0]}T12:30:00.000Z`,
      nextResponseDueAt: null,
      resolutionDueAt: `${working[1]}T13:00:00.000Z`,
      breached: [],
      firstReplyAt: null,
    });
    expect(timing.waitingSince).not.toBeNull();

    const auto = await sentToContact(service, owner.token, line, phone, OOO);
    expect(auto).toBeDefined();
    // A second message in the same closed period gets no second reply.
    expect((await injectContactMessage(service, owner.token, line, { from: phone, text: 'Hello?', pushName: 'Bia' })).status).toBe(201);
    await subscribersDone(service, owner.workspaceId, 'helpdesk.message.created', (d) => d.conversationId === conversation.id && d.message.content === 'Hello?');
    const messages = (await call('GET', `/v3/helpdesk/conversations/${conversation.id}/messages?limit=100`)).body as any[];
    const autoReplies = messages.filter((m) => m.content === OOO);
    expect(autoReplies).toHaveLength(1);
    expect(autoReplies[0]).toMatchObject({ direction: 'outgoing', private: false, senderUserId: null, senderAgentBotId: null });
    // The helpdesk's own message is no reply: the first-response round still runs.
    const after = (await sla(conversation.id)).body;
    expect(after).toMatchObject({ firstReplyAt: null, firstResponseDueAt: `${working[0]}T12:30:00.000Z` });
    const claims = await db().selectFrom('helpdesk_out_of_office_replies').selectAll().where('conversation_id', '=', conversation.id).execute();
    expect(claims).toHaveLength(1);
    expect(claims[0]!.reopens_at.toISOString()).toBe(`${working[0]}T12:00:00.000Z`);

    // A person's reply meets the first response (it is not late: the business clock has not even started).
    expect((await reply(conversation.id, 'We will look at it first thing', owner.token)).status).toBe(201);
    const met = await slaWhen(conversation.id, (s) => s.firstReplyAt !== null, 'the first reply');
    expect(met).toMatchObject({ firstResponseDueAt: null, waitingSince: null, breached: [] });
    expect(met.resolutionDueAt).toBe(`${working[1]}T13:00:00.000Z`);

    // Putting another policy on the conversation (plain time, not business hours) starts its clocks from now.
    const around = await call('POST', '/v3/helpdesk/sla-policies', { name: 'Around the clock', resolutionMinutes: 120, onlyBusinessHours: false });
    const before = Date.now();
    const applied = await call('PATCH', `/v3/helpdesk/conversations/${conversation.id}/sla`, { policyId: around.body.id });
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ policyId: around.body.id, policyName: 'Around the clock', firstResponseDueAt: null });
    const due = Date.parse(applied.body.resolutionDueAt);
    expect(due).toBeGreaterThanOrEqual(before + 120 * MINUTE);
    expect(due).toBeLessThanOrEqual(Date.now() + 120 * MINUTE);
    const none = await call('PATCH', `/v3/helpdesk/conversations/${conversation.id}/sla`, { policyId: null });
    expect(none.body).toMatchObject({ policyId: null, policyName: null, resolutionDueAt: null });
    expectStandardError(await call('PATCH', `/v3/helpdesk/conversations/${conversation.id}/sla`, { policyId: crypto.randomUUID() }), 400, 'Bad Request');
    expectStandardError(await call('PATCH', `/v3/helpdesk/conversations/${conversation.id}/sla`, { policyId: null }, agent.token), 404, 'Not Found');
  });
});

describe('conversation timing', () => {
  test('a reply in time meets the first response; the contact writing again starts the next response; resolving stops it; Agents read, may not override', async () => {
    const met = await contactWrites(quickConnectionId, 'Quick question');
    const running = await slaWhen(met.id, (s) => s.firstResponseDueAt !== null, 'the first-response round');
    expect(running).toMatchObject({ policyId: quickPolicyId, nextResponseDueAt: null, resolutionDueAt: null, breached: [] });
    const firstDue = running.firstResponseDueAt as string;
    expect(Date.parse(firstDue) - Date.parse(running.appliedAt)).toBe(MINUTE);
    expect((await sla(met.id, agent.token)).status).toBe(200);
    expectStandardError(await call('PATCH', `/v3/helpdesk/conversations/${met.id}/sla`, { policyId: null }, agent.token), 403, 'Forbidden');

    expect((await reply(met.id, 'Sure, how can I help?')).status).toBe(201);
    const answered = await slaWhen(met.id, (s) => s.firstReplyAt !== null, 'the reply');
    expect(answered).toMatchObject({ firstResponseDueAt: null, nextResponseDueAt: null, waitingSince: null });

    expect((await injectContactMessage(service, owner.token, quickConnectionId, { from: met.phone, text: 'One more thing', pushName: 'Bia' })).status).toBe(201);
    const next = await slaWhen(met.id, (s) => s.nextResponseDueAt !== null, 'the next-response round');
    expect(Date.parse(next.nextResponseDueAt) - Date.parse(next.waitingSince)).toBeLessThanOrEqual(60 * MINUTE);
    expect(Date.parse(next.nextResponseDueAt)).toBeGreaterThan(Date.now() + 59 * MINUTE);

    expect((await call('POST', `/v3/helpdesk/conversations/${met.id}/status`, { status: 'RESOLVED' }, agent.token)).status).toBe(201);
    const resolved = await slaWhen(met.id, (s) => s.resolvedAt !== null, 'the resolve');
    expect(resolved).toMatchObject({ nextResponseDueAt: null, waitingSince: null });
    // The stale deadline job of the met first response runs at its time and records nothing.
    await eventually(async () => {
      const job = await service.runtime.ctx.db
        .selectFrom('pgboss.job' as any)
        .select(['state' as any])
        .where('id' as any, '=', jobIdFor(SLA_DEADLINE_QUEUE, `${met.id}:first_response:${firstDue}`))
        .executeTakeFirst();
      return (job as any)?.state === 'completed' ? true : undefined;
    }, 'the stale deadline job', 90_000);
    expect((await sla(met.id)).body.breached).toEqual([]);
    expect(await db().selectFrom('helpdesk_sla_breaches').selectAll().where('conversation_id', '=', met.id).execute()).toEqual([]);
  }, 120_000);

  test('a missed first response: one breach, helpdesk.sla.missed to a signed webhook and never to the socket; a late reply adds none', async () => {
    const breached = await slaWhen(late.id, (s) => s.breached.length > 0, 'the breach', 100_000);
    expect(breached.breached).toEqual(['first_response']);
    expect(breached.breaches).toHaveLength(1);
    const [breach] = breached.breaches;
    expect(Date.parse(breach.breachedAt)).toBeGreaterThanOrEqual(Date.parse(breach.dueAt));
    // Still running (unanswered); the breach is recorded once.
    expect(breached.firstResponseDueAt).toBe(breach.dueAt);

    const hits = await receiver.waitFor('/sla', 1, 15_000).then(() => eventually(async () => {
      const found = receiver.hits('/sla').filter((h) => h.json?.event === 'helpdesk.sla.missed');
      return found.length > 0 ? found : undefined;
    }, 'the sla.missed delivery'));
    expect(hits).toHaveLength(1);
    const hit = hits[0]!;
    expect(hit.headers.get('x-helpdesk-event')).toBe('helpdesk.sla.missed');
    expect(hit.headers.get('x-helpdesk-signature')).toBe(createHmac('sha256', SECRET).update(hit.raw).digest('hex'));
    expect(hit.json.data).toEqual({
      type: 'helpdesk.sla.missed',
      accountId: owner.workspaceId,
      conversationId: late.id,
      inboxId: quickInboxId,
      slaPolicyId: quickPolicyId,
      target: 'first_response',
      dueAt: breach.dueAt,
      breachedAt: breach.breachedAt,
    });

    // The socket heard this conversation's other events, never the breach.
    expect(socket.received.some((r) => r.event === 'helpdesk.message.created' && r.payload.conversationId === late.id)).toBe(true);
    expect(socket.received.filter((r) => r.event === 'helpdesk.sla.missed')).toEqual([]);

    expect((await reply(late.id, 'Sorry for the wait!')).status).toBe(201);
    const answered = await slaWhen(late.id, (s) => s.firstReplyAt !== null, 'the late reply');
    expect(answered).toMatchObject({ firstResponseDueAt: null, breached: ['first_response'] });
    expect(answered.breaches).toHaveLength(1);
    await subscribersDone(service, owner.workspaceId, 'helpdesk.message.created', (d) => d.conversationId === late.id && d.message.content === 'Sorry for the wait!');
    expect((await helpdeskEvents(service, owner.workspaceId, 'helpdesk.sla.missed')).filter((e) => e.conversationId === late.id)).toHaveLength(1);
    expect(socket.received.filter((r) => r.event === 'helpdesk.sla.missed')).toEqual([]);
  }, 120_000);
});
