import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createOutbound, OutboundRefusal, readBounded, type Resolve } from '../../adapters/outbound/outbound.ts';
import { downloadMediaUrl } from '../../adapters/outbound/media-url.ts';
import { webhookSender } from '../../adapters/webhooks/http-sender.ts';
import { parseAllowList } from '../../core/shared/outbound-policy.ts';
import { chatCompletions } from '../../plugins/helpdesk/ai/chat-completions.ts';

/**
 * Issue 19, section 1: "Checked twice: when a URL is created or updated ... and again at connection
 * time against the resolved address (DNS rebinding), where a refusal is a failed attempt with a
 * clear error and no request sent. Redirects are not followed to a refused address."
 *
 * Real receivers on 127.0.0.1 (exempted here by OUTBOUND_ALLOW=127.0.0.1) and 127.0.0.2 (not
 * exempted: it stands for an internal service). Names are answered by a resolver port of the
 * test's own, which is how a hostile DNS server would answer.
 */

type Receiver = { server: ReturnType<typeof Bun.serve>; hits: Request[]; base: string };

function receiver(hostname: string, answer: (request: Request) => Response | Promise<Response>): Receiver {
  const hits: Request[] = [];
  const server = Bun.serve({ hostname, port: 0, fetch: (request) => (hits.push(request), answer(request)) });
  return { server, hits, base: `http://${hostname}:${server.port}` };
}

/** One webhook attempt as the delivery engine makes it: its outcome, status or error. */
const attempt = (outbound: ReturnType<typeof createOutbound>, url: string) =>
  webhookSender(outbound).post(url, '{}', { 'content-type': 'application/json' }, 2000) as Promise<{ status?: number; error?: string }>;

let allowed: Receiver;
let internal: Receiver;
const onlyLoopbackOne = parseAllowList('127.0.0.1').allow;

beforeAll(() => {
  internal = receiver('127.0.0.2', () => new Response('internal secret'));
  allowed = receiver('127.0.0.1', (request) => {
    const path = new URL(request.url).pathname;
    if (path === '/to-internal') return new Response(null, { status: 302, headers: { location: `${internal.base}/admin` } });
    if (path === '/to-self') return new Response(null, { status: 307, headers: { location: '/final' } });
    if (path === '/big') return new Response(new Uint8Array(64 * 1024));
    if (path === '/admin/chat/completions') return new Response('<h1>Internal admin</h1> db password: hunter2', { status: 404, headers: { 'content-type': 'text/html' } });
    return new Response(`host=${request.headers.get('host')} path=${path}`);
  });
});

afterAll(() => {
  allowed.server.stop(true);
  internal.server.stop(true);
});

describe('outbound fetch', () => {
  test('a name that resolves to a public address when created and to an internal one when called (DNS rebinding) is refused before any request', async () => {
    const answers = [['93.184.216.34'], ['127.0.0.2']];
    const resolve: Resolve = async () => answers.shift() ?? ['127.0.0.2'];
    const outbound = createOutbound(onlyLoopbackOne, resolve);
    const url = `http://rebind.example.com:${internal.server.port}/hook`;
    expect(await outbound.refusal(url)).toBeUndefined();
    const outcome = await attempt(outbound, url);
    expect(outcome.status).toBeUndefined();
    expect(outcome.error).toBe('refused by the outbound policy: rebind.example.com resolves to an address in 127.0.0.0/8 (loopback), which is not reachable from this service');
    expect(internal.hits).toHaveLength(0);
  });

  test('a name is resolved once: the connection goes to the address just checked, the Host header keeps the name', async () => {
    let lookups = 0;
    const outbound = createOutbound(onlyLoopbackOne, async () => (lookups++, ['127.0.0.1']));
    const response = await outbound.fetch(`http://hooks.example.com:${allowed.server.port}/pinned`);
    expect(await response.text()).toBe(`host=hooks.example.com:${allowed.server.port} path=/pinned`);
    expect(lookups).toBe(1);
  });

  test('a name any of whose addresses is refused is refused at creation and at connection time', async () => {
    const outbound = createOutbound(onlyLoopbackOne, async () => ['127.0.0.1', '10.0.0.7']);
    expect(await outbound.refusal('http://split.example.com/')).toContain('10.0.0.0/8 (private network)');
    await expect(outbound.fetch(`http://split.example.com:${allowed.server.port}/`)).rejects.toBeInstanceOf(OutboundRefusal);
    expect(allowed.hits.filter((h) => h.headers.get('host')?.startsWith('split.'))).toHaveLength(0);
  });

  test('a name that does not resolve is accepted at creation (checked again at every call), and a call to it fails as "delivery failed"', async () => {
    const outbound = createOutbound(onlyLoopbackOne, async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    });
    expect(await outbound.refusal('https://not-yet.example.com/hook')).toBeUndefined();
    const outcome = await attempt(outbound, 'https://not-yet.example.com/hook');
    expect(outcome.error).toBe('delivery failed');
  });

  test('an open port and a closed port of a refused address answer the same words; a closed allowed port says only "delivery failed"', async () => {
    const outbound = createOutbound(onlyLoopbackOne);
    const open = await attempt(outbound, `${internal.base}/x`);
    const closedServer = Bun.serve({ hostname: '127.0.0.2', port: 0, fetch: () => new Response('') });
    const closedPort = closedServer.port;
    closedServer.stop(true);
    const closed = await attempt(outbound, `http://127.0.0.2:${closedPort}/x`);
    expect(open.error).toBe(closed.error!);
    expect(open.error).toStartWith('refused by the outbound policy: 127.0.0.0/8 (loopback)');
    expect(internal.hits).toHaveLength(0);
    const allowedClosed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const allowedClosedPort = allowedClosed.port;
    allowedClosed.stop(true);
    expect((await attempt(outbound, `http://127.0.0.1:${allowedClosedPort}/x`)).error).toBe('delivery failed');
  });

  test('a redirect to a refused address is not followed: not by webhooks (a 3xx is their answer), not when redirects are followed', async () => {
    const outbound = createOutbound(onlyLoopbackOne);
    const outcome = await attempt(outbound, `${allowed.base}/to-internal`);
    expect(outcome.status).toBe(302);
    await expect(outbound.fetch(`${allowed.base}/to-internal`, { followRedirects: 3 })).rejects.toBeInstanceOf(OutboundRefusal);
    await expect(downloadMediaUrl(outbound, `${allowed.base}/to-internal`, 'image')).rejects.toThrow('The media URL is refused by the outbound policy: 127.0.0.0/8 (loopback)');
    expect(internal.hits).toHaveLength(0);
  });

  test('a redirect to an allowed address is followed when asked, each hop checked', async () => {
    const response = await createOutbound(onlyLoopbackOne).fetch(`${allowed.base}/to-self`, { followRedirects: 3 });
    expect(await response.text()).toBe(`host=127.0.0.1:${allowed.server.port} path=/final`);
  });

  test('https to a pinned address still verifies the certificate against the name (tls.serverName)', async () => {
    const dir = `/tmp/outbound-tls-${crypto.randomUUID()}`;
    const made = Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${dir}-key.pem`, '-out', `${dir}-cert.pem`, '-days', '1', '-subj', '/CN=secure.example.com', '-addext', 'subjectAltName=DNS:secure.example.com']);
    expect(made.exitCode).toBe(0);
    const cert = await Bun.file(`${dir}-cert.pem`).text();
    const tlsServer = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert, key: await Bun.file(`${dir}-key.pem`).text() }, fetch: (r) => new Response(`host=${r.headers.get('host')}`) });
    try {
      const outbound = createOutbound(onlyLoopbackOne, async () => ['127.0.0.1']);
      const init = { tls: { ca: cert } } as RequestInit;
      const response = await outbound.fetch(`https://secure.example.com:${tlsServer.port}/`, init);
      expect(await response.text()).toBe(`host=secure.example.com:${tlsServer.port}`);
      // The same address under a name the certificate does not carry: the handshake fails.
      await expect(outbound.fetch(`https://other.example.com:${tlsServer.port}/`, init)).rejects.toThrow();
    } finally {
      tlsServer.stop(true);
    }
  });

  test('the AI baseUrl never relays an answer that is not a provider\'s error (issue 19: "relays an internal service\'s answer")', async () => {
    const ai = chatCompletions(createOutbound(onlyLoopbackOne));
    const ask = (baseUrl: string) => ai.complete({ baseUrl, apiKey: null, model: 'm', messages: [{ role: 'user', content: 'hi' }], timeoutMs: 2000 });
    const error = await ask(`${allowed.base}/admin`).catch((e: Error) => e);
    expect((error as Error).message).toBe('The AI provider answered 404');
    const refused = await ask(`${internal.base}/v1`).catch((e: Error) => e);
    expect((refused as Error).message).toStartWith("The AI provider's baseUrl is refused by the outbound policy: 127.0.0.0/8 (loopback)");
    expect(internal.hits).toHaveLength(0);
  });

  test('a media URL is downloaded within its size bound (the kind\'s limit, lowered by MAX_MEDIA_BYTES), and refused past it', async () => {
    const outbound = createOutbound(onlyLoopbackOne);
    expect((await downloadMediaUrl(outbound, `${allowed.base}/big`, 'document', 64 * 1024)).byteLength).toBe(64 * 1024);
    await expect(downloadMediaUrl(outbound, `${allowed.base}/big`, 'document', 1000)).rejects.toThrow('document larger than 1000 bytes');
    await expect(readBounded(new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(4096)) })), 100_000)).rejects.toThrow('larger than 100000 bytes');
  });
});
