import { beforeAll, describe, expect, test } from 'bun:test';
import { driverEventsFor } from '../../adapters/connections/driver-events.ts';
import type { ReceivedMessage } from '../../core/messaging/incoming.ts';
import { HOOK_TIMEOUT, useOwner, useTestService } from '../support/service.ts';
import { connectedConnection } from '../support/helpdesk.ts';
import { useReceiver } from '../support/webhook-receiver.ts';
import { waitUntil } from '../support/wait.ts';

/**
 * Messages from the network that arrive together on a connection are stored together
 * (adapters/connections/receive-batcher.ts, core `receiveMessages`: one transaction, multi-row
 * writes, their events in one statement). Batching must change nothing anyone sees: each message
 * is stored once (a redelivered network id is a replay, spec 6.1 `messages.upsert` once), its
 * chat is touched, its event reaches the webhook once, a connection of another workspace is out
 * of reach, and a message that cannot be stored fails alone while the others are stored.
 */
const receiver = useReceiver();
const service = useTestService();
const owner = useOwner(service, { plan: 'PRO' });
const stranger = useOwner(service, { plan: 'PRO' });

let connectionId: string;
const path = '/hooks/receive-batching';

beforeAll(async () => {
  connectionId = await connectedConnection(service, owner.token, 'Busy line');
  const webhook = await service.call('POST', '/v3/webhooks', { apikey: owner.token, body: { url: receiver.url(path), events: ['messages.upsert'], connections: [connectionId] } });
  expect(webhook.status).toBe(201);
}, HOOK_TIMEOUT);

const db = () => service.runtime.ctx.db;
const contact = (i: number) => `55119${String(80_000_000 + i)}`;

function received(externalId: string, i: number, text = `burst ${i}`): ReceivedMessage {
  return {
    externalId,
    remoteJid: `${contact(i % 7)}@s.whatsapp.net`,
    fromMe: false,
    pushName: `Contact ${i % 7}`,
    messageType: 'conversation',
    node: {},
    text,
    timestamp: 1_790_000_000 + i,
    source: 'android',
    isAiMessage: false,
  };
}

async function storedWith(externalIds: string[]) {
  return db().selectFrom('messages').select(['id', 'external_id', 'remote_jid', 'created_at']).where('connection_id', '=', connectionId).where('external_id', 'in', externalIds).execute();
}

async function upsertEvents(externalIds: string[]) {
  const rows = await db().selectFrom('events').select(['id', 'payload']).where('connection_id', '=', connectionId).where('event', '=', 'messages.upsert').orderBy('id').execute();
  return rows
    .map((row) => ({ id: row.id, payload: (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { data: { key: { id: string } } } }))
    .filter((e) => externalIds.includes(e.payload.data.key.id));
}

/** The network ids the webhook received, one per delivery (the webhook does not batch). */
const deliveredIds = () => receiver.hits(path).map((hit) => hit.json.data.key.id as string);

describe('inbound messages that arrive together', () => {
  test('a driver burst with replays is stored in one write: each network id once, published and delivered once, in order', async () => {
    const events = driverEventsFor(service.runtime.ctx, connectionId);
    const earlier = 'ONE.EARLIER';
    // Stored before the burst, and older than any of it.
    const earlierMessage = { ...received(earlier, 0), timestamp: 1_789_999_000 };
    await events.message(earlierMessage);

    const ids = Array.from({ length: 30 }, (_, i) => `ONE.${i}`);
    const burst = ids.map((id, i) => received(id, i));
    burst.splice(10, 0, received('ONE.3', 3)); // the network delivered it twice in one burst
    burst.push(earlierMessage); // redelivered after it was stored
    // Handed over in one turn of the event loop, as a callback carrying many does.
    await Promise.all(burst.map((m) => events.message(m)));

    const stored = await storedWith(ids);
    expect(stored.map((m) => m.external_id).sort()).toEqual([...ids].sort());
    expect(new Set(stored.map((m) => m.created_at.getTime())).size).toBe(1);
    expect((await upsertEvents([...ids, earlier])).map((e) => e.payload.data.key.id)).toEqual([earlier, ...ids]);

    // Each chat touched once for the burst: its latest message, its contact's name.
    for (let c = 0; c < 7; c++) {
      const chat = await db().selectFrom('chats').selectAll().where('connection_id', '=', connectionId).where('remote_jid', '=', `${contact(c)}@s.whatsapp.net`).executeTakeFirstOrThrow();
      const latest = Math.max(...ids.map((_, i) => i).filter((i) => i % 7 === c).map((i) => 1_790_000_000 + i));
      expect(chat.last_message_at.getTime()).toBe(latest * 1000);
      expect(chat.last_contact_message_at?.getTime()).toBe(latest * 1000);
      expect(chat.name).toBe(`Contact ${c}`);
    }

    await waitUntil(async () => deliveredIds().filter((id) => id.startsWith('ONE.')).length, (n) => n >= 31, { what: '31 deliveries' });
    await Bun.sleep(300); // a duplicate delivery would come right behind the others
    expect(deliveredIds().filter((id) => id.startsWith('ONE.')).sort()).toEqual([...ids, earlier].sort());
  }, 60_000);

  test('a message the database refuses fails alone: the rest of its burst is stored, published and delivered once, in order', async () => {
    const events = driverEventsFor(service.runtime.ctx, connectionId);
    const ids = Array.from({ length: 40 }, (_, i) => `TWO.${i}`);
    const burst = ids.map((id, i) => received(id, 100 + i));
    burst.splice(5, 0, received('TWO.3', 103)); // a replay, here too
    // Postgres refuses \u0000 in jsonb: this message cannot be stored, whatever the batch.
    burst.splice(20, 0, received('TWO.REFUSED', 150, 'nul \u0000 inside'));

    const outcomes = await Promise.allSettled(burst.map((m) => events.message(m)));
    expect(outcomes.flatMap((o, i) => (o.status === 'rejected' ? [burst[i]!.externalId] : []))).toEqual(['TWO.REFUSED']);

    const stored = await storedWith([...ids, 'TWO.REFUSED']);
    expect(stored.map((m) => m.external_id).sort()).toEqual([...ids].sort());
    expect((await upsertEvents(ids)).map((e) => e.payload.data.key.id)).toEqual(ids);
    await waitUntil(async () => deliveredIds().filter((id) => id.startsWith('TWO.')).length, (n) => n >= 40, { what: '40 deliveries' });
    await Bun.sleep(300);
    expect(deliveredIds().filter((id) => id.startsWith('TWO.')).sort()).toEqual([...ids].sort());
  }, 60_000);

  test('concurrent sandbox injections: each answered with its own message (a replay with the stored one), stored in fewer writes than messages', async () => {
    const strangerConnection = await connectedConnection(service, stranger.token, 'Their line');
    const inject = (connection: string, body: Record<string, unknown>, apikey = owner.token) =>
      service.call('POST', `/v3/connections/${connection}/sandbox/messages`, { apikey, body });
    const answers = await Promise.all([
      ...Array.from({ length: 60 }, (_, i) => inject(connectionId, { from: `+${contact(200 + (i % 9))}`, text: `concurrent ${i}`, externalId: `CONC.${i}` })),
      inject(connectionId, { from: `+${contact(200)}`, text: 'concurrent 0, again', externalId: 'CONC.0' }),
      // Another workspace's connection is not found, even in the same batch as ours.
      inject(connectionId, { from: `+${contact(300)}`, text: 'not yours', externalId: 'CONC.STRANGER' }, stranger.token),
      inject(strangerConnection, { from: `+${contact(301)}`, text: 'theirs', externalId: 'CONC.THEIRS' }, stranger.token),
    ]);
    for (const a of answers.slice(0, 60)) expect(a.status).toBe(201);
    answers.slice(0, 60).forEach((a, i) => expect(a.body).toMatchObject({ remoteJid: `${contact(200 + (i % 9))}@s.whatsapp.net`, direction: 'inbound' }));
    // The replay is answered with the message stored first.
    expect(answers[60]!.status).toBe(201);
    expect(answers[60]!.body.id).toBe(answers[0]!.body.id);
    expect(answers[61]!.status).toBe(404);
    expect(answers[62]!.status).toBe(201);

    const ids = Array.from({ length: 60 }, (_, i) => `CONC.${i}`);
    const stored = await storedWith([...ids, 'CONC.STRANGER', 'CONC.THEIRS']);
    expect(stored.map((m) => m.external_id).sort()).toEqual(ids.sort());
    expect(new Set(answers.slice(0, 60).map((a) => a.body.id))).toEqual(new Set(stored.map((m) => m.id)));
    // Messages stored in one write share their creation time: fewer times than messages means batches.
    expect(new Set(stored.map((m) => m.created_at.getTime())).size).toBeLessThan(60);

    expect((await upsertEvents(ids)).length).toBe(60);
    await waitUntil(async () => deliveredIds().filter((id) => id.startsWith('CONC.')).length, (n) => n >= 60, { what: '60 deliveries' });
    await Bun.sleep(300);
    expect(deliveredIds().filter((id) => id.startsWith('CONC.')).sort()).toEqual(ids.sort());
  }, 60_000);
});
