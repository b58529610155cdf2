import { beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { HELPDESK_EVENT_TYPES } from '../../core/helpdesk/events.ts';
import { useOwner, useTestService } from '../support/service.ts';
import { deliveriesSettled } from '../support/wait.ts';
import { useReceiver, type Hit } from '../support/webhook-receiver.ts';
import { connectedConnection, connectionInbox, injectContactMessage, useHelpdeskWorkspace, withoutAutoAssignment } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, UUID } from './helpers.ts';

/**
 * Helpdesk webhooks (issue 6 item 6; spec 2.9, 4.4, 6.5): "Envelope: `{ event: <type>, data:
 * <event object>, deliveredAt: <timestamp> }`; `data.type` repeats the event type and
 * `data.accountId` is the workspace" — "Delivery headers: `X-Helpdesk-Event` (event name) and
 * `X-Helpdesk-Signature` (hex HMAC-SHA256 of the raw body alone, no timestamp, keyed with
 * `signingSecret`). Retries: 3 attempts, exponential backoff from 5 seconds, 10-second timeout."
 */

const SECRET = 'a-secret-the-customer-chose-1234';
const receiver = useReceiver();
let otherConnectionId: string;
let otherInboxId: string;

const service = useTestService();
// Conversations start unassigned here, so every assignment event is the test's own.
const hd = useHelpdeskWorkspace(service, { connection: 'line one', inbox: 'One', manualAssignment: true });
const { owner, agent } = hd;
const free = useOwner(service, { plan: 'FREE' });

beforeAll(async () => {
  otherConnectionId = await connectedConnection(service, owner.token, 'line two');
  otherInboxId = await connectionInbox(service, owner.token, 'Two', otherConnectionId);
  await withoutAutoAssignment(service, owner.token, otherInboxId);
}, HOOK_TIMEOUT);

const create = (body: unknown, apikey = owner.token) => service.call('POST', '/v3/helpdesk/webhooks', { apikey, body });
const inject = (connection: string, from: string, text: string) => injectContactMessage(service, owner.token, connection, { from, text, pushName: 'Ana' });

function verifies(hit: Hit, secret: string): boolean {
  return hit.headers.get('x-helpdesk-signature') === createHmac('sha256', secret).update(hit.raw).digest('hex');
}

async function hitsOf(path: string, event: string, count = 1): Promise<Hit[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = receiver.hits(path).filter((h) => h.json?.event === event);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`no ${event} on ${path}: got ${receiver.hits(path).map((h) => h.json?.event).join(', ')}`);
    await Bun.sleep(50);
  }
}

describe('managing helpdesk webhooks', () => {
  test('created with the caller\'s secret, which is never returned; listed, read, changed and deleted', async () => {
    const created = await create({ url: receiver.url('/crud'), subscriptions: ['helpdesk.conversation.created'], signingSecret: SECRET });
    expect(created.status).toBe(201);
    // (Bun's toMatchObject writes its matchers into the received object: check a copy.)
    expect({ ...created.body }).toMatchObject({ id: expect.stringMatching(UUID), url: receiver.url('/crud'), subscriptions: ['helpdesk.conversation.created'], inboxId: null, signingSecretChosen: true });
    expect(JSON.stringify(created.body)).not.toContain(SECRET);

    const generated = await create({ url: receiver.url('/crud'), subscriptions: ['helpdesk.label.created'] });
    expect(generated.body.signingSecretChosen).toBe(false);

    const listed = await service.call('GET', '/v3/helpdesk/webhooks', { apikey: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((w: any) => w.id)).toEqual(expect.arrayContaining([created.body.id, generated.body.id]));
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);

    const patched = await service.call('PATCH', `/v3/helpdesk/webhooks/${created.body.id}`, { apikey: owner.token, body: { inboxId: hd.inboxId, subscriptions: ['helpdesk.message.created'] } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ inboxId: hd.inboxId, subscriptions: ['helpdesk.message.created'], url: receiver.url('/crud') });

    for (const id of [created.body.id, generated.body.id]) expect((await service.call('DELETE', `/v3/helpdesk/webhooks/${id}`, { apikey: owner.token })).body).toEqual({ id, deleted: true });
    expectStandardError(await service.call('GET', `/v3/helpdesk/webhooks/${created.body.id}`, { apikey: owner.token }), 404, 'Not Found');
  });

  test('bad settings are refused with every problem listed', async () => {
    const res = await create({ url: 'ftp://example.com/x', subscriptions: ['helpdesk.nope', 'messages.upsert'], signingSecret: 'short', inboxId: crypto.randomUUID() });
    expect(res.status).toBe(400);
    const text = JSON.stringify(res.body);
    for (const part of ['body.url', 'helpdesk.nope', 'messages.upsert', 'body.signingSecret', 'body.inboxId']) expect(text).toContain(part);
    expect((await create({ url: receiver.url('/x'), subscriptions: [] })).status).toBe(400);
  });

  test('helpdesk configuration: an Agent may not, and a FREE workspace needs PRO (HELPDESK_PLAN_REQUIRED)', async () => {
    expectStandardError(await create({ url: receiver.url('/x'), subscriptions: ['helpdesk.message.created'] }, agent.token), 403, 'Forbidden');
    expect((await service.call('GET', '/v3/helpdesk/webhooks', { apikey: agent.token })).status).toBe(403);
    const res = await create({ url: receiver.url('/x'), subscriptions: ['helpdesk.message.created'] }, free.token);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('HELPDESK_PLAN_REQUIRED');
    // Reads need no plan.
    expect((await service.call('GET', '/v3/helpdesk/webhooks', { apikey: free.token })).status).toBe(200);
  });
});

describe('delivery of helpdesk events', () => {
  test('every conversation event of a working session arrives signed, in the envelope, with the table\'s fields', async () => {
    const webhook = await create({ url: receiver.url('/all'), subscriptions: [...HELPDESK_EVENT_TYPES], signingSecret: SECRET });
    expect(webhook.status).toBe(201);

    await inject(hd.connectionId, '5511955550001', 'hello, I need help');
    const [created] = await hitsOf('/all', 'helpdesk.conversation.created');
    const conversationId = created!.json.data.conversationId;
    expect(created!.json).toEqual({
      event: 'helpdesk.conversation.created',
      data: {
        type: 'helpdesk.conversation.created',
        accountId: owner.workspaceId,
        conversationId: expect.stringMatching(UUID),
        inboxId: hd.inboxId,
        contactId: expect.stringMatching(UUID),
        displayId: expect.any(Number),
        status: 'OPEN',
        priority: null,
        assigneeUserId: null,
        teamId: null,
      },
      deliveredAt: expect.any(String),
    });
    expect(created!.headers.get('x-helpdesk-event')).toBe('helpdesk.conversation.created');
    expect(verifies(created!, SECRET)).toBe(true);
    expect(verifies(created!, 'another-secret-of-16-chars')).toBe(false);

    const [incoming] = await hitsOf('/all', 'helpdesk.message.created');
    // "Messages in REST responses and in realtime events have the same fully hydrated shape."
    const listed = await service.call('GET', `/v3/helpdesk/conversations/${conversationId}/messages`, { apikey: owner.token });
    expect(incoming!.json.data).toMatchObject({ type: 'helpdesk.message.created', accountId: owner.workspaceId, conversationId, inboxId: hd.inboxId });
    expect(incoming!.json.data.message).toEqual(listed.body[0]);

    const call = (method: string, path: string, body?: unknown) => service.call(method, `/v3/helpdesk/conversations/${conversationId}${path}`, { apikey: owner.token, body });
    expect((await call('PATCH', '', { priority: 'URGENT', assigneeUserId: agent.userId, customAttributes: { plan: 'gold' }, aiAgentEnabled: true })).status).toBe(200);
    expect((await call('POST', '/labels', { labels: ['billing', 'vip'] })).status).toBe(201);
    expect((await call('POST', '/labels', { labels: ['vip', 'refund'] })).status).toBe(201);
    expect((await call('POST', '/read')).status).toBe(201);
    expect((await call('POST', '/status', { status: 'RESOLVED' })).status).toBe(201);

    const data = async (event: string, count = 1) => (await hitsOf('/all', event, count)).map((h) => h.json.data);
    expect((await data('helpdesk.conversation.priority_changed'))[0]).toMatchObject({ conversationId, inboxId: hd.inboxId, fromPriority: null, toPriority: 'URGENT', actorUserId: owner.userId });
    expect((await data('helpdesk.conversation.assignee_changed'))[0]).toMatchObject({
      conversationId,
      inboxId: hd.inboxId,
      fromAssigneeUserId: null,
      toAssigneeUserId: agent.userId,
      fromTeamId: null,
      toTeamId: null,
      actorUserId: owner.userId,
    });
    expect((await data('helpdesk.conversation.updated'))[0]).toMatchObject({ conversationId, inboxId: hd.inboxId, changedFields: ['customAttributes'] });
    expect((await data('helpdesk.conversation.ai_agent_changed'))[0]).toMatchObject({ conversationId, inboxId: hd.inboxId, aiAgentEnabled: true });
    // Deliveries go out side by side (they may arrive in either order): told apart by content.
    const labels = (await data('helpdesk.conversation.labels_changed', 2)).sort((a, b) => a.removedLabelIds.length - b.removedLabelIds.length);
    // The delta, not the final list.
    expect(labels[0].removedLabelIds).toEqual([]);
    expect(labels[0].addedLabelIds).toHaveLength(2);
    expect(labels[1].addedLabelIds).toHaveLength(1);
    expect(labels[1].removedLabelIds).toHaveLength(1);
    // The owner read it, but the agent is the assignee: the marker does not move, so no event yet.
    const status = (await data('helpdesk.conversation.status_changed'))[0];
    expect(status).toEqual({ type: 'helpdesk.conversation.status_changed', accountId: owner.workspaceId, conversationId, inboxId: hd.inboxId, fromStatus: 'OPEN', toStatus: 'RESOLVED', actorUserId: owner.userId });
    // The resolve left an activity message, which is a message too.
    const activity = (await data('helpdesk.message.created', 2)).find((d) => d.message.direction === 'activity');
    expect(activity?.message).toMatchObject({ direction: 'activity', content: expect.stringContaining('resolved') });

    expect((await service.call('POST', `/v3/helpdesk/conversations/${conversationId}/read`, { apikey: agent.token })).status).toBe(201);
    expect((await data('helpdesk.conversation.read'))[0]).toMatchObject({ conversationId, inboxId: hd.inboxId, userId: agent.userId, assigneeLastSeenAt: expect.any(String) });

    // Each event was delivered once, and the history shows it.
    await deliveriesSettled(service);
    const deliveryIds = receiver.hits('/all').map((h) => h.headers.get('x-switchboard-delivery'));
    expect(new Set(deliveryIds).size).toBe(deliveryIds.length);
    const history = await service.call('GET', `/v3/helpdesk/webhooks/${webhook.body.id}/deliveries?per_page=100`, { apikey: owner.token });
    expect(history.status).toBe(200);
    expect(history.body.total).toBe(receiver.hits('/all').length);
    expect(history.body.data.every((d: any) => d.state === 'SUCCEEDED' && d.attemptLog.length === 1 && d.attemptLog[0].statusCode === 200)).toBe(true);
  }, 60_000);

  test('an inbox\'s webhook hears only that inbox; a subscription hears only its events', async () => {
    const onlyOne = await create({ url: receiver.url('/inbox-one'), subscriptions: ['helpdesk.conversation.created'], inboxId: hd.inboxId, signingSecret: SECRET });
    const everywhere = await create({ url: receiver.url('/everywhere'), subscriptions: ['helpdesk.conversation.created'], signingSecret: SECRET });
    expect(onlyOne.status).toBe(201);
    expect(everywhere.status).toBe(201);
    await inject(otherConnectionId, '5511955550002', 'on the second line');
    await inject(hd.connectionId, '5511955550003', 'on the first line');
    const both = await receiver.waitFor('/everywhere', 2);
    expect(new Set(both.map((h) => h.json.data.inboxId))).toEqual(new Set([hd.inboxId, otherInboxId]));
    const one = await receiver.waitFor('/inbox-one', 1);
    await deliveriesSettled(service);
    expect(receiver.hits('/inbox-one')).toHaveLength(1);
    expect(one[0]!.json.data.inboxId).toBe(hd.inboxId);
    expect(receiver.hits('/everywhere').every((h) => h.json.event === 'helpdesk.conversation.created')).toBe(true);
  }, 40_000);

  test('a failing endpoint is retried (5 s later) until it answers below 400', async () => {
    receiver.script('/flaky', 503);
    const webhook = await create({ url: receiver.url('/flaky'), subscriptions: ['helpdesk.conversation.created'], inboxId: otherInboxId, signingSecret: SECRET });
    await inject(otherConnectionId, '5511955550004', 'retry me');
    const hits = await receiver.waitFor('/flaky', 2, 20_000);
    expect(hits[0]!.text).toBe(hits[1]!.text);
    expect(hits[1]!.at - hits[0]!.at).toBeGreaterThanOrEqual(4_500);
    let delivery: any;
    for (let i = 0; i < 50 && delivery?.state !== 'SUCCEEDED'; i++) {
      delivery = (await service.call('GET', `/v3/helpdesk/webhooks/${webhook.body.id}/deliveries`, { apikey: owner.token })).body.data[0];
      await Bun.sleep(100);
    }
    expect(delivery).toMatchObject({ state: 'SUCCEEDED', attempts: 2, event: 'helpdesk.conversation.created' });
    expect(delivery.attemptLog.map((a: any) => a.statusCode)).toEqual([503, 200]);
  }, 40_000);
});

describe('POST /v3/helpdesk/webhooks/{id}/test', () => {
  test('runs at once and answers { status, durationMs }; the request is signed', async () => {
    receiver.script('/probe', 202);
    const webhook = await create({ url: receiver.url('/probe'), subscriptions: ['helpdesk.label.created'], signingSecret: SECRET });
    const res = await service.call('POST', `/v3/helpdesk/webhooks/${webhook.body.id}/test`, { apikey: owner.token });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 202, durationMs: expect.any(Number) });
    const [hit] = receiver.hits('/probe');
    expect(hit!.headers.get('x-helpdesk-event')).toBe('helpdesk.webhook.test');
    expect(verifies(hit!, SECRET)).toBe(true);
    expect(hit!.json.data).toMatchObject({ type: 'helpdesk.webhook.test', accountId: owner.workspaceId, webhookId: webhook.body.id });

    receiver.script('/probe', 500);
    expect((await service.call('POST', `/v3/helpdesk/webhooks/${webhook.body.id}/test`, { apikey: owner.token })).body.status).toBe(500);
    // The test is not a delivery: nothing in the history.
    expect((await service.call('GET', `/v3/helpdesk/webhooks/${webhook.body.id}/deliveries`, { apikey: owner.token })).body.total).toBe(0);
  });

  test('an endpoint that does not answer: status null and the reason', async () => {
    const dead = Bun.serve({ port: 0, fetch: () => new Response('') });
    const url = `http://127.0.0.1:${dead.port}/gone`;
    dead.stop(true);
    const webhook = await create({ url, subscriptions: ['helpdesk.label.created'] });
    const res = await service.call('POST', `/v3/helpdesk/webhooks/${webhook.body.id}/test`, { apikey: owner.token });
    expect(res.status).toBe(201);
    // Issue 19: "Test endpoints and error records say 'refused by the outbound policy' or 'delivery failed'".
    expect(res.body).toMatchObject({ status: null, durationMs: expect.any(Number), error: 'delivery failed' });
    expect((await service.call('POST', `/v3/helpdesk/webhooks/${crypto.randomUUID()}/test`, { apikey: owner.token })).status).toBe(404);
  });
});
