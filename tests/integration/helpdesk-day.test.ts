import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SLA_DEADLINE_QUEUE } from '../../core/helpdesk/sla/tracking.ts';
import { type TestService, useTestService } from '../support/service.ts';
import { conversationOfContact, eventually, helpdeskLine, injectContactMessage, setInboxMembers, withoutAutoAssignment, workerSettled, type Member, type Owner } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Issue 7, "Done when": a workspace with three agents, one bot, a business-hours SLA and CSAT
 * runs a day of simulated traffic, and the reports show the figures this script computes on its
 * own. The service runs on a model clock the script sets before each step; after each step it
 * waits until the worker has nothing left to do (subscribers, the bot's deliveries, SLA
 * tracking), so every reaction happens at the step's model time.
 *
 * The inbox is in São Paulo (UTC−3, no DST since 2019), open Mon–Fri 09:00–18:00 there, i.e.
 * 12:00–21:00 UTC, with a first response target of 30 business minutes. Round-robin is off: the
 * bot takes every new conversation; it answers some itself (a manager resolves those later) and
 * hands the others to people, whom the manager assigns by hand. SLA deadline jobs run in real
 * time (minutes away), so breaches come from late replies, which record them at once.
 */

/** The model day: a Wednesday. */
const DAY = '2027-03-10';
const at = (hhmm: string, day = DAY) => Date.parse(`${day}T${hhmm}:00.000Z`);
const MINUTE = 60_000;
const FIRST_RESPONSE_MINUTES = 30;

type Agent = 'ana' | 'bruno' | 'carla';
/**
 * The day's contacts (the seeded list): when each writes (UTC), and what follows, in minutes
 * after they wrote. `bot`: the bot answers after `reply`; `handoff`: the bot hands over after a
 * minute, the manager assigns `agent` a minute later, who replies after `reply`. `resolve`: when
 * the conversation is resolved (by the manager for the bot's, else by the agent); `rating`: the
 * contact's CSAT answer and when.
 */
interface Visit {
  writes: string;
  kind: 'bot' | 'handoff';
  agent?: Agent;
  reply?: number;
  resolve?: number;
  rating?: [number, number];
}
const VISITS: Visit[] = [
  { writes: '08:00', kind: 'bot', reply: 1, resolve: 30, rating: [5, 40] },
  { writes: '09:30', kind: 'handoff', agent: 'ana', reply: 170, resolve: 200, rating: [4, 210] }, // due 12:30, replied 12:20
  { writes: '11:00', kind: 'bot', reply: 1 },
  { writes: '12:10', kind: 'handoff', agent: 'bruno', reply: 45, resolve: 80, rating: [2, 110] }, // due 12:40: late
  { writes: '13:00', kind: 'handoff', agent: 'carla', reply: 20, resolve: 120 },
  { writes: '14:00', kind: 'bot', reply: 1, resolve: 20, rating: [3, 30] },
  { writes: '14:30', kind: 'handoff', agent: 'ana', reply: 40, resolve: 90, rating: [5, 95] }, // due 15:00: late
  { writes: '15:15', kind: 'handoff', agent: 'bruno', reply: 20, resolve: 35, rating: [1, 55] },
  { writes: '16:00', kind: 'bot', reply: 1 },
  { writes: '17:00', kind: 'handoff', agent: 'carla', reply: 50, resolve: 90, rating: [4, 120] }, // due 17:30: late
  { writes: '19:00', kind: 'handoff', agent: 'ana', reply: 20 },
  { writes: '20:45', kind: 'handoff', agent: 'bruno', reply: 75, resolve: 105, rating: [5, 135] }, // due next day 12:15
  { writes: '22:00', kind: 'handoff', agent: 'carla' }, // unanswered; due next day 12:30
  { writes: '23:30', kind: 'bot', reply: 1, resolve: 29 },
];
const phoneOf = (i: number) => `55119700${String(i).padStart(5, '0')}`;

// ---------------------------------------------------------------------------------------------
// The script's own arithmetic.

/** Open at this UTC instant: Mon–Fri 09:00–18:00 in São Paulo (UTC−3). */
function open(ms: number): boolean {
  const local = new Date(ms - 3 * 60 * MINUTE);
  const day = local.getUTCDay();
  const minutes = local.getUTCHours() * 60 + local.getUTCMinutes();
  return day >= 1 && day <= 5 && minutes >= 9 * 60 && minutes < 18 * 60;
}

/** The first response due time: `FIRST_RESPONSE_MINUTES` open minutes after `from`, walked minute by minute. */
function dueAfter(from: number): number {
  let t = from;
  for (let left = FIRST_RESPONSE_MINUTES; left > 0; t += MINUTE) if (open(t)) left--;
  return t;
}

const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

function duration(seconds: number[]) {
  if (seconds.length === 0) return { count: 0, medianSeconds: null, averageSeconds: null };
  const sorted = [...seconds].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { count: seconds.length, medianSeconds: round(median, 3), averageSeconds: round(seconds.reduce((a, b) => a + b, 0) / seconds.length, 3) };
}

/** What happened to one conversation, in model milliseconds. */
interface Fact {
  holder: string | null; // the person holding it at the end of the day (null: the bot)
  opened: number;
  firstReply: number | null;
  resolved: number | null;
  rating: number | null;
  breachDue: number | null;
}

function figures(facts: Fact[]) {
  const dayStart = at('00:00');
  const inDay = (t: number | null): t is number => t !== null && t >= dayStart && t < dayStart + 24 * 60 * MINUTE;
  const ratings = facts.map((f) => f.rating).filter((r): r is number => r !== null);
  const breaches = facts.filter((f) => inDay(f.breachDue)).length;
  return {
    conversationsOpened: facts.filter((f) => inDay(f.opened)).length,
    conversationsResolved: facts.filter((f) => inDay(f.resolved)).length,
    firstResponseTime: duration(facts.filter((f) => inDay(f.firstReply)).map((f) => (f.firstReply! - f.opened) / 1000)),
    resolutionTime: duration(facts.filter((f) => inDay(f.resolved)).map((f) => (f.resolved! - f.opened) / 1000)),
    csat: {
      responses: ratings.length,
      averageRating: ratings.length ? round(ratings.reduce((a, b) => a + b, 0) / ratings.length, 2) : null,
      satisfiedPercent: ratings.length ? round((100 * ratings.filter((r) => r >= 4).length) / ratings.length, 2) : null,
    },
    slaBreaches: { total: breaches, first_response: breaches, next_response: 0, resolution: 0 },
  };
}

/** A CSV row's figures, as the report writes them (empty for null). */
function csvFigures(m: ReturnType<typeof figures>): string {
  const cells = [
    m.conversationsOpened,
    m.conversationsResolved,
    m.firstResponseTime.count,
    m.firstResponseTime.medianSeconds,
    m.firstResponseTime.averageSeconds,
    m.resolutionTime.count,
    m.resolutionTime.medianSeconds,
    m.resolutionTime.averageSeconds,
    m.csat.responses,
    m.csat.averageRating,
    m.csat.satisfiedPercent,
    m.slaBreaches.total,
    m.slaBreaches.first_response,
    m.slaBreaches.next_response,
    m.slaBreaches.resolution,
  ];
  return cells.map((c) => (c === null ? '' : String(c))).join(',');
}

// ---------------------------------------------------------------------------------------------
// The bot: a real HTTP server receiving its webhook, answering through the bot API when the
// script lets it act (so that it acts at a known model time).

function startBot(service: () => TestService, token: () => string) {
  const deliveries: any[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      deliveries.push(JSON.parse(await request.text()));
      return new Response('ok');
    },
  });
  const botCall = (method: string, path: string, body?: unknown) =>
    service().call(method, `/v3/helpdesk/agent-bot/conversations/${path}`, { headers: { 'x-agent-bot-token': token() }, body });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    deliveries,
    stop: () => server.stop(true),
    /** Reads what the contact wrote and answers it, or hands over when they ask for a person. */
    async act(conversationId: string): Promise<'replied' | 'handed off'> {
      const messages = await botCall('GET', `${conversationId}/messages`);
      expect(messages.status).toBe(200);
      const asked = (messages.body as any[]).find((m) => m.direction === 'incoming')?.content as string;
      if (/a person/i.test(asked)) {
        expect((await botCall('POST', `${conversationId}/handoff`, {})).status).toBe(201);
        return 'handed off';
      }
      expect((await botCall('POST', `${conversationId}/messages`, { content: `Here is how: ${asked.length} steps.` })).status).toBe(201);
      return 'replied';
    },
  };
}

// ---------------------------------------------------------------------------------------------

let now = at('06:00');
const clock = { now: () => new Date(now) };

let owner: Owner;
let manager: Member;
let agents: Record<Agent, Member>;
let inboxId: string;
let connectionId: string;
let botId: string;
let botToken: string;
let bot: ReturnType<typeof startBot>;
const facts: Fact[] = [];
const conversationIds: string[] = [];

const call = (method: string, path: string, body?: unknown, apikey = owner.token) => service.call(method, path, { apikey, body });
async function ok(pending: Promise<{ status: number; body: any }>, status = 200) {
  const res = await pending;
  expect({ status: res.status, body: res.status === status ? undefined : res.body }).toEqual({ status, body: undefined });
  return res.body;
}
const settled = () => workerSettled(service, [SLA_DEADLINE_QUEUE]);

/** One step of the day, at model time `t`; the worker's reactions are done when it returns. */
async function step(t: number, action: () => Promise<unknown>): Promise<void> {
  now = t;
  await action();
  await settled();
}

const service = useTestService({ clock });

beforeAll(async () => {
  ({ owner, inboxId, connectionId } = await helpdeskLine(service, { connection: 'day line', inbox: 'Customer care' }));
  manager = await memberWithToken(service, owner, 'MANAGER');
  agents = { ana: await memberWithToken(service, owner, 'AGENT'), bruno: await memberWithToken(service, owner, 'AGENT'), carla: await memberWithToken(service, owner, 'AGENT') };
  await setInboxMembers(service, owner.token, inboxId, Object.values(agents).map((a) => a.userId));
  await withoutAutoAssignment(service, owner.token, inboxId);
  await ok(call('PATCH', `/v3/helpdesk/inboxes/${inboxId}`, { timezone: 'America/Sao_Paulo' }));
  const weekday = [{ start: '09:00', end: '18:00' }];
  await ok(call('PUT', `/v3/helpdesk/inboxes/${inboxId}/business-hours`, { enabled: true, weeklyHours: { monday: weekday, tuesday: weekday, wednesday: weekday, thursday: weekday, friday: weekday }, holidays: [] }));
  await ok(call('POST', '/v3/helpdesk/sla-policies', { name: 'First answer in half an hour', firstResponseMinutes: FIRST_RESPONSE_MINUTES, onlyBusinessHours: true, inboxIds: [inboxId] }), 201);
  await ok(call('PUT', `/v3/helpdesk/inboxes/${inboxId}/csat`, { enabled: true }));
  bot = startBot(() => service, () => botToken);
  const created = await ok(call('POST', '/v3/helpdesk/agent-bots', { name: 'Front desk bot', webhookUrl: bot.url, inboxIds: [inboxId] }), 201);
  ({ id: botId, accessToken: botToken } = created);

  // The day, step by step in time order (ties in the order listed).
  const steps: Array<{ t: number; order: number; run: () => Promise<unknown> }> = [];
  const plan = (t: number, run: () => Promise<unknown>) => steps.push({ t, order: steps.length, run });
  VISITS.forEach((visit, i) => {
    const wrote = at(visit.writes);
    const after = (minutes: number) => wrote + minutes * MINUTE;
    const fact: Fact = {
      holder: null,
      opened: wrote,
      firstReply: visit.reply === undefined ? null : after(visit.reply),
      resolved: visit.resolve === undefined ? null : after(visit.resolve),
      rating: visit.rating?.[0] ?? null,
      breachDue: null,
    };
    const due = dueAfter(wrote);
    // Missed: answered after the due time, or not answered by the end of the day while due in it.
    if ((fact.firstReply ?? Infinity) > due) fact.breachDue = due;
    facts.push(fact);
    const id = () => conversationIds[i]!;

    plan(wrote, async () => {
      expect((await injectContactMessage(service, owner.token, connectionId, { from: phoneOf(i), pushName: `Contact ${i}`, text: visit.kind === 'bot' ? 'How do I reset my password?' : 'I need a person, please' })).status).toBe(201);
      const conversation = await conversationOfContact(service, owner.token, phoneOf(i));
      conversationIds[i] = conversation.id;
      await settled();
      // The bot took it first and heard of it on its webhook.
      expect((await ok(call('GET', `/v3/helpdesk/conversations/${conversation.id}`))).assigneeAgentBotId).toBe(botId);
      await eventually(async () => (bot.deliveries.some((d) => d.event === 'helpdesk.conversation.created' && d.data.conversationId === conversation.id) ? true : undefined), 'the delivery to the bot');
    });
    if (visit.kind === 'bot') {
      plan(after(visit.reply!), async () => expect(await bot.act(id())).toBe('replied'));
    } else {
      const agent = agents[visit.agent!];
      fact.holder = agent.userId;
      plan(after(1), async () => expect(await bot.act(id())).toBe('handed off'));
      plan(after(2), () => ok(call('PATCH', `/v3/helpdesk/conversations/${id()}`, { assigneeUserId: agent.userId }, manager.token)));
      if (visit.reply !== undefined) plan(after(visit.reply), () => ok(call('POST', `/v3/helpdesk/conversations/${id()}/messages`, { content: 'Sorted, it should work now.' }, agent.token), 201));
    }
    if (visit.resolve !== undefined) {
      const by = visit.kind === 'bot' ? manager.token : agents[visit.agent!].token;
      plan(after(visit.resolve), () => ok(call('POST', `/v3/helpdesk/conversations/${id()}/status`, { status: 'RESOLVED' }, by), 201));
    }
    if (visit.rating) {
      const [rating, minutes] = visit.rating;
      plan(after(minutes), async () => {
        const res = await fetch(`${service.url}/public/helpdesk/csat/${id()}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ rating: String(rating) }),
        });
        expect(res.status).toBe(200);
      });
    }
  });
  steps.sort((a, b) => a.t - b.t || a.order - b.order);
  for (const s of steps) {
    expect(s.t).toBeLessThan(at('00:00', '2027-03-11'));
    await step(s.t, s.run);
  }
  now = at('23:59');
}, 6 * HOOK_TIMEOUT);

afterAll(async () => {
  bot?.stop();
}, HOOK_TIMEOUT);

const report = (kind: 'summary' | 'timeseries', query: string, headers: Record<string, string> = {}) =>
  service.call('GET', `/v3/helpdesk/reports/${kind}?from=${DAY}&to=${DAY}&${query}`, { apikey: manager.token, headers });

describe('a day of traffic, reported', () => {
  test('the script\'s plan is what the service saw: first replies, due times and breaches per conversation', async () => {
    const breachRows = await service.runtime.ctx.db
      .selectFrom('helpdesk_sla_breaches' as any)
      .select(['conversation_id' as any, 'target' as any, 'due_at' as any])
      .execute();
    for (const [i, fact] of facts.entries()) {
      const sla = await ok(call('GET', `/v3/helpdesk/conversations/${conversationIds[i]}/sla`));
      const late = fact.breachDue !== null && fact.firstReply !== null;
      expect({ i, firstReplyAt: sla.firstReplyAt, breached: sla.breached }).toEqual({
        i,
        firstReplyAt: fact.firstReply === null ? null : new Date(fact.firstReply).toISOString(),
        breached: late ? ['first_response'] : [],
      });
      // The breach recorded (dated by its due time), and the unanswered one's running due time, are the script's.
      const rows = breachRows.filter((r: any) => r.conversation_id === conversationIds[i]).map((r: any) => ({ target: r.target, dueAt: new Date(r.due_at).toISOString() }));
      expect({ i, rows }).toEqual({ i, rows: late ? [{ target: 'first_response', dueAt: new Date(fact.breachDue!).toISOString() }] : [] });
      if (fact.firstReply === null) expect(sla.firstResponseDueAt).toBe(new Date(dueAfter(fact.opened)).toISOString());
    }
  });

  test('the summary equals the script\'s figures', async () => {
    const res = await report('summary', '');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ from: DAY, to: DAY, groupBy: null, inboxId: null, totals: figures(facts), groups: [] });
  });

  test('the day\'s timeseries bucket too', async () => {
    const res = await report('timeseries', '');
    expect(res.status).toBe(200);
    expect(res.body.buckets).toEqual([{ day: DAY, metrics: figures(facts) }]);
  });

  test('per agent: each agent\'s conversations, the bot\'s under nobody', async () => {
    const res = await report('summary', 'groupBy=agent');
    expect(res.status).toBe(200);
    const expected: Record<string, ReturnType<typeof figures>> = {};
    for (const holder of new Set(facts.map((f) => f.holder))) expected[holder ?? 'none'] = figures(facts.filter((f) => f.holder === holder));
    expect(Object.fromEntries(res.body.groups.map((g: any) => [g.key ?? 'none', g.metrics]))).toEqual(expected);
    expect(Object.keys(expected)).toHaveLength(4);
  });

  test('CSV: the same numbers', async () => {
    const header = (first: string) =>
      `${first},conversations_opened,conversations_resolved,first_response_count,first_response_median_seconds,first_response_average_seconds,resolution_count,resolution_median_seconds,resolution_average_seconds,csat_responses,csat_average_rating,csat_satisfied_percent,sla_breaches,sla_breaches_first_response,sla_breaches_next_response,sla_breaches_resolution\r\n`;
    const summary = await report('summary', 'format=csv');
    expect(summary.status).toBe(200);
    expect(summary.body).toBe(header('from,to,scope,group_key,group_name') + `${DAY},${DAY},total,,,${csvFigures(figures(facts))}\r\n`);
    const series = await report('timeseries', '', { accept: 'text/csv' });
    expect(series.body).toBe(header('day,scope,group_key,group_name') + `${DAY},total,,,${csvFigures(figures(facts))}\r\n`);
    const byAgent = await report('summary', 'groupBy=agent&format=csv');
    for (const [name, agent] of Object.entries(agents)) {
      const row = (byAgent.body as string).split('\r\n').find((line) => line.includes(`,agent,${agent.userId},`));
      expect({ name, row: row?.split(',').slice(-15).join(',') }).toEqual({ name, row: csvFigures(figures(facts.filter((f) => f.holder === agent.userId))) });
    }
  });

  test('the figures are the day\'s expected shape (a check on the script itself)', () => {
    const totals = figures(facts);
    expect(totals.conversationsOpened).toBe(14);
    expect(totals.conversationsResolved).toBe(10);
    expect(totals.csat.responses).toBe(8);
    expect(totals.slaBreaches.first_response).toBe(3);
  });
});
