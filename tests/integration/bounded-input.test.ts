import { beforeAll, describe, expect, test } from 'bun:test';
import { loadConfig } from '../../apps/config.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 19, section 2 "Bounded input", item by item. The service runs with the default
 * MAX_BODY_BYTES (1 MiB) and a small MAX_MEDIA_BYTES (2 MiB) so uploads over their limit stay
 * cheap to send; the fuzz test over every operation is input-fuzz.test.ts.
 */

const MiB = 1024 * 1024;
const MEDIA_LIMIT = 2 * MiB;
/** Big bodies on a busy machine (and PGlite storing megabytes) take longer than the default 5 s. */
const SLOW = 60_000;

let connectionId: string;

const service = useTestService({ env: { MAX_MEDIA_BYTES: String(MEDIA_LIMIT) } });
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  const created = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'bounded' } });
  connectionId = created.body.id;
  await service.call('POST', `/v3/connections/${connectionId}/connect`, { apikey: owner.token });
}, HOOK_TIMEOUT);

type Answer = { status: number; body: any; text: string; contentType: string };

async function post(path: string, body: BodyInit, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${service.url}${path}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed, text, contentType: response.headers.get('content-type') ?? '' };
}

/**
 * A body without Content-Length (chunked): `size` bytes in 64 KiB chunks, produced only as the
 * server reads them; `pulled()` says how many the server took.
 */
function chunked(size: number, first = '') {
  let produced = 0;
  const head = new TextEncoder().encode(first);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (produced >= size) return controller.close();
      const chunk = produced === 0 && head.length > 0 ? head : new Uint8Array(Math.min(65_536, size - produced)).fill(0x78);
      produced += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled: () => produced };
}

const tooLarge = (answer: Answer) => expectStandardError(answer, 413, 'Payload Too Large');

describe('MAX_BODY_BYTES and MAX_MEDIA_BYTES (configuration table)', () => {
  test('default 1 MiB for JSON and form bodies, 16 MiB for media uploads; both configurable', () => {
    const defaults = loadConfig({});
    expect(defaults.maxBodyBytes).toBe(1024 * 1024);
    expect(defaults.maxMediaBytes).toBe(16 * 1024 * 1024);
    const set = loadConfig({ MAX_BODY_BYTES: '2048', MAX_MEDIA_BYTES: '4096' });
    expect([set.maxBodyBytes, set.maxMediaBytes]).toEqual([2048, 4096]);
    expect(() => loadConfig({ MAX_BODY_BYTES: 'lots' })).toThrow(/MAX_BODY_BYTES/);
  }, SLOW);
});

describe('"MAX_BODY_BYTES (default 1 MiB) for JSON and form bodies: 413 in the standard shape, decided from Content-Length or while streaming, before authentication work or parsing"', () => {
  const json = { 'content-type': 'application/json' };
  const overLimit = `{"name":"${'x'.repeat(MiB + 10)}"}`;

  test('Content-Length over the limit without credentials → 413, not 401', async () => {
    tooLarge(await post('/v3/api-tokens', overLimit, json));
  }, SLOW);

  test('the OAuth endpoints (register, token, revoke, introspect) and MCP → 413 without credentials', async () => {
    for (const path of ['/v3/oauth/register', '/v3/oauth/token', '/v3/oauth/revoke', '/v3/oauth/introspect', '/v3/mcp']) {
      tooLarge(await post(path, overLimit, json));
    }
    tooLarge(await post('/v3/oauth/token', `grant_type=${'x'.repeat(MiB + 10)}`, { 'content-type': 'application/x-www-form-urlencoded' }));
  }, SLOW);

  test('a chunked body (no Content-Length) is refused while streaming, on REST, OAuth and MCP routes alike', async () => {
    for (const path of ['/v3/api-tokens', '/v3/oauth/register', '/v3/oauth/token', '/v3/mcp']) {
      const body = chunked(8 * MiB, '{"name":"');
      const answer = await post(path, body.stream, json);
      tooLarge(answer);
      // Refused at the limit: the server stopped taking the body long before its end.
      expect(body.pulled()).toBeLessThan(8 * MiB);
    }
  }, SLOW);

  test('a declared 200 MB body (over Bun\'s own 128 MiB cap, which answers an empty 413) → the JSON 413', async () => {
    const { port } = new URL(service.url);
    const raw = await new Promise<string>((resolve) => {
      let data = '';
      void Bun.connect({
        hostname: '127.0.0.1',
        port: Number(port),
        socket: {
          open: (socket) => void socket.write('POST /v3/oauth/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200000000\r\n\r\n{"a":'),
          data: (socket, bytes) => {
            data += new TextDecoder().decode(bytes);
            const [head, body = ''] = data.split('\r\n\r\n');
            const length = Number(/content-length: (\d+)/i.exec(head!)?.[1] ?? -1);
            if (length >= 0 && body.length >= length) socket.end();
          },
          close: () => resolve(data),
          error: () => resolve(data),
        },
      });
    });
    expect(raw).toStartWith('HTTP/1.1 413');
    const body = JSON.parse(raw.split('\r\n\r\n')[1]!);
    expect(body).toEqual({ statusCode: 413, message: expect.any(String), error: 'Payload Too Large' });
  }, SLOW);

  test('a form body over the limit → 413 (sign-in page posts go through the same hook)', async () => {
    tooLarge(await post('/signin', chunked(2 * MiB, 'email=').stream, { 'content-type': 'application/x-www-form-urlencoded' }));
  }, SLOW);

  test('a body just under the limit is read and validated as usual (400 for a wrong field, not 413)', async () => {
    const answer = await post('/v3/api-tokens', JSON.stringify({ name: 5, pad: 'x'.repeat(MiB - 100) }), { ...json, apikey: owner.token });
    expect(answer.status).toBe(400);
  }, SLOW);
});

describe('"Media uploads have their own limit (MAX_MEDIA_BYTES) and do not hold more than a small multiple of the file in memory"', () => {
  const mediaRows = async () => (await service.runtime.ctx.db.selectFrom('media').select(({ fn }) => fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;

  test('an upload over MAX_MEDIA_BYTES → 413 and nothing is stored; one under it (though over MAX_BODY_BYTES) is stored', async () => {
    const before = Number(await mediaRows());
    const path = `/v3/connections/${connectionId}/media`;
    tooLarge(await post(path, new Uint8Array(MEDIA_LIMIT + 1), { 'content-type': 'image/png', apikey: owner.token }));
    expect(Number(await mediaRows())).toBe(before);
    const stored = await post(path, new Uint8Array(MEDIA_LIMIT - 1024).fill(7), { 'content-type': 'image/png', apikey: owner.token });
    expect(stored.status).toBe(201);
    expect(stored.body.size).toBe(MEDIA_LIMIT - 1024);
    expect(Number(await mediaRows())).toBe(before + 1);
  }, SLOW);

  test('a chunked 64 MB upload is refused at the limit while streaming: the server takes a bounded part of it', async () => {
    const before = Number(await mediaRows());
    const body = chunked(64 * MiB);
    tooLarge(await post(`/v3/connections/${connectionId}/media`, body.stream, { 'content-type': 'video/mp4', apikey: owner.token }));
    // The limit plus what sockets buffer; the whole 64 MB would mean the body was read to its end.
    expect(body.pulled()).toBeLessThan(24 * MiB);
    expect(Number(await mediaRows())).toBe(before);
  }, SLOW);

  test('a declared upload over MAX_MEDIA_BYTES is refused without credentials, before authentication', async () => {
    tooLarge(await post(`/v3/connections/${connectionId}/media`, new Uint8Array(MEDIA_LIMIT + 1), { 'content-type': 'image/png' }));
  }, SLOW);
});

describe('"A ~20 KB body of 10,000 nested arrays … depth and size are refused cheaply (400)"', () => {
  const nested = `{"name":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;

  test('POST /v3/api-tokens {"name":[[[…]]]} → 400 JSON in the standard shape, naming the depth', async () => {
    const answer = await post('/v3/api-tokens', nested, { 'content-type': 'application/json', apikey: owner.token });
    expectStandardError(answer, 400, 'Bad Request');
    expect(answer.body.message).toEqual(['body is nested deeper than 32 levels']);
  }, SLOW);

  test('32 levels pass the depth check (then schema validation answers)', async () => {
    const answer = await post('/v3/api-tokens', `{"name":${'['.repeat(31)}${']'.repeat(31)}}`, { 'content-type': 'application/json', apikey: owner.token });
    expectStandardError(answer, 400, 'Bad Request');
    expect(JSON.stringify(answer.body.message)).not.toContain('nested');
  }, SLOW);

  test('the nested body on the OAuth endpoints and MCP → 400 JSON, never an HTML page', async () => {
    for (const path of ['/v3/oauth/register', '/v3/oauth/token', '/v3/mcp']) {
      const answer = await post(path, `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`, { 'content-type': 'application/json', apikey: owner.token });
      expect(answer.status).toBe(400);
      expect(answer.contentType).toContain('application/json');
      expect(answer.text).toContain('nested deeper than 32 levels');
    }
  }, SLOW);

  test('authentication runs before body validation: a wrong body without credentials is 401, not 400', async () => {
    const answer = await post('/v3/api-tokens', JSON.stringify({ name: 5 }), { 'content-type': 'application/json' });
    expectStandardError(answer, 401, 'Unauthorized');
  }, SLOW);
});

describe('"NUL characters (\\u0000) and lone surrogates … are a 400 validation error"', () => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const json = { 'content-type': 'application/json' };
  const oauthInvalidRequest = (answer: Answer) => {
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/NUL|surrogate|UTF-8/) });
  };

  test('the four endpoints without credentials: /v3/oauth/token, /revoke, /introspect and authorize?…=%00', async () => {
    oauthInvalidRequest(await post('/v3/oauth/token', 'grant_type=authorization_code&code=%00&client_id=x', form));
    oauthInvalidRequest(await post('/v3/oauth/token', '{"grant_type":"refresh_token","refresh_token":"\\ud800"}', json));
    oauthInvalidRequest(await post('/v3/oauth/revoke', 'token=a%00b&client_id=x', form));
    oauthInvalidRequest(await post('/v3/oauth/revoke', '{"token":"\\udfff","client_id":"x"}', json));
    oauthInvalidRequest(await post('/v3/oauth/introspect', 'token=%00', form));
    oauthInvalidRequest(await post('/v3/oauth/introspect', '{"token":"x","client_id":"\\u0000"}', json));
    const authorize = await fetch(`${service.url}/v3/oauth/authorize?response_type=code&client_id=%00`, { redirect: 'manual' });
    oauthInvalidRequest({ status: authorize.status, body: await authorize.json(), text: '', contentType: '' });
    const encodedSurrogate = await fetch(`${service.url}/v3/oauth/authorize?client_id=%ED%A0%80`, { redirect: 'manual' });
    expect(encodedSurrogate.status).toBe(400);
  }, SLOW);

  test('HTTP Basic client credentials decoding to NUL → 401 invalid_client, not 500', async () => {
    const answer = await post('/v3/oauth/token', 'grant_type=client_credentials', { ...form, authorization: `Basic ${btoa('%00:secret')}` });
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe('invalid_client');
  }, SLOW);

  test('authenticated routes: JSON bodies, query strings and path parameters, refused in one place', async () => {
    const auth = { apikey: owner.token };
    const nul = await post('/v3/api-tokens', '{"name":"a\\u0000b"}', { ...json, ...auth });
    expectStandardError(nul, 400, 'Bad Request');
    expect(nul.body.message).toEqual(['body contains a NUL character (\\u0000), which is not accepted']);
    expectStandardError(await post('/v3/helpdesk/labels', '{"name":"\\ud83d"}', { ...json, ...auth }), 400, 'Bad Request');
    expectStandardError(
      await post(`/v3/connections/${connectionId}/chats/messages`, '{"to":"15550001111","text":"hi \\u0000"}', { ...json, ...auth }),
      400,
      'Bad Request',
    );
    const query = await service.call('GET', '/v3/helpdesk/contacts?s=%00', { apikey: owner.token });
    expectStandardError(query, 400, 'Bad Request');
    const path = await service.call('GET', '/v3/helpdesk/labels/%00', { apikey: owner.token });
    expectStandardError(path, 400, 'Bad Request');
    const badUtf8 = await post('/v3/api-tokens', new Uint8Array([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), { ...json, ...auth });
    expectStandardError(badUtf8, 400, 'Bad Request');
  }, SLOW);

  test('ordinary text beyond ASCII (accents, emoji as surrogate pairs, escaped or raw) is accepted', async () => {
    const answer = await post('/v3/api-tokens', '{"name":"café \\ud83d\\ude00 😀"}', { ...json, apikey: owner.token });
    expect(answer.status).toBe(201);
    expect(answer.body.name).toBe('café 😀 😀');
  }, SLOW);
});

describe('"Error messages quote at most a short prefix of the offending input"', () => {
  test('a label name of 10 MB is 413 with a short body; one just under MAX_BODY_BYTES is 400 with a short body', async () => {
    const huge = await post('/v3/helpdesk/labels', JSON.stringify({ name: 'n'.repeat(10 * MiB) }), { 'content-type': 'application/json', apikey: owner.token });
    tooLarge(huge);
    expect(huge.text.length).toBeLessThan(300);
    const long = await post('/v3/helpdesk/labels', JSON.stringify({ name: 'n'.repeat(MiB - 100) }), { 'content-type': 'application/json', apikey: owner.token });
    expectStandardError(long, 400, 'Bad Request');
    expect(long.text.length).toBeLessThan(1000);
  }, SLOW);

});
