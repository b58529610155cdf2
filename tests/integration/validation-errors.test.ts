import { beforeAll, describe, expect, test } from 'bun:test';
import { useTestService } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 20, item 4. Spec 7.2 (1): "Standard: `{ statusCode: <int>, message: <array of strings
 * for validation failures, one per broken rule; a string otherwise>, error: <status text> }`."
 * Every validation failure (schema, query, core's own checks) answers a list, one entry per
 * broken rule, each naming the field as the caller sent it (`query.limit`, `body.to`).
 */

let apikey: string;
let connectionId: string;
let webhookId: string;

const service = useTestService();

beforeAll(async () => {
  apikey = (await service.bootstrap({ plan: 'PRO' })).token;
  connectionId = (await service.call('POST', '/v3/connections', { apikey, body: { name: 'validated' } })).body.id;
  webhookId = (await service.call('POST', '/v3/webhooks', { apikey, body: { url: 'https://example.com/hook', events: ['messages.upsert'] } })).body.id;
}, HOOK_TIMEOUT);

/** The 400's rules, checked to be a non-empty list of strings. */
async function rules(method: string, path: string, body?: unknown): Promise<string[]> {
  const res = await service.call(method, path, { apikey, body });
  expectStandardError(res, 400, 'Bad Request');
  expect(Array.isArray(res.body.message)).toBe(true);
  return res.body.message;
}

describe('issue 20 §4: validation failures list every broken rule and name the caller’s field', () => {
  test('a message history with limit=0 answers a list naming query.limit', async () => {
    const messages = await rules('GET', `/v3/connections/${connectionId}/chats/messages?chat=%2B5511999999999&limit=0`);
    expect(messages).toEqual(['query.limit must be an integer from 1 to 100']);
  });

  test('a cursor that is no message of the chat answers a list naming query.cursor', async () => {
    const messages = await rules('GET', `/v3/connections/${connectionId}/chats/messages?chat=%2B5511999999999&cursor=bogus`);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toStartWith('query.cursor ');
  });

  test('a bad chat query names query.chat, not body.to; with a bad limit both are listed', async () => {
    const messages = await rules('GET', `/v3/connections/${connectionId}/chats/messages?chat=abc&limit=0`);
    expect(messages).toHaveLength(2);
    expect(messages.some((m) => m.startsWith('query.limit '))).toBe(true);
    expect(messages.some((m) => m.startsWith('query.chat '))).toBe(true);
    expect(messages.join(' ')).not.toContain('body.');
  });

  test('an unknown driver answers a list naming body.driver', async () => {
    const messages = await rules('POST', '/v3/connections', { name: 'x', driver: 'nope' });
    expect(messages).toHaveLength(1);
    expect(messages[0]).toStartWith('body.driver must be one of ');
    expect(messages[0]).toContain('sandbox');
  });

  test('a send with a bad number and an empty text names both rules', async () => {
    const messages = await rules('POST', `/v3/connections/${connectionId}/chats/messages`, { to: 'abc', text: '' });
    expect(messages).toHaveLength(2);
    expect(messages.some((m) => m.startsWith('body.to '))).toBe(true);
    expect(messages.some((m) => m.startsWith('body.text '))).toBe(true);
  });

  test('a fractional messageGroupDelay says what is wanted, not "one of undefined, null"', async () => {
    for (const [method, path] of [
      ['POST', '/v3/webhooks'],
      ['PATCH', `/v3/webhooks/${webhookId}`],
    ] as const) {
      const messages = await rules(method, path, { url: 'https://example.com/hook', events: ['messages.upsert'], messageGroupDelay: 1.5 });
      expect(messages).toEqual(['body.messageGroupDelay must be an integer from 1 to 300 (seconds) or null']);
    }
  });

  test('schema failures name each field with a human reason, one entry per rule', async () => {
    const messages = await rules('POST', '/v3/webhooks', { url: 'https://example.com/hook', events: 'x', hmacEnabled: 'yes' });
    expect(messages).toContain('body.events must be an array');
    expect(messages).toContain('body.hmacEnabled must be a boolean (true or false)');
    const missing = await rules('GET', `/v3/connections/${connectionId}/chats/messages`);
    expect(missing).toEqual(['query.chat is required; it must be a string']);
  });

  test('400s that core raised with one text (a blank name, a body that is not JSON) are lists too', async () => {
    expect(await rules('POST', '/v3/connections', { name: '   ' })).toEqual(['body.name must not be blank']);
    const notJson = await service.call('POST', '/v3/connections', { apikey, body: '{"name":', headers: { 'content-type': 'application/json' } });
    expectStandardError(notJson, 400, 'Bad Request');
    expect(notJson.body.message).toHaveLength(1);
  });
});
