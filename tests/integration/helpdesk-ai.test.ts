import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { useTestService } from '../support/service.ts';
import { conversationFromContact, messagesUntil, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, useMember } from './helpers.ts';

/**
 * AI configuration and AI actions (issue 7 item 4). Spec 2.14: "Helpdesk: AI configuration |
 * Owner yes | Admin yes | Manager read | Agent read"; spec 7.1: "422 Valid request but current
 * resource state blocks it (closed send window, AI not configured)". The provider is a real local
 * HTTP server speaking the OpenAI chat-completions JSON.
 */

const API_KEY = 'sk-test-provider-key-0123456789abcdef';

type Mode = 'ok' | 'error' | 'echo-key' | 'not-a-completion';

/** An OpenAI-compatible provider on Bun.serve: records requests, answers as `mode` says. */
function startProvider() {
  const requests: Array<{ path: string; authorization: string | null; body: any }> = [];
  let mode: Mode = 'ok';
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const body = await request.json();
      requests.push({ path: new URL(request.url).pathname, authorization: request.headers.get('authorization'), body });
      if (mode === 'error') return Response.json({ error: { message: 'The model is overloaded', type: 'server_error' } }, { status: 503 });
      if (mode === 'echo-key') return Response.json({ error: { message: `Incorrect API key provided: ${request.headers.get('authorization')?.slice(7)}` } }, { status: 401 });
      if (mode === 'not-a-completion') return Response.json({ hello: 'world' });
      const system = body.messages[0].content as string;
      const content = system.includes('Summarize') ? 'The customer wants a refund for a broken lamp.' : 'Sorry to hear that! I will arrange a replacement today.';
      return Response.json({ id: 'chatcmpl-1', object: 'chat.completion', model: body.model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
    },
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    requests,
    setMode: (m: Mode) => void (mode = m),
    stop: () => server.stop(true),
  };
}

let provider: ReturnType<typeof startProvider>;
let conversationId: string;

const service = useTestService();
const ws = useHelpdeskWorkspace(service, { connection: 'ai line', inbox: 'Support' });
const admin = useMember(service, ws.owner, 'ADMIN');
const manager = useMember(service, ws.owner, 'MANAGER');
const outsider = useMember(service, ws.owner, 'AGENT');

beforeAll(async () => {
  provider = startProvider();
  const conversation = await conversationFromContact(service, ws.owner.token, ws.connectionId, '5511988880001', { text: 'My lamp arrived broken, I want a refund', pushName: 'Bea' });
  conversationId = conversation.id;
  await messagesUntil(service, ws.owner.token, conversationId, 1);
  const note = await service.call('POST', `/v3/helpdesk/conversations/${conversationId}/messages`, { apikey: ws.agent.token, body: { content: 'Checked: order 7781, shipped last week', private: true } });
  expect(note.status).toBe(201);
}, HOOK_TIMEOUT);

afterAll(async () => {
  provider?.stop();
}, HOOK_TIMEOUT);

const settings = (apikey: string) => service.call('GET', '/v3/helpdesk/ai-settings', { apikey });
const put = (apikey: string, body: unknown) => service.call('PUT', '/v3/helpdesk/ai-settings', { apikey, body });
const action = (kind: 'suggest-reply' | 'summarize', apikey = ws.agent.token, id = conversationId) => service.call('POST', `/v3/helpdesk/conversations/${id}/ai/${kind}`, { apikey });

function expectNoKey(res: { body: any; headers: Headers }): void {
  expect(JSON.stringify(res.body)).not.toContain(API_KEY);
  res.headers.forEach((value) => expect(value).not.toContain(API_KEY));
}

describe('before anything is configured', () => {
  test('every member reads the (empty) settings', async () => {
    for (const apikey of [ws.owner.token, admin.token, manager.token, ws.agent.token]) {
      const res = await settings(apikey);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ enabled: false, provider: 'openai-compatible', baseUrl: null, model: null, apiKeySet: false, updatedAt: null });
    }
  });

  test('an AI action answers 422 "AI not configured" in the standard shape', async () => {
    for (const kind of ['suggest-reply', 'summarize'] as const) {
      const res = await action(kind);
      expectStandardError(res, 422, 'Unprocessable Entity');
      expect(res.body.message).toBe('AI not configured');
    }
    expect(provider.requests).toEqual([]);
  });
});

describe('the roles matrix row "Helpdesk: AI configuration" (Owner yes, Admin yes, Manager read, Agent read)', () => {
  test('Owner and Admin write; Manager and Agent are refused (403) and read', async () => {
    const body = { enabled: false, baseUrl: provider.baseUrl, model: 'gpt-test' };
    expect((await put(ws.owner.token, body)).status).toBe(200);
    expect((await put(admin.token, body)).status).toBe(200);
    for (const member of [manager, ws.agent]) {
      expectStandardError(await put(member.token, { ...body, enabled: true }), 403, 'Forbidden');
      expect((await settings(member.token)).body).toMatchObject({ enabled: false, model: 'gpt-test' });
    }
  });

  test('writing needs the PRO plan (HELPDESK_PLAN_REQUIRED); reading does not', async () => {
    const free = await service.bootstrap({ plan: 'FREE' });
    const res = await put(free.token, { enabled: false });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('HELPDESK_PLAN_REQUIRED');
    expect((await settings(free.token)).status).toBe(200);
  });

  test('bad settings are refused with every problem listed', async () => {
    const res = await put(ws.owner.token, { enabled: true, baseUrl: 'ftp://models.example', model: '   ', apiKey: '' });
    expectStandardError(res, 400, 'Bad Request');
    const text = JSON.stringify(res.body.message);
    for (const part of ['body.baseUrl', 'body.model is required', 'body.apiKey']) expect(text).toContain(part);
    expect((await put(ws.owner.token, { enabled: true, provider: 'other' })).status).toBe(400);
  });
});

describe('configured against an OpenAI-compatible provider', () => {
  test('the key is stored sealed and never returned', async () => {
    const res = await put(ws.owner.token, { enabled: true, baseUrl: `${provider.baseUrl}/`, model: 'gpt-test', apiKey: API_KEY });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ enabled: true, provider: 'openai-compatible', baseUrl: provider.baseUrl, model: 'gpt-test', apiKeySet: true, updatedAt: expect.any(String) });
    expectNoKey(res);
    for (const apikey of [ws.owner.token, ws.agent.token]) expectNoKey(await settings(apikey));
    const row = await service.runtime.ctx.db.selectFrom('helpdesk_ai_settings' as any).selectAll().executeTakeFirst();
    expect(JSON.stringify(row)).not.toContain(API_KEY);
  });

  test('suggest-reply: the provider gets the recent messages (no private notes) and the suggestion comes back', async () => {
    const res = await action('suggest-reply');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ suggestion: 'Sorry to hear that! I will arrange a replacement today.' });
    const sent = provider.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.body.model).toBe('gpt-test');
    expect(sent.body.messages.map((m: any) => m.role)).toEqual(['system', 'user']);
    expect(sent.body.messages[1].content).toContain('Customer: My lamp arrived broken, I want a refund');
    expect(sent.body.messages[1].content).not.toContain('order 7781');
    expectNoKey(res);
  });

  test('summarize: private notes are part of what is summarized', async () => {
    const res = await action('summarize', ws.owner.token);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ summary: 'The customer wants a refund for a broken lamp.' });
    expect(provider.requests.at(-1)!.body.messages[1].content).toContain('Internal note: Checked: order 7781, shipped last week');
  });

  test('an Agent outside the conversation\'s inbox gets 404, as for a conversation that does not exist', async () => {
    expectStandardError(await action('suggest-reply', outsider.token), 404, 'Not Found');
    expectStandardError(await action('summarize', ws.agent.token, crypto.randomUUID()), 404, 'Not Found');
  });

  test('a PUT without apiKey keeps the key; apiKey null removes it (and no Authorization is sent)', async () => {
    expect((await put(admin.token, { enabled: true, baseUrl: provider.baseUrl, model: 'gpt-other' })).body).toMatchObject({ apiKeySet: true, model: 'gpt-other' });
    await action('suggest-reply');
    expect(provider.requests.at(-1)).toMatchObject({ authorization: `Bearer ${API_KEY}`, body: { model: 'gpt-other' } });
    expect((await put(admin.token, { enabled: true, baseUrl: provider.baseUrl, model: 'gpt-other', apiKey: null })).body.apiKeySet).toBe(false);
    expect((await action('suggest-reply')).status).toBe(201);
    expect(provider.requests.at(-1)!.authorization).toBeNull();
    expect((await put(admin.token, { enabled: true, baseUrl: provider.baseUrl, model: 'gpt-test', apiKey: API_KEY })).body.apiKeySet).toBe(true);
  });

  test('provider failures are 502 with a clear message that never quotes the key', async () => {
    provider.setMode('error');
    const failed = await action('suggest-reply');
    expectStandardError(failed, 502, 'Bad Gateway');
    expect(failed.body.message).toContain('answered 503');
    expect(failed.body.message).toContain('The model is overloaded');

    provider.setMode('echo-key');
    const echoed = await action('summarize');
    expectStandardError(echoed, 502, 'Bad Gateway');
    expect(echoed.body.message).toContain('[redacted]');
    expectNoKey(echoed);

    provider.setMode('not-a-completion');
    expect((await action('suggest-reply')).body.message).toContain('not a chat completion');
    provider.setMode('ok');

    // Nobody listening at the URL.
    const closed = Bun.serve({ port: 0, fetch: () => new Response('') });
    const deadUrl = `http://127.0.0.1:${closed.port}/v1`;
    closed.stop(true);
    expect((await put(ws.owner.token, { enabled: true, baseUrl: deadUrl, model: 'gpt-test' })).body.apiKeySet).toBe(true);
    const unreachable = await action('suggest-reply');
    expectStandardError(unreachable, 502, 'Bad Gateway');
    expect(unreachable.body.message).toContain('could not be reached');
    expectNoKey(unreachable);
  });

  test('switched off: 422 "AI not configured" again', async () => {
    expect((await put(ws.owner.token, { enabled: false, baseUrl: provider.baseUrl, model: 'gpt-test' })).status).toBe(200);
    const res = await action('summarize');
    expectStandardError(res, 422, 'Unprocessable Entity');
    expect(res.body.message).toBe('AI not configured');
  });
});
