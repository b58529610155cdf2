import { beforeAll, describe, expect, test } from 'bun:test';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { registerClient } from '../../core/oauth/clients.ts';
import type { Scope } from '../../core/oauth/scopes.ts';
import { hashSecret } from '../../core/tokens/secret.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { useTestService } from '../support/service.ts';
import {
  connectedConnection,
  connectionInbox,
  conversationFromContact,
  eventually,
  helpdeskLine,
  setInboxMembers,
  subscribersDone,
  withoutAutoAssignment,
  type Member,
  type Owner,
} from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Helpdesk reports (issue 7 item 5; spec 2.1 "Report ranges: inclusive on both ends. Day
 * buckets are UTC days"; 2.14 "Helpdesk: reports: Owner, Admin, Manager"). A real service on
 * the sandbox network whose clock the test sets before each step, so that a small known history
 * is built through the API at exact instants, down to the last millisecond of a day:
 *
 * | conversation | inbox   | what happens (UTC)                                                                     |
 * |--------------|---------|----------------------------------------------------------------------------------------|
 * | C6           | Support | created 03-09 23:59:59.999 (before the range); owner replies 03-10 00:00:00.000;       |
 * |              |         | assigned to the owner 03-12 10:00; resolved 03-13 23:59:59.999                         |
 * | C1           | Support | created 03-10 00:00:00.000; agent 00:01; note 00:02; reply 00:05; label Billing;       |
 * |              |         | resolved 01:00; CSAT 5 at 02:00                                                        |
 * | C2           | Support | created 03-10 12:00; labels VIP, Billing; owner replies 03-11 12:00; resolved 13:00    |
 * |              |         | unassigned (survey sent then); agent + team 13:30; reopened 14:00; resolved 15:00;     |
 * |              |         | CSAT 2 at 16:00                                                                        |
 * | C5           | Support | created 03-11 18:00; resolved 18:30 with no reply (only the survey link goes out);    |
 * |              |         | CSAT 4 at 03-13 23:59:59.999                                                           |
 * | C3           | Sales   | created 03-13 23:59:59.999; agent replies, takes and resolves it 03-14 00:00:00.000   |
 * | C4           | Sales   | created 03-14 00:00:00.000 (after the range)                                           |
 *
 * SLA breaches are rows of the SLA feature's table written directly (reaching them through
 * policies means waiting for deadlines; the SLA feature's tests do that), dated by their due time:
 * C1 first response due 03-10 00:04 (the reply came at 00:05), C5 first response due 03-11
 * 18:10, C2 resolution due 03-13 23:59:59.999 and C2 next response due 03-14 00:00:00.000.
 *
 * The range is 03-10 to 03-13; 03-12 has no metric.
 */

const FROM = '2025-03-10';
const TO = '2025-03-13';
let now = Date.parse('2025-03-09T08:00:00.000Z');
const clock = { now: () => new Date(now) };
const at = (iso: string) => void (now = Date.parse(iso));

let owner: Owner;
let agent: Member;
let manager: Member;
let support: string;
let sales: string;
let supportConnection: string;
let salesConnection: string;
let teamId: string;
const ids: Record<string, string> = {};

const db = () => helpdeskDb(service.runtime.ctx.db);
const call = (method: string, path: string, body?: unknown, apikey = owner.token) => service.call(method, path, { apikey, body });
const expectOk = async (pending: Promise<{ status: number; body: any }>, status = 200) => {
  const res = await pending;
  expect({ status: res.status, body: res.status === status ? undefined : res.body }).toEqual({ status, body: undefined });
  return res.body;
};

/** A contact writes at `iso`; answers the conversation once the worker has run every subscriber of its creation. */
async function opened(name: string, connection: string, phone: string, iso: string): Promise<string> {
  at(iso);
  const conversation = await conversationFromContact(service, owner.token, connection, phone, { text: `Hello from ${name}`, pushName: name });
  await subscribersDone(service, owner.workspaceId, 'helpdesk.conversation.created', (d) => d.conversationId === conversation.id);
  ids[name] = conversation.id;
  return conversation.id;
}

const reply = (id: string, iso: string, apikey: string, isPrivate = false) => {
  at(iso);
  return expectOk(call('POST', `/v3/helpdesk/conversations/${id}/messages`, { content: isPrivate ? 'note to self' : 'How can we help?', private: isPrivate }, apikey), 201);
};
const patch = (id: string, iso: string, body: unknown) => {
  at(iso);
  return expectOk(call('PATCH', `/v3/helpdesk/conversations/${id}`, body));
};

/** A status change at `iso`; a resolve of a Support conversation waits until the worker sent its survey (taken once). */
async function status(id: string, iso: string, value: 'RESOLVED' | 'OPEN', apikey = owner.token): Promise<void> {
  at(iso);
  await expectOk(call('POST', `/v3/helpdesk/conversations/${id}/status`, { status: value }, apikey), 201);
  if (value === 'RESOLVED') await subscribersDone(service, owner.workspaceId, 'helpdesk.conversation.status_changed', (d) => d.conversationId === id && d.toStatus === 'RESOLVED');
}

async function rate(id: string, iso: string, rating: number): Promise<void> {
  at(iso);
  const res = await fetch(`${service.url}/public/helpdesk/csat/${id}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ rating: String(rating) }) });
  expect(res.status).toBe(200);
}

const report = (kind: 'summary' | 'timeseries', query: string, apikey = owner.token, headers: Record<string, string> = {}) =>
  service.call('GET', `/v3/helpdesk/reports/${kind}?${query}`, { apikey, headers });

const service = useTestService({ clock });

beforeAll(async () => {
  const line = await helpdeskLine(service, { connection: 'support line', inbox: 'Support' });
  ({ owner, inboxId: support, connectionId: supportConnection } = line);
  salesConnection = await connectedConnection(service, owner.token, 'sales line');
  sales = await connectionInbox(service, owner.token, 'Sales, "EU"', salesConnection);
  agent = await memberWithToken(service, owner, 'AGENT');
  manager = await memberWithToken(service, owner, 'MANAGER');
  for (const inbox of [support, sales]) {
    await setInboxMembers(service, owner.token, inbox, [agent.userId]);
    await withoutAutoAssignment(service, owner.token, inbox);
  }
  teamId = (await expectOk(call('POST', '/v3/helpdesk/teams', { name: '=Tier 1' }), 201)).id;
  await expectOk(call('PUT', `/v3/helpdesk/teams/${teamId}/members`, { userIds: [agent.userId] }));
  await expectOk(call('PUT', `/v3/helpdesk/inboxes/${support}/csat`, { enabled: true }));

  const c6 = await opened('C6', supportConnection, '5511960000006', '2025-03-09T23:59:59.999Z');
  await reply(c6, '2025-03-10T00:00:00.000Z', owner.token);
  const c1 = await opened('C1', supportConnection, '5511960000001', '2025-03-10T00:00:00.000Z');
  await patch(c1, '2025-03-10T00:01:00.000Z', { assigneeUserId: agent.userId });
  await reply(c1, '2025-03-10T00:02:00.000Z', agent.token, true);
  await reply(c1, '2025-03-10T00:05:00.000Z', agent.token);
  at('2025-03-10T00:06:00.000Z');
  await expectOk(call('POST', `/v3/helpdesk/conversations/${c1}/labels`, { labels: ['Billing'] }), 201);
  await status(c1, '2025-03-10T01:00:00.000Z', 'RESOLVED', agent.token);
  await rate(c1, '2025-03-10T02:00:00.000Z', 5);

  const c2 = await opened('C2', supportConnection, '5511960000002', '2025-03-10T12:00:00.000Z');
  at('2025-03-10T12:01:00.000Z');
  await expectOk(call('POST', `/v3/helpdesk/conversations/${c2}/labels`, { labels: ['VIP', 'Billing'] }), 201);
  await reply(c2, '2025-03-11T12:00:00.000Z', owner.token);
  await status(c2, '2025-03-11T13:00:00.000Z', 'RESOLVED');
  await patch(c2, '2025-03-11T13:30:00.000Z', { assigneeUserId: agent.userId, teamId });
  await status(c2, '2025-03-11T14:00:00.000Z', 'OPEN', agent.token);
  await status(c2, '2025-03-11T15:00:00.000Z', 'RESOLVED', agent.token);
  await rate(c2, '2025-03-11T16:00:00.000Z', 2);

  const c5 = await opened('C5', supportConnection, '5511960000005', '2025-03-11T18:00:00.000Z');
  await status(c5, '2025-03-11T18:30:00.000Z', 'RESOLVED');

  await patch(c6, '2025-03-12T10:00:00.000Z', { assigneeUserId: owner.userId });

  const c3 = await opened('C3', salesConnection, '5511960000003', '2025-03-13T23:59:59.999Z');
  await status(c6, '2025-03-13T23:59:59.999Z', 'RESOLVED');
  await rate(c5, '2025-03-13T23:59:59.999Z', 4);

  await opened('C4', salesConnection, '5511960000004', '2025-03-14T00:00:00.000Z');
  await reply(c3, '2025-03-14T00:00:00.000Z', agent.token);
  await patch(c3, '2025-03-14T00:00:00.000Z', { assigneeUserId: agent.userId });
  await status(c3, '2025-03-14T00:00:00.000Z', 'RESOLVED', agent.token);

  const breach = (conversationId: string, target: 'first_response' | 'next_response' | 'resolution', due: string) => ({
    conversation_id: conversationId,
    workspace_id: owner.workspaceId,
    inbox_id: support,
    policy_id: null,
    target,
    due_at: new Date(due),
    breached_at: new Date(Date.parse(due) + 60_000),
  });
  await db()
    .insertInto('helpdesk_sla_breaches')
    .values([
      breach(c1, 'first_response', '2025-03-10T00:04:00.000Z'),
      breach(c5, 'first_response', '2025-03-11T18:10:00.000Z'),
      breach(c2, 'resolution', '2025-03-13T23:59:59.999Z'),
      breach(c2, 'next_response', '2025-03-14T00:00:00.000Z'),
    ])
    .execute();
}, 4 * HOOK_TIMEOUT);

/** Metrics with every figure not named zero or null. */
function metrics(m: {
  opened?: number;
  resolved?: number;
  frt?: [number, number | null, number | null];
  resolution?: [number, number | null, number | null];
  csat?: [number, number | null, number | null];
  sla?: { first_response?: number; next_response?: number; resolution?: number };
}) {
  const sla = { first_response: 0, next_response: 0, resolution: 0, ...m.sla };
  const duration = ([count, median, average]: [number, number | null, number | null] = [0, null, null]) => ({ count, medianSeconds: median, averageSeconds: average });
  const [responses, averageRating, satisfiedPercent] = m.csat ?? [0, null, null];
  return {
    conversationsOpened: m.opened ?? 0,
    conversationsResolved: m.resolved ?? 0,
    firstResponseTime: duration(m.frt),
    resolutionTime: duration(m.resolution),
    csat: { responses, averageRating, satisfiedPercent },
    slaBreaches: { total: sla.first_response + sla.next_response + sla.resolution, ...sla },
  };
}

describe('figures of the known history', () => {
  test('the summary: opened at both range ends counted, a minute beyond not; resolves once per conversation; first replies by people only', async () => {
    const res = await report('summary', `from=${FROM}&to=${TO}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('application/json');
    expect(res.body).toEqual({
      from: FROM,
      to: TO,
      groupBy: null,
      inboxId: null,
      // Opened: C1 (first ms), C2, C5, C3 (last ms); not C6 (ms before) nor C4 (ms after).
      // Resolved: C1 3600 s, C2 97200 s (its last resolve), C5 1800 s, C6 345600 s (last ms); C3 is after.
      // First responses: C6 0.001 s, C1 300 s (not the note), C2 86400 s; C5 only got the survey link; C3 is after.
      // SLA: C1's and C5's first responses, C2's resolution (due at the last ms); C2's next response is due after.
      totals: metrics({ opened: 4, resolved: 4, frt: [3, 300, 28900], resolution: [4, 50400, 112050], csat: [3, 3.67, 66.67], sla: { first_response: 2, resolution: 1 } }),
      groups: [],
    });
  });

  test('the timeseries: every day of the range, the empty one too, each with its own figures', async () => {
    const res = await report('timeseries', `from=${FROM}&to=${TO}`);
    expect(res.status).toBe(200);
    expect(res.body.buckets).toEqual([
      { day: '2025-03-10', metrics: metrics({ opened: 2, resolved: 1, frt: [2, 150.001, 150.001], resolution: [1, 3600, 3600], csat: [1, 5, 100], sla: { first_response: 1 } }) },
      { day: '2025-03-11', metrics: metrics({ opened: 1, resolved: 2, frt: [1, 86400, 86400], resolution: [2, 49500, 49500], csat: [1, 2, 0], sla: { first_response: 1 } }) },
      { day: '2025-03-12', metrics: metrics({}) },
      { day: '2025-03-13', metrics: metrics({ opened: 1, resolved: 1, resolution: [1, 345600, 345600], csat: [1, 4, 100], sla: { resolution: 1 } }) },
    ]);
    expect(res.body.groups).toEqual([]);
  });

  test('per agent: who held the conversation when it happened; opened under the current holder; CSAT under the holder at the survey', async () => {
    const res = await report('summary', `from=${FROM}&to=${TO}&groupBy=agent`);
    expect(res.status).toBe(200);
    const member = (await call('GET', '/v3/members?per_page=100')).body.data.find((m: any) => m.userId === agent.userId);
    expect(res.body.groups.map((g: any) => g.key)).toContain(agent.userId);
    expect(Object.fromEntries(res.body.groups.map((g: any) => [g.key ?? 'none', g.metrics]))).toEqual({
      // C1, C2 and C3 are the agent's now; C1 and C2 were theirs when resolved; C1's reply was under them; C1's survey too.
      // C1's first response was due under them, C2's resolution too.
      [agent.userId]: metrics({ opened: 3, resolved: 2, frt: [1, 300, 300], resolution: [2, 50400, 50400], csat: [1, 5, 100], sla: { first_response: 1, resolution: 1 } }),
      // C6 was the owner's when resolved (assigned on 03-12), not when replied to.
      [owner.userId]: metrics({ resolved: 1, resolution: [1, 345600, 345600] }),
      // C5 held by no one; C6's and C2's replies came before anyone held them; C2's survey went out while unassigned.
      none: metrics({ opened: 1, resolved: 1, frt: [2, 43200.001, 43200.001], resolution: [1, 1800, 1800], csat: [2, 3, 50], sla: { first_response: 1 } }),
    });
    expect(res.body.groups.at(-1).key).toBeNull();
    // Named as the member list names them (their email when they have no name).
    expect(res.body.groups.find((g: any) => g.key === agent.userId).name).toBe(member.name || member.email);
  });

  test('per team, per label (each of its labels) and per inbox, named', async () => {
    const team = await report('summary', `from=${FROM}&to=${TO}&groupBy=team`);
    expect(team.body.groups).toEqual([
      { key: teamId, name: '=Tier 1', metrics: metrics({ opened: 1, resolved: 1, resolution: [1, 97200, 97200], sla: { resolution: 1 } }) },
      { key: null, name: null, metrics: metrics({ opened: 3, resolved: 3, frt: [3, 300, 28900], resolution: [3, 3600, 117000], csat: [3, 3.67, 66.67], sla: { first_response: 2 } }) },
    ]);
    const label = await report('summary', `from=${FROM}&to=${TO}&groupBy=label`);
    expect(label.body.groups).toEqual([
      { key: 'billing', name: 'Billing', metrics: metrics({ opened: 2, resolved: 2, frt: [2, 43350, 43350], resolution: [2, 50400, 50400], csat: [2, 3.5, 50], sla: { first_response: 1, resolution: 1 } }) },
      { key: 'vip', name: 'VIP', metrics: metrics({ opened: 1, resolved: 1, frt: [1, 86400, 86400], resolution: [1, 97200, 97200], csat: [1, 2, 0], sla: { resolution: 1 } }) },
      { key: null, name: null, metrics: metrics({ opened: 2, resolved: 2, frt: [1, 0.001, 0.001], resolution: [2, 173700, 173700], csat: [1, 4, 100], sla: { first_response: 1 } }) },
    ]);
    const inbox = await report('summary', `from=${FROM}&to=${TO}&groupBy=inbox`);
    expect(inbox.body.groups).toEqual([
      { key: sales, name: 'Sales, "EU"', metrics: metrics({ opened: 1 }) },
      { key: support, name: 'Support', metrics: metrics({ opened: 3, resolved: 4, frt: [3, 300, 28900], resolution: [4, 50400, 112050], csat: [3, 3.67, 66.67], sla: { first_response: 2, resolution: 1 } }) },
    ]);
  });

  test('inboxId narrows every figure to one inbox; a one-day range is that day alone', async () => {
    const res = await report('timeseries', `from=${FROM}&to=${TO}&inboxId=${sales}&groupBy=agent`);
    expect(res.status).toBe(200);
    expect(res.body.inboxId).toBe(sales);
    expect(res.body.buckets.map((b: any) => b.metrics.conversationsOpened)).toEqual([0, 0, 0, 1]);
    expect(res.body.groups).toEqual([{ key: agent.userId, name: expect.any(String), buckets: res.body.buckets }]);
    const lastDay = await report('summary', `from=${TO}&to=${TO}`);
    expect(lastDay.body.totals).toEqual(metrics({ opened: 1, resolved: 1, resolution: [1, 345600, 345600], csat: [1, 4, 100], sla: { resolution: 1 } }));
    const dayAfter = await report('summary', 'from=2025-03-14&to=2025-03-14');
    // C4, C3's reply and resolve, C2's next response due: all at 00:00:00.000 of the day after.
    expect(dayAfter.body.totals).toEqual(metrics({ opened: 1, resolved: 1, frt: [1, 0.001, 0.001], resolution: [1, 0.001, 0.001], sla: { next_response: 1 } }));
  });
});

describe('CSV', () => {
  const header = (first: string) =>
    `${first},conversations_opened,conversations_resolved,first_response_count,first_response_median_seconds,first_response_average_seconds,resolution_count,resolution_median_seconds,resolution_average_seconds,csat_responses,csat_average_rating,csat_satisfied_percent,sla_breaches,sla_breaches_first_response,sla_breaches_next_response,sla_breaches_resolution\r\n`;

  test('format=csv: a download with a header row, quoted names, inert formulas and the same figures', async () => {
    const res = await report('summary', `from=${FROM}&to=${TO}&groupBy=team&format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="helpdesk-summary-${FROM}-to-${TO}-by-team.csv"`);
    expect(res.body).toBe(
      header('from,to,scope,group_key,group_name') +
        `${FROM},${TO},total,,,4,4,3,300,28900,4,50400,112050,3,3.67,66.67,3,2,0,1\r\n` +
        `${FROM},${TO},team,${teamId},'=Tier 1,1,1,0,,,1,97200,97200,0,,,1,0,0,1\r\n` +
        `${FROM},${TO},team,,,3,3,3,300,28900,3,3600,117000,3,3.67,66.67,2,2,0,0\r\n`,
    );
    const inbox = await report('summary', `from=${FROM}&to=${TO}&groupBy=inbox&format=csv`);
    expect(inbox.body).toContain(`${FROM},${TO},inbox,${sales},"Sales, ""EU""",1,0,0,,,0,,,0,,,0,0,0,0\r\n`);
  });

  test('Accept: text/csv gives the timeseries as CSV, every day present; format=json wins over Accept', async () => {
    const res = await report('timeseries', `from=${FROM}&to=${TO}`, owner.token, { accept: 'text/csv' });
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.body).toBe(
      header('day,scope,group_key,group_name') +
        '2025-03-10,total,,,2,1,2,150.001,150.001,1,3600,3600,1,5,100,1,1,0,0\r\n' +
        '2025-03-11,total,,,1,2,1,86400,86400,2,49500,49500,1,2,0,1,1,0,0\r\n' +
        '2025-03-12,total,,,0,0,0,,,0,,,0,,,0,0,0,0\r\n' +
        '2025-03-13,total,,,1,1,0,,,1,345600,345600,1,4,100,1,0,0,1\r\n',
    );
    const json = await report('timeseries', `from=${FROM}&to=${TO}&format=json`, owner.token, { accept: 'text/csv' });
    expect(json.headers.get('content-type')).toStartWith('application/json');
    expect(json.body.buckets).toHaveLength(4);
  });
});

describe('who may read, and what is refused', () => {
  test('Owners and Managers read (any plan); Agents get 403 whatever they ask', async () => {
    expect((await report('summary', `from=${FROM}&to=${TO}`, manager.token)).status).toBe(200);
    const free = await service.bootstrap({ plan: 'FREE' });
    const empty = await report('timeseries', `from=${FROM}&to=${FROM}`, free.token);
    expect(empty.status).toBe(200);
    expect(empty.body.buckets).toEqual([{ day: FROM, metrics: metrics({}) }]);
    expectStandardError(await report('summary', `from=${FROM}&to=${TO}`, agent.token), 403, 'Forbidden');
    expectStandardError(await report('timeseries', 'from=bad', agent.token), 403, 'Forbidden');
    expectStandardError(await report('summary', `from=${FROM}&to=${TO}`, 'sk_live_nope'), 401, 'Unauthorized');
  });

  test('OAuth: a token with stats:read or helpdesk:read reads reports; one with neither gets 403 insufficient_scope', async () => {
    const ctx = service.runtime.ctx;
    const stores = baseStores(ctx.db);
    const client = await registerClient(stores, { ...ctx, issuer: ctx.config.publicUrl, dynamicRegistration: true }, { redirect_uris: ['https://app.example/cb'] });
    const consentId = crypto.randomUUID();
    await stores.oauth.insertConsent({ id: consentId, clientId: client.client_id, userId: owner.userId, workspaceId: owner.workspaceId, scopes: ['stats:read', 'helpdesk:read', 'contacts:read'], createdAt: clock.now(), updatedAt: clock.now() });
    const bearer = async (scopes: Scope[]) => {
      const secret = `sbat_test_${crypto.randomUUID()}`;
      await stores.oauth.insertToken({ id: crypto.randomUUID(), hash: hashSecret(secret), kind: 'ACCESS', state: 'ACTIVE', consentId, clientId: client.client_id, userId: owner.userId, workspaceId: owner.workspaceId, scopes, resource: null, createdAt: clock.now(), expiresAt: new Date(now + 3600_000) });
      return { authorization: `Bearer ${secret}` };
    };
    for (const scopes of [['stats:read'], ['helpdesk:read']] as Scope[][]) {
      const res = await service.call('GET', `/v3/helpdesk/reports/summary?from=${FROM}&to=${TO}`, { headers: await bearer(scopes) });
      expect({ scopes, status: res.status, opened: res.body.totals?.conversationsOpened }).toEqual({ scopes, status: 200, opened: 4 });
    }
    const refused = await service.call('GET', `/v3/helpdesk/reports/timeseries?from=${FROM}&to=${TO}&format=csv`, { headers: await bearer(['contacts:read']) });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('insufficient_scope');
  });

  test('bad queries are 400 listing every problem; an unknown inbox is 404', async () => {
    const missing = await report('summary', '');
    expectStandardError(missing, 400, 'Bad Request');
    expect(missing.body.message).toEqual(['query.from is required: a UTC day YYYY-MM-DD', 'query.to is required: a UTC day YYYY-MM-DD']);
    const bad = await report('timeseries', 'from=2025-02-29&to=2025-13-01&groupBy=contact&inboxId=42&format=xml');
    expectStandardError(bad, 400, 'Bad Request');
    expect(bad.body.message).toEqual([
      'query.from must be a UTC day YYYY-MM-DD (a real date)',
      'query.to must be a UTC day YYYY-MM-DD (a real date)',
      'query.groupBy must be one of inbox, agent, team, label',
      'query.inboxId must be an inbox id',
      'query.format must be one of json, csv',
    ]);
    expect((await report('summary', 'from=2025-03-13&to=2025-03-10')).body.message).toEqual(['query.from must not be after query.to']);
    expect((await report('summary', 'from=2024-01-01&to=2024-12-31')).status).toBe(200);
    expect((await report('summary', 'from=2024-01-01&to=2025-01-01')).body.message).toEqual(['the range from query.from to query.to must be at most 366 days (both ends count)']);
    expectStandardError(await report('summary', `from=${FROM}&to=${TO}&inboxId=${crypto.randomUUID()}`), 404, 'Not Found');
    const other = await service.bootstrap({ plan: 'PRO' });
    expectStandardError(await report('summary', `from=${FROM}&to=${TO}&inboxId=${support}`, other.token), 404, 'Not Found');
  });
});
