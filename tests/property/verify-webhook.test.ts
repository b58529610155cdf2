import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifySwitchboardWebhook } from '../../clients/verify-webhook.ts';
import { webhookSender } from '../../adapters/webhooks/http-sender.ts';
import { createOutbound } from '../../adapters/outbound/outbound.ts';
import { parseAllowList } from '../../core/shared/outbound-policy.ts';
import { MAX_SIGNATURE_AGE_SECONDS, SIGNATURE_HEADER, signDelivery, TIMESTAMP_HEADER, verifyDelivery } from '../../core/webhooks/signature.ts';

/** The receiver below listens on this machine. */
const httpSender = webhookSender(createOutbound(parseAllowList('127.0.0.0/8').allow));

/**
 * The consumers' verification helper (clients/verify-webhook.ts; issue 4 item 6: "a small
 * verification helper documented in the README for consumers"). Spec 6.4:
 * | Signature headers | `X-Switchboard-Signature-256`: `sha256=` followed by hex HMAC-SHA256; `X-Switchboard-Timestamp`: Unix seconds |
 * | Signed material   | `<timestamp>.<raw body>` keyed with the signing secret |
 * | Verification      | over the raw body exactly as received; a consumer should reject timestamps more than 300 seconds old and compare in constant time |
 *
 * It must agree with the service's own signer and verifier (core/webhooks/signature.ts) on
 * every input, and refuse every single-byte change to what was signed.
 */

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const NOW_S = Math.floor(NOW / 1000);

const secretArb = fc.oneof(
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `whsec_${Buffer.from(b).toString('base64url')}`),
  fc.string({ minLength: 1, maxLength: 64, unit: 'grapheme' }),
);
const bodyArb = fc.oneof(
  fc.string({ maxLength: 400, unit: 'grapheme' }),
  fc.json({ maxDepth: 3 }),
  fc.jsonValue({ maxDepth: 2 }).map((data) => JSON.stringify({ event: 'messages.upsert', connectionId: 'c', remoteJid: '5511988887777@s.whatsapp.net', sender: '15550100000', data })),
);
/** Timestamps around now: inside, at and beyond the 300 s tolerance, either side. */
const offsetArb = fc.oneof(fc.integer({ min: -300, max: 300 }), fc.constantFrom(-301, -300, -299, 299, 300, 301), fc.integer({ min: -100_000, max: 100_000 }));

const headersOf = (signature: string, timestamp: string) => new Headers({ [SIGNATURE_HEADER]: signature, [TIMESTAMP_HEADER]: timestamp });

/** Another byte in place of the one at `index` (a printable ASCII byte, since headers are text). */
function changeChar(s: string, index: number, replacement: number): string {
  const i = index % s.length;
  let code = 0x20 + (replacement % 0x5f);
  if (code === s.charCodeAt(i)) code = code === 0x7e ? 0x20 : code + 1;
  return s.slice(0, i) + String.fromCharCode(code) + s.slice(i + 1);
}

describe('verifySwitchboardWebhook', () => {
  test('is a standalone file: only node:crypto, nothing of this project', () => {
    const source = readFileSync(join(import.meta.dir, '../../clients/verify-webhook.ts'), 'utf8');
    const imports = [...source.matchAll(/^\s*import\s[^;]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    expect(imports).toEqual(['node:crypto']);
    expect(source).toContain('timingSafeEqual');
  });

  test('agrees with the service’s verifyDelivery for random secrets, bodies and timestamps', () => {
    fc.assert(
      fc.property(secretArb, bodyArb, offsetArb, fc.integer({ min: 0, max: 999 }), (secret, body, offset, ms) => {
        const timestamp = NOW_S + offset;
        const signature = signDelivery(secret, timestamp, body);
        const now = NOW + ms;
        const ours = verifySwitchboardWebhook(secret, body, headersOf(signature, String(timestamp)), { now });
        expect(ours).toBe(verifyDelivery(secret, body, { signature, timestamp: String(timestamp) }, Math.floor(now / 1000)));
        // A correct signature passes exactly when the timestamp is within 300 s.
        expect(ours).toBe(Math.abs(offset) <= 300);
        // Bytes or text: the same answer.
        expect(verifySwitchboardWebhook(secret, new TextEncoder().encode(body), headersOf(signature, String(timestamp)), { now })).toBe(ours);
      }),
      { numRuns: 3000 },
    );
  });

  test('agrees with verifyDelivery on forged input too (other secret, other body, junk headers)', () => {
    fc.assert(
      fc.property(
        secretArb,
        secretArb,
        bodyArb,
        bodyArb,
        fc.integer({ min: -400, max: 400 }),
        fc.oneof(fc.constant(undefined), fc.string({ maxLength: 80 }), fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `sha256=${Buffer.from(b).toString('hex')}`)),
        fc.oneof(fc.constant(undefined), fc.string({ maxLength: 12 }), fc.integer({ min: NOW_S - 400, max: NOW_S + 400 }).map(String)),
        (secret, otherSecret, body, otherBody, offset, junkSignature, junkTimestamp) => {
          const timestamp = NOW_S + offset;
          const signature = junkSignature ?? signDelivery(otherSecret, timestamp, otherBody);
          const stamp = junkTimestamp ?? String(timestamp);
          // A plain object (Node's req.headers): fetch Headers would trim the junk values.
          const headers = { [SIGNATURE_HEADER.toLowerCase()]: signature, [TIMESTAMP_HEADER.toLowerCase()]: stamp };
          const ours = verifySwitchboardWebhook(secret, body, headers, { now: NOW });
          expect(ours).toBe(verifyDelivery(secret, body, { signature, timestamp: stamp }, NOW_S));
          if (secret !== otherSecret || body !== otherBody) expect(ours).toBe(false);
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('any single-byte change to the body, the signature or the timestamp fails', () => {
    fc.assert(
      fc.property(secretArb, bodyArb, fc.integer({ min: -300, max: 300 }), fc.nat(), fc.nat({ max: 255 }), (secret, body, offset, position, replacement) => {
        const timestamp = String(NOW_S + offset);
        const signature = signDelivery(secret, Number(timestamp), body);
        expect(verifySwitchboardWebhook(secret, body, headersOf(signature, timestamp), { now: NOW })).toBe(true);

        // The body as bytes on the wire, one byte changed.
        const bytes = new TextEncoder().encode(body);
        if (bytes.length > 0) {
          const changed = bytes.slice();
          const i = position % changed.length;
          changed[i] = changed[i] === replacement ? (replacement + 1) % 256 : replacement;
          expect(verifySwitchboardWebhook(secret, changed, headersOf(signature, timestamp), { now: NOW })).toBe(false);
        }
        // One byte added or removed.
        expect(verifySwitchboardWebhook(secret, `${body} `, headersOf(signature, timestamp), { now: NOW })).toBe(false);
        if (bytes.length > 0) expect(verifySwitchboardWebhook(secret, bytes.slice(0, -1), headersOf(signature, timestamp), { now: NOW })).toBe(false);

        const forgedSignature = changeChar(signature, position, replacement);
        expect(verifySwitchboardWebhook(secret, body, headersOf(forgedSignature, timestamp), { now: NOW })).toBe(false);
        expect(verifyDelivery(secret, body, { signature: forgedSignature, timestamp }, NOW_S)).toBe(false);

        const forgedTimestamp = changeChar(timestamp, position, replacement);
        expect(verifySwitchboardWebhook(secret, body, headersOf(signature, forgedTimestamp), { now: NOW })).toBe(false);
        expect(verifyDelivery(secret, body, { signature, timestamp: forgedTimestamp }, NOW_S)).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  test('a correctly signed delivery older (or further ahead) than 300 s fails; the tolerance can be chosen', () => {
    expect(MAX_SIGNATURE_AGE_SECONDS).toBe(300);
    fc.assert(
      fc.property(secretArb, bodyArb, fc.integer({ min: 301, max: 10_000_000 }), fc.boolean(), (secret, body, age, future) => {
        const timestamp = NOW_S + (future ? age : -age);
        const headers = headersOf(signDelivery(secret, timestamp, body), String(timestamp));
        expect(verifySwitchboardWebhook(secret, body, headers, { now: NOW })).toBe(false);
        expect(verifySwitchboardWebhook(secret, body, headers, { now: new Date(NOW) })).toBe(false);
        // With a wider tolerance the same delivery is accepted.
        expect(verifySwitchboardWebhook(secret, body, headers, { now: NOW, toleranceSeconds: age })).toBe(true);
      }),
      { numRuns: 1000 },
    );
    const secret = 'whsec_boundary';
    const at = (offset: number) => headersOf(signDelivery(secret, NOW_S - offset, '{}'), String(NOW_S - offset));
    expect(verifySwitchboardWebhook(secret, '{}', at(300), { now: NOW })).toBe(true);
    expect(verifySwitchboardWebhook(secret, '{}', at(301), { now: NOW })).toBe(false);
    expect(verifySwitchboardWebhook(secret, '{}', at(0), { now: NOW, toleranceSeconds: 0 })).toBe(true);
    // Default clock: a delivery signed just now passes, one signed 10 minutes ago does not.
    const nowS = Math.floor(Date.now() / 1000);
    expect(verifySwitchboardWebhook(secret, '{}', headersOf(signDelivery(secret, nowS, '{}'), String(nowS)))).toBe(true);
    expect(verifySwitchboardWebhook(secret, '{}', headersOf(signDelivery(secret, nowS - 600, '{}'), String(nowS - 600)))).toBe(false);
  });

  test('reads fetch Headers and Node-style header objects in any case; missing or malformed headers fail', () => {
    const secret = 'whsec_headers';
    const body = '{"event":"messages.upsert"}';
    const signature = signDelivery(secret, NOW_S, body);
    const ok = (headers: Parameters<typeof verifySwitchboardWebhook>[2]) => verifySwitchboardWebhook(secret, body, headers, { now: NOW });
    expect(ok(headersOf(signature, String(NOW_S)))).toBe(true);
    expect(ok({ 'x-switchboard-signature-256': signature, 'x-switchboard-timestamp': String(NOW_S) })).toBe(true);
    expect(ok({ 'X-Switchboard-Signature-256': signature, 'X-Switchboard-Timestamp': String(NOW_S) })).toBe(true);
    expect(ok({ 'x-switchboard-signature-256': [signature], 'x-switchboard-timestamp': [String(NOW_S)] })).toBe(true);
    expect(ok({ 'x-switchboard-timestamp': String(NOW_S) })).toBe(false);
    expect(ok({ 'x-switchboard-signature-256': signature })).toBe(false);
    expect(ok({})).toBe(false);
    expect(ok(new Headers())).toBe(false);
    for (const stamp of ['', ' ', `${NOW_S}.0`, `+${NOW_S}`, `${NOW_S}e0`, 'NaN', '-1']) expect(ok({ 'x-switchboard-signature-256': signature, 'x-switchboard-timestamp': stamp })).toBe(false);
    for (const sig of ['', 'sha256=', signature.toUpperCase(), signature.slice(7), `${signature}0`, `sha1=${signature.slice(7)}`]) {
      expect(ok({ 'x-switchboard-signature-256': sig, 'x-switchboard-timestamp': String(NOW_S) })).toBe(false);
    }
    expect(verifySwitchboardWebhook('whsec_other', body, headersOf(signature, String(NOW_S)), { now: NOW })).toBe(false);
    expect(verifySwitchboardWebhook(secret, body, headersOf(signature, String(NOW_S)), { now: Number.NaN })).toBe(false);
  });
});

describe('verifySwitchboardWebhook at a real receiver', () => {
  let server: ReturnType<typeof Bun.serve>;
  const received: { raw: string; verified: boolean }[] = [];
  const secret = 'whsec_receiver';

  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      async fetch(request) {
        // The raw body, exactly as received, before any parsing.
        const raw = await request.text();
        const verified = verifySwitchboardWebhook(secret, raw, request.headers);
        received.push({ raw, verified });
        return new Response(null, { status: verified ? 204 : 401 });
      },
    });
  });

  afterAll(() => server?.stop(true));

  test('deliveries signed and sent by the service verify over the raw body (unicode, whitespace, escapes)', async () => {
    const bodies = [
      JSON.stringify({ event: 'messages.upsert', data: { message: { conversation: 'olá 👋🏽 — “quotes” \u2028 \\u0041' } } }),
      '{ "spaced" :  true ,\n "tabs":\t1 }',
      JSON.stringify({ event: 'messages.upsert', data: [{ key: { id: '3EB0A' }, messageTimestamp: 1 }, { key: { id: '3EB0B' }, messageTimestamp: 1 }] }),
    ];
    for (const body of bodies) {
      const timestamp = Math.floor(Date.now() / 1000);
      const outcome = await httpSender.post(
        `http://127.0.0.1:${server.port}/hook`,
        body,
        { 'content-type': 'application/json', [SIGNATURE_HEADER]: signDelivery(secret, timestamp, body), [TIMESTAMP_HEADER]: String(timestamp) },
        10_000,
      );
      expect(outcome).toMatchObject({ status: 204 });
    }
    expect(received.map((r) => r.raw)).toEqual(bodies);
    expect(received.every((r) => r.verified)).toBe(true);

    // Re-serialising the parsed JSON is not the raw body: verification must use the raw text.
    const parsed = JSON.stringify(JSON.parse(bodies[1]!));
    const timestamp = Math.floor(Date.now() / 1000);
    expect(verifySwitchboardWebhook(secret, parsed, headersOf(signDelivery(secret, timestamp, bodies[1]!), String(timestamp)))).toBe(false);
  });
});
