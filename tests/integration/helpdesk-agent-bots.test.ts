import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { type TestService, useTestService } from '../support/service.ts';
import { deliveriesSettled } from '../support/wait.ts';
import {
  connectedConnection,
  connectionInbox,
  eventually,
  helpdeskEvents,
  helpdeskWorkspace,
  injectContactMessage,
  sentToContact,
  subscribersDone,
  conversationOfContact,
  type HelpdeskWorkspace,
} from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * Agent bots (issue 7 item 4): "a bot bound to an inbox receives conversation events on its own
 * webhook and answers through the API (takes the conversation first, hands over to humans);
 * assignment events carry `fromAgentBotId`/`toAgentBotId`" (spec 6.5: conversation.assignee_changed
 * "with a bot also `fromAgentBotId`, `toAgentBotId`"). The bot here is a real HTTP server: it
 * checks the signature of what it receives, echoes a contact's message back through the bot API
 * and hands the conversation over when the contact asks for a human.
 */

interface BotHit {
  raw: string;
  json: any;
  headers: Headers;
}

/** A bot on Bun.serve: records every delivery; answers the contact's messages through the bot API. */
function startBot(service: () => TestService, token: () => string) {
  const hits: BotHit[] = [];
  const calls: Array<{ kind: 'reply' | 'handoff'; conversationId: string; status: number; body: any }> = [];
  const call = async (kind: 'reply' | 'handoff', conversationId: string, body: unknown) => {
    const path = `/v3/helpdesk/agent-bot/conversations/${conversationId}/${kind === 'reply' ? 'messages' : 'handoff'}`;
    const res = await service().call('POST', path, { headers: { 'x-agent-bot-token': token() }, body });
    calls.push({ kind, conversationId, status: res.status, body: res.body });
  };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const raw = await request.text();
      const json = JSON.parse(raw);
      hits.push({ raw, json, headers: request.headers });
      const message = json.data?.message;
      if (json.event === 'helpdesk.message.created' && message?.direction === 'incoming') {
        // Answer after acknowledging the delivery, as a bot behind a queue would.
        setTimeout(() => {
          if (/human/i.test(message.content)) void call('handoff', json.data.conversationId, {});
          else void call('reply', json.data.conversationId, { content: `Bot here. You said: ${message.content}` });
        }, 10);
      }
      return new Response('ok');
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/bot`,
    hits,
    calls,
    stop: () => server.stop(true),
    /** The deliveries of this event type (about this conversation), once there are `count`. */
    async received(event: string, conversationId?: string, count = 1): Promise<BotHit[]> {
      return eventually(async () => {
        const found = hits.filter((h) => h.json.event === event && (conversationId === undefined || h.json.data.conversationId === conversationId));
        return found.length >= count ? found : undefined;
      }, `${count} ${event} on the bot`);
    },
  };
}

const signed = (hit: BotHit, secret: string) => hit.headers.get('x-helpdesk-signature') === createHmac('sha256', secret).update(hit.raw).digest('hex');

let ws: HelpdeskWorkspace;
let bot: ReturnType<typeof startBot>;
let botId: string;
let accessToken: string;
let signingSecret: string;

const service = useTestService();

beforeAll(async () => {
  ws = await helpdeskWorkspace(service, { connection: 'bot line', inbox: 'Front desk' });
  bot = startBot(() => service, () => accessToken);
}, HOOK_TIMEOUT);

afterAll(async () => {
  bot?.stop();
}, HOOK_TIMEOUT);

const owner = () => ws.owner.token;
const botCall = (method: string, path: string, token: string | undefined, body?: unknown) =>
  service.call(method, `/v3/helpdesk/agent-bot/conversations${path}`, { headers: token === undefined ? {} : { 'x-agent-bot-token': token }, body });

describe('managing agent bots', () => {
  test('created with its secrets shown once; read, listed, changed; an inbox has at most one bot (409)', async () => {
    const created = await service.call('POST', '/v3/helpdesk/agent-bots', {
      apikey: owner(),
      body: { name: '  Greeter ', description: 'Answers first', webhookUrl: bot.url, inboxIds: [ws.inboxId] },
    });
    expect(created.status).toBe(201);
    expect({ ...created.body }).toMatchObject({
      id: expect.stringMatching(UUID),
      name: 'Greeter',
      description: 'Answers first',
      webhookUrl: bot.url,
      inboxIds: [ws.inboxId],
      accessToken: expect.stringMatching(/^hdbot_[A-Za-z0-9_-]{43}$/),
      signingSecret: expect.stringMatching(/^hdbotsec_[A-Za-z0-9_-]{43}$/),
    });
    ({ id: botId, accessToken, signingSecret } = created.body);
    expect(created.body.accessTokenLast4).toBe(accessToken.slice(-4));

    const read = await service.call('GET', `/v3/helpdesk/agent-bots/${botId}`, { apikey: owner() });
    expect(read.status).toBe(200);
    const listed = await service.call('GET', '/v3/helpdesk/agent-bots?s=greet', { apikey: owner() });
    expect(listed.body.data.map((b: any) => b.id)).toEqual([botId]);
    for (const body of [read.body, listed.body]) {
      expect(JSON.stringify(body)).not.toContain(accessToken);
      expect(JSON.stringify(body)).not.toContain(signingSecret);
    }

    // Another bot may not serve the same inbox, at creation or later.
    const rival = await service.call('POST', '/v3/helpdesk/agent-bots', { apikey: owner(), body: { name: 'Rival', webhookUrl: bot.url, inboxIds: [ws.inboxId] } });
    expectStandardError(rival, 409, 'Conflict');
    expect(rival.body.message).toContain(ws.inboxId);
    const spare = await service.call('POST', '/v3/helpdesk/agent-bots', { apikey: owner(), body: { name: 'Spare', webhookUrl: bot.url } });
    expect(spare.status).toBe(201);
    expect(spare.body.inboxIds).toEqual([]);
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/agent-bots/${spare.body.id}`, { apikey: owner(), body: { inboxIds: [ws.inboxId] } }), 409, 'Conflict');
    const renamed = await service.call('PATCH', `/v3/helpdesk/agent-bots/${spare.body.id}`, { apikey: owner(), body: { name: 'Spare two', description: null } });
    expect(renamed.body).toMatchObject({ name: 'Spare two', description: null, webhookUrl: bot.url, inboxIds: [] });
    expect((await service.call('DELETE', `/v3/helpdesk/agent-bots/${spare.body.id}`, { apikey: owner() })).body).toEqual({ id: spare.body.id, deleted: true });
    expectStandardError(await service.call('GET', `/v3/helpdesk/agent-bots/${spare.body.id}`, { apikey: owner() }), 404, 'Not Found');
  });

  test('bad settings are refused with every problem listed', async () => {
    const res = await service.call('POST', '/v3/helpdesk/agent-bots', { apikey: owner(), body: { name: ' ', webhookUrl: 'ftp://x', inboxIds: [crypto.randomUUID()] } });
    expectStandardError(res, 400, 'Bad Request');
    const text = JSON.stringify(res.body.message);
    for (const part of ['body.name', 'body.webhookUrl', 'body.inboxIds']) expect(text).toContain(part);
  });

  test('helpdesk configuration: Managers manage bots, Agents may not even read them, a FREE workspace needs PRO', async () => {
    const manager = await memberWithToken(service, ws.owner, 'MANAGER');
    expect((await service.call('GET', '/v3/helpdesk/agent-bots', { apikey: manager.token })).status).toBe(200);
    expectStandardError(await service.call('GET', '/v3/helpdesk/agent-bots', { apikey: ws.agent.token }), 403, 'Forbidden');
    expectStandardError(await service.call('POST', '/v3/helpdesk/agent-bots', { apikey: ws.agent.token, body: { name: 'x', webhookUrl: bot.url } }), 403, 'Forbidden');
    const free = await service.bootstrap({ plan: 'FREE' });
    const refused = await service.call('POST', '/v3/helpdesk/agent-bots', { apikey: free.token, body: { name: 'x', webhookUrl: bot.url } });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('HELPDESK_PLAN_REQUIRED');
    expect((await service.call('GET', '/v3/helpdesk/agent-bots', { apikey: free.token })).status).toBe(200);
  });
});

describe('a bot takes the conversation, answers it and hands it over', () => {
  let conversationId: string;

  test('a contact writes: the bot takes the conversation first and hears it, signed with its own secret', async () => {
    expect((await injectContactMessage(service, owner(), ws.connectionId, { from: '5511977770001', text: 'Where is my parcel?', pushName: 'Ana' })).status).toBe(201);
    const [created] = await bot.received('helpdesk.conversation.created');
    conversationId = created!.json.data.conversationId;
    expect(created!.json).toMatchObject({ event: 'helpdesk.conversation.created', data: { type: 'helpdesk.conversation.created', accountId: ws.owner.workspaceId, inboxId: ws.inboxId } });
    expect(created!.headers.get('x-helpdesk-event')).toBe('helpdesk.conversation.created');
    expect(signed(created!, signingSecret)).toBe(true);
    expect(signed(created!, accessToken)).toBe(false);

    // The contact's first message reaches the bot too, hydrated as REST shows it.
    const [incoming] = await bot.received('helpdesk.message.created', conversationId);
    expect(incoming!.json.data.message).toMatchObject({ direction: 'incoming', content: 'Where is my parcel?' });
    expect(signed(incoming!, signingSecret)).toBe(true);

    const [taken] = await bot.received('helpdesk.conversation.assignee_changed', conversationId);
    expect(taken!.json.data).toMatchObject({ fromAgentBotId: null, toAgentBotId: botId, fromAssigneeUserId: null, toAssigneeUserId: null, actorUserId: null });

    // The bot holds it: round-robin (the Agent is the inbox's only member) left it alone.
    await subscribersDone(service, ws.owner.workspaceId, 'helpdesk.conversation.created', (d) => d.conversationId === conversationId);
    const conversation = (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}`, { apikey: owner() })).body;
    expect(conversation).toMatchObject({ assigneeAgentBotId: botId, assigneeUserId: null });
  });

  test('the bot answers through the API: sent like an agent\'s reply, from the bot, and the contact gets it', async () => {
    const reply = await eventually(async () => bot.calls.find((c) => c.kind === 'reply' && c.conversationId === conversationId), 'the bot\'s reply');
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ direction: 'outgoing', private: false, content: 'Bot here. You said: Where is my parcel?', senderUserId: null, senderAgentBotId: botId, status: 'PENDING' });
    await sentToContact(service, owner(), ws.connectionId, '5511977770001', 'Bot here. You said: Where is my parcel?');
    // The reply's own event reaches the bot as well (the bot holds the conversation).
    const echoes = await bot.received('helpdesk.message.created', conversationId, 2);
    expect(echoes.some((h) => h.json.data.message.id === reply.body.id && h.json.data.message.senderAgentBotId === botId)).toBe(true);
    const listed = (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}/messages`, { apikey: owner() })).body;
    expect(listed.find((m: any) => m.id === reply.body.id)).toMatchObject({ senderUserId: null, senderAgentBotId: botId });
  });

  test('the bot reads the conversation it holds; a wrong or missing token is 401, another conversation 404', async () => {
    expect((await botCall('GET', `/${conversationId}`, accessToken)).body).toMatchObject({ id: conversationId, assigneeAgentBotId: botId });
    const messages = await botCall('GET', `/${conversationId}/messages?limit=10`, accessToken);
    expect(messages.status).toBe(200);
    expect(messages.body.map((m: any) => m.content)).toContain('Where is my parcel?');

    for (const token of [undefined, '', 'hdbot_wrong', `${accessToken}x`, ws.owner.token]) {
      expectStandardError(await botCall('POST', `/${conversationId}/messages`, token, { content: 'hi' }), 401, 'Unauthorized');
    }
    // The agent routes do not take the bot's token, the bot routes not an API key.
    expect((await service.call('GET', `/v3/helpdesk/conversations/${conversationId}`, { headers: { 'x-agent-bot-token': accessToken } })).status).toBe(401);
    expect((await service.call('POST', `/v3/helpdesk/agent-bot/conversations/${conversationId}/handoff`, { apikey: owner(), body: {} })).status).toBe(401);

    // A conversation of an inbox the bot does not serve: 404, as one that does not exist.
    const otherConnection = await connectedConnection(service, owner(), 'line without bot');
    await connectionInbox(service, owner(), 'No bot here', otherConnection);
    expect((await injectContactMessage(service, owner(), otherConnection, { from: '5511977770009', text: 'hello?' })).status).toBe(201);
    const other = await conversationOfContact(service, owner(), '5511977770009');
    for (const path of [`/${other.id}`, `/${other.id}/messages`]) expectStandardError(await botCall('GET', path, accessToken), 404, 'Not Found');
    expectStandardError(await botCall('POST', `/${other.id}/messages`, accessToken, { content: 'not mine' }), 404, 'Not Found');
    expectStandardError(await botCall('POST', `/${other.id}/handoff`, accessToken, {}), 404, 'Not Found');
    expectStandardError(await botCall('POST', `/${crypto.randomUUID()}/messages`, accessToken, { content: 'x' }), 404, 'Not Found');
    expectStandardError(await botCall('POST', `/${conversationId}/messages`, accessToken, { content: '  ' }), 400, 'Bad Request');
    expect((await helpdeskEvents(service, ws.owner.workspaceId, 'helpdesk.conversation.assignee_changed')).some((e) => e.conversationId === other.id && e.toAgentBotId)).toBe(false);
  });

  test('the contact asks for a human: the bot hands off, a person is assigned, the events name the bot', async () => {
    expect((await injectContactMessage(service, owner(), ws.connectionId, { from: '5511977770001', text: 'I want a human please' })).status).toBe(201);
    const handoff = await eventually(async () => bot.calls.find((c) => c.kind === 'handoff' && c.conversationId === conversationId), 'the bot\'s handoff');
    expect(handoff.status).toBe(201);
    expect(handoff.body).toMatchObject({ id: conversationId, assigneeAgentBotId: null, assigneeUserId: ws.agent.userId });

    const changes = (await helpdeskEvents(service, ws.owner.workspaceId, 'helpdesk.conversation.assignee_changed')).filter((e) => e.conversationId === conversationId);
    expect(changes.map((e) => [e.fromAgentBotId, e.toAgentBotId, e.fromAssigneeUserId, e.toAssigneeUserId, e.actorUserId])).toEqual([
      [null, botId, null, null, null], // taken
      [botId, null, null, null, null], // handed off
      [undefined, undefined, null, ws.agent.userId, null], // round-robin: the inbox's only member
    ]);
    // The bot hears that it let go; then the conversation is no longer its business.
    const [, released] = await bot.received('helpdesk.conversation.assignee_changed', conversationId, 2);
    expect(released!.json.data).toMatchObject({ fromAgentBotId: botId, toAgentBotId: null });
    expectStandardError(await botCall('POST', `/${conversationId}/messages`, accessToken, { content: 'still here?' }), 404, 'Not Found');
    expectStandardError(await botCall('POST', `/${conversationId}/handoff`, accessToken, {}), 404, 'Not Found');

    const heard = bot.hits.length;
    expect((await injectContactMessage(service, owner(), ws.connectionId, { from: '5511977770001', text: 'hello people' })).status).toBe(201);
    await subscribersDone(service, ws.owner.workspaceId, 'helpdesk.message.created', (d) => d.message?.content === 'hello people');
    await deliveriesSettled(service);
    expect(bot.hits.slice(heard).filter((h) => h.json.data.conversationId === conversationId)).toEqual([]);
    // It stays with people: the bot does not take it back.
    expect((await service.call('GET', `/v3/helpdesk/conversations/${conversationId}`, { apikey: owner() })).body).toMatchObject({ assigneeAgentBotId: null, assigneeUserId: ws.agent.userId });
  });

  test('the delivery history shows what the bot was sent', async () => {
    // Every delivery settles as SUCCEEDED (the latest may still be on its way).
    const history = await eventually(async () => {
      const res = await service.call('GET', `/v3/helpdesk/agent-bots/${botId}/deliveries?per_page=100`, { apikey: owner() });
      expect(res.status).toBe(200);
      return res.body.data.every((d: any) => d.state === 'SUCCEEDED') ? res.body : undefined;
    }, 'every delivery to the bot succeeded');
    const events = history.data.map((d: any) => d.event);
    expect(events).toEqual(expect.arrayContaining(['helpdesk.conversation.created', 'helpdesk.message.created', 'helpdesk.conversation.assignee_changed']));
    expect(history.data.length).toBe(new Set(history.data.map((d: any) => d.eventIds[0])).size);
    expect(history.data[0].attemptLog[0]).toMatchObject({ attempt: 1, statusCode: 200 });
  });
});

describe('agents take over; bots are rebound and deleted', () => {
  test('assigning a person takes a bot\'s conversation over (the bot is cleared and told)', async () => {
    expect((await injectContactMessage(service, owner(), ws.connectionId, { from: '5511977770002', text: 'I need help' })).status).toBe(201);
    const conversation = await conversationOfContact(service, owner(), '5511977770002', (c) => c.assigneeAgentBotId === botId);
    await eventually(async () => bot.calls.find((c) => c.kind === 'reply' && c.conversationId === conversation.id), 'the bot\'s answer');

    const patched = await service.call('PATCH', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner(), body: { assigneeUserId: ws.agent.userId } });
    expect(patched.body).toMatchObject({ assigneeUserId: ws.agent.userId, assigneeAgentBotId: null });
    const takeover = await bot.received('helpdesk.conversation.assignee_changed', conversation.id, 2);
    expect(takeover[1]!.json.data).toMatchObject({ fromAgentBotId: botId, toAgentBotId: null, toAssigneeUserId: ws.agent.userId, actorUserId: ws.owner.userId });
    expectStandardError(await botCall('POST', `/${conversation.id}/messages`, accessToken, { content: 'mine?' }), 404, 'Not Found');
  });

  test('a rotated token: the old one stops working at once', async () => {
    const rotated = await service.call('POST', `/v3/helpdesk/agent-bots/${botId}/token/rotate`, { apikey: owner(), body: {} });
    expect(rotated.status).toBe(201);
    expect(rotated.body.accessToken).not.toBe(accessToken);
    const old = accessToken;
    accessToken = rotated.body.accessToken;
    expectStandardError(await botCall('GET', `/${crypto.randomUUID()}`, old), 401, 'Unauthorized');
    expectStandardError(await botCall('GET', `/${crypto.randomUUID()}`, accessToken), 404, 'Not Found');

    const secret = await service.call('POST', `/v3/helpdesk/agent-bots/${botId}/signing-secret/rotate`, { apikey: owner() });
    expect(secret.body.signingSecret).toMatch(/^hdbotsec_/);
    signingSecret = secret.body.signingSecret;
  });

  test('a bot unbound from its inbox, then deleted, hands its conversations over; conversations from before a bot was bound stay people\'s', async () => {
    expect((await injectContactMessage(service, owner(), ws.connectionId, { from: '5511977770003', text: 'anyone?' })).status).toBe(201);
    const held = await conversationOfContact(service, owner(), '5511977770003', (c) => c.assigneeAgentBotId === botId);
    // Signed with the rotated secret.
    const [createdHit] = await bot.received('helpdesk.conversation.created', held.id);
    expect(signed(createdHit!, signingSecret)).toBe(true);

    const unbound = await service.call('PATCH', `/v3/helpdesk/agent-bots/${botId}`, { apikey: owner(), body: { inboxIds: [] } });
    expect(unbound.body.inboxIds).toEqual([]);
    expect((await service.call('GET', `/v3/helpdesk/conversations/${held.id}`, { apikey: owner() })).body).toMatchObject({ assigneeAgentBotId: null, assigneeUserId: ws.agent.userId });
    const released = (await helpdeskEvents(service, ws.owner.workspaceId, 'helpdesk.conversation.assignee_changed')).filter((e) => e.conversationId === held.id);
    expect(released[1]).toMatchObject({ fromAgentBotId: botId, toAgentBotId: null, actorUserId: ws.owner.userId });

    // Bound again: an open conversation from before is not taken, a new one is.
    expect((await service.call('PATCH', `/v3/helpdesk/agent-bots/${botId}`, { apikey: owner(), body: { inboxIds: [ws.inboxId] } })).status).toBe(200);
    expect((await injectContactMessage(service, owner(), ws.connectionId, { from: '5511977770003', text: 'still there?' })).status).toBe(201);
    await subscribersDone(service, ws.owner.workspaceId, 'helpdesk.message.created', (d) => d.message?.content === 'still there?');
    expect((await service.call('GET', `/v3/helpdesk/conversations/${held.id}`, { apikey: owner() })).body.assigneeAgentBotId).toBeNull();
    expect((await injectContactMessage(service, owner(), ws.connectionId, { from: '5511977770004', text: 'new here' })).status).toBe(201);
    const fresh = await conversationOfContact(service, owner(), '5511977770004', (c) => c.assigneeAgentBotId === botId);

    // A workspace that lost the PRO plan: the bot may not write either (coded 403).
    const plan = (p: 'FREE' | 'PRO') => service.runtime.ctx.db.updateTable('workspaces').set({ plan: p }).where('id', '=', ws.owner.workspaceId).execute();
    await plan('FREE');
    const refused = await botCall('POST', `/${fresh.id}/messages`, accessToken, { content: 'on a free plan' });
    await plan('PRO');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ message: 'HELPDESK_PLAN_REQUIRED', hint: expect.any(String) });

    expect((await service.call('DELETE', `/v3/helpdesk/agent-bots/${botId}`, { apikey: owner() })).status).toBe(200);
    expect((await service.call('GET', `/v3/helpdesk/conversations/${fresh.id}`, { apikey: owner() })).body).toMatchObject({ assigneeAgentBotId: null, assigneeUserId: ws.agent.userId });
    expectStandardError(await botCall('GET', `/${fresh.id}`, accessToken), 401, 'Unauthorized');
    // The messages it sent stay, no longer naming a bot that is gone.
    const first = (await service.call('GET', '/v3/helpdesk/conversations?per_page=100', { apikey: owner() })).body.data as any[];
    for (const c of first) {
      const list = (await service.call('GET', `/v3/helpdesk/conversations/${c.id}/messages?limit=100`, { apikey: owner() })).body as any[];
      for (const m of list) expect(m.senderAgentBotId).toBeNull();
    }
  });
});

describe('rate limiting', () => {
  test('repeated wrong tokens from one address are refused with 429 before the token is even checked', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await botCall('GET', `/${crypto.randomUUID()}`, `hdbot_guess${i}`)).status);
    // Earlier tests' wrong tokens count too (20 failures a minute per address).
    const limitedFrom = statuses.indexOf(429);
    expect(limitedFrom).toBeGreaterThan(0);
    expect(limitedFrom).toBeLessThanOrEqual(20);
    expect(statuses.slice(0, limitedFrom).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(limitedFrom).every((s) => s === 429)).toBe(true);
    const limited = await botCall('GET', `/${crypto.randomUUID()}`, 'hdbot_again');
    expectStandardError(limited, 429, 'Too Many Requests');
    expect(limited.headers.get('retry-after')).toBe('60');
  });
});
