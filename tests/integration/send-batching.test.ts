import { beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { useTestService, useOwner } from '../support/service.ts';
import { connectedConnection, eventually } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Concurrent API sends to one connection are accepted together (adapters/connections/
 * send-batcher.ts, core `acceptSendBatch`: one transaction, one credit debit, multi-row writes).
 * Batching must not change what any request sees: spec 3.6 (one credit per sent message), 7.2
 * ("message quota reached | USER_PLAN_EXCEEDED_MESSAGES | 403"), and each request gets its own
 * answer — its own message id, or its own error in the spec's shape.
 */
let connectionId: string;
const CREDITS = 300;

const service = useTestService({ env: { PLAN_PRO_MESSAGES: String(CREDITS) } });
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  connectionId = await connectedConnection(service, owner.token, 'Batched line');
}, HOOK_TIMEOUT);

const send = (body: Record<string, unknown>, connection = connectionId) =>
  service.call('POST', `/v3/connections/${connection}/chats/messages`, { apikey: owner.token, body });
const available = async () => (await service.call('GET', '/v3/summary', { apikey: owner.token })).body.messages.available as number;
const contact = (i: number) => `+55119${String(70_000_000 + i)}`;

/** The workspace's reservations: sends accepted in one batch share one, so fewer reservations than sends means batches. */
async function reservations(): Promise<Array<{ amount: number; consumed: number }>> {
  return service.runtime.ctx.db.selectFrom('credit_reservations').select(['amount', 'consumed']).where('workspace_id', '=', owner.workspaceId).execute();
}

describe('sends that arrive together', () => {
  test('120 at once: each is accepted with its own message, one credit each, and they were written in batches', async () => {
    const before = await available();
    const answers = await Promise.all(Array.from({ length: 120 }, (_, i) => send({ to: contact(i % 40), text: `together ${i}` })));
    for (const a of answers) expect(a.status).toBe(201);
    const ids = answers.map((a) => a.body.id as string);
    expect(new Set(ids).size).toBe(120);
    // Each answer is the message that request asked for.
    for (const [i, a] of answers.entries()) expect(a.body).toMatchObject({ status: 'PENDING', remoteJid: `${contact(i % 40).slice(1)}@s.whatsapp.net`, content: { kind: 'text', text: `together ${i}` } });
    expect(await available()).toBe(before - 120);
    const reserved = await reservations();
    expect(reserved.length).toBeLessThan(120);
    expect(reserved.reduce((sum, r) => sum + r.amount, 0)).toBe(120);
    // Every one goes out (queue → driver → SENT), and history has each once.
    await eventually(async () => {
      const states = await Promise.all(ids.slice(0, 120).map(async (id) => (await service.call('GET', `/v3/connections/${connectionId}/chats/messages/${id}`, { apikey: owner.token })).body.status));
      return states.every((s) => s === 'SENT') ? true : undefined;
    }, 'every message SENT', 30_000);
    const stored = await service.runtime.ctx.db.selectFrom('messages').select('id').where('connection_id', '=', connectionId).where('direction', '=', 'outbound').execute();
    expect(stored.length).toBe(120);
    // Each send that went out consumed one credit of its batch's reservation (spec 3.6).
    await eventually(async () => ((await reservations()).reduce((sum, r) => sum + r.consumed, 0) === 120 ? true : undefined), 'every credit consumed', 10_000);
  }, 60_000);

  test('texts that are hard to carry in an array parameter come back exactly as sent, written together', async () => {
    const texts = [
      'he said "hi" and left',
      'back\\slash \\" and a quote',
      '{"looks":"like json"}',
      'line one\nline two\ttab',
      'emoji 👍🏽 and ünïcödé',
      'NULL',
      'a,b}{c "d" \'e\'',
      ' leading and trailing spaces ',
    ];
    const answers = await Promise.all(texts.map((text, i) => send({ to: contact(60 + i), text })));
    for (const a of answers) expect(a.status).toBe(201);
    for (const [i, a] of answers.entries()) {
      const stored = await service.call('GET', `/v3/connections/${connectionId}/chats/messages/${a.body.id}`, { apikey: owner.token });
      expect(stored.body.content).toEqual({ kind: 'text', text: texts[i] });
    }
    // Stored as JSON objects, not as JSON strings that would still read back (SQL over them would find nothing).
    const kinds = await sql<{ kind: string; text: string }>`select jsonb_typeof(content) as kind, content->>'text' as text from messages where id = any(${answers.map((a) => a.body.id)}::uuid[])`.execute(service.runtime.ctx.db);
    expect(kinds.rows.map((r) => r.kind)).toEqual(texts.map(() => 'object'));
    expect(kinds.rows.map((r) => r.text).sort()).toEqual([...texts].sort());
  }, 60_000);

  test('a bad send among good ones gets its own 400; the others are accepted and only they take credits', async () => {
    const before = await available();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 5 === 0 ? send({ to: 'not a number', text: `bad ${i}` }) : send({ to: contact(100 + i), text: `good ${i}` }))),
    );
    for (const [i, a] of answers.entries()) {
      if (i % 5 === 0) {
        expect(a.status).toBe(400);
        expect(a.body).toMatchObject({ statusCode: 400 });
      } else {
        expect(a.status).toBe(201);
      }
    }
    expect(await available()).toBe(before - 24);
  }, 60_000);

  test('more sends than credits: exactly the credits left are accepted, every other send is 403 USER_PLAN_EXCEEDED_MESSAGES', async () => {
    const left = await available();
    expect(left).toBeGreaterThan(0);
    const answers = await Promise.all(Array.from({ length: left + 40 }, (_, i) => send({ to: contact(200 + (i % 50)), text: `last ones ${i}` })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(left);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(40);
    for (const a of refused) expect({ status: a.status, code: a.body.code ?? a.body.error?.code ?? a.body.message }).toMatchObject({ status: 403 });
    expect(JSON.stringify(refused[0]!.body)).toContain('USER_PLAN_EXCEEDED_MESSAGES');
    expect(await available()).toBe(0);
    const stored = await service.runtime.ctx.db.selectFrom('messages').select('id').where('connection_id', '=', connectionId).where('direction', '=', 'outbound').execute();
    expect(stored.length).toBe(CREDITS);
  }, 60_000);

  test('sends to a connection that is not connected all get their own 422', async () => {
    const other = await connectedConnection(service, owner.token, 'Soon down');
    expect((await service.call('POST', `/v3/connections/${other}/logout`, { apikey: owner.token })).status).toBeLessThan(300);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => send({ to: contact(300 + i), text: `down ${i}` }, other)));
    for (const a of answers) expect(a.status).toBe(422);
  }, 60_000);
});
