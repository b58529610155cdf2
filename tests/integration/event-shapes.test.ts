import { beforeAll, describe, expect, test } from 'bun:test';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { chatMessageWhen } from '../support/wait.ts';
import { useReceiver, type Hit } from '../support/webhook-receiver.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * What connection webhooks carry, the same on every network (issue 20 items 1, 2, 5, 6, 7):
 * a sandbox (unofficial) and a cloud-api (official, against the Graph API simulator)
 * connection of one workspace, each with a webhook to a real HTTP receiver.
 *
 * Spec 6.1: "`messages.update` | a delivery status changed (sent, delivered, read); failures
 * appear in `statuses[].errors` (code `131047` means the 24-hour window is closed)".
 */

const receiver = useReceiver();
let sandbox: { id: string; path: string };
let official: { id: string; path: string; callbackUrl: string };

const EVENTS = ['messages.upsert', 'send.message', 'messages.update'];

async function subscribe(connectionId: string, path: string) {
  const webhook = await service.call('POST', '/v3/webhooks', { apikey: owner.token, body: { url: receiver.url(path), events: EVENTS, connections: [connectionId] } });
  expect(webhook.status).toBe(201);
}

// The contacts' phones stay offline: after a send the platform posts `sent` only (a test posts the rest).
const sim = useGraphSimulator({ displayPhoneNumber: '+1 555-010-2020', statusCallbacks: { upTo: 'sent' } });

const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {

  const created = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'sandbox' } });
  expect(created.status).toBe(201);
  expect((await service.call('POST', `/v3/connections/${created.body.id}/connect`, { apikey: owner.token })).body.status).toBe('CONNECTED');
  sandbox = { id: created.body.id, path: '/hooks/sandbox' };
  await subscribe(sandbox.id, sandbox.path);

  const { connectionId, callbackUrl } = await officialConnection(service, sim, owner.token);
  official = { id: connectionId, path: '/hooks/official', callbackUrl };
  await subscribe(official.id, official.path);
}, HOOK_TIMEOUT);

let counter = 0;
const newContact = (prefix: string) => `${prefix}${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++counter).padStart(2, '0')}`;

const send = (connectionId: string, body: Record<string, unknown>) => service.call('POST', `/v3/connections/${connectionId}/chats/messages`, { apikey: owner.token, body });

const until = (connectionId: string, id: string, done: (m: any) => boolean, timeoutMs = 20_000): Promise<any> => chatMessageWhen(service, owner.token, connectionId, id, done, { timeout: timeoutMs });

/** The webhook deliveries (single or batched `data`) of one event on a path, as envelopes with one `data` each. */
function delivered(path: string, event: string): any[] {
  return receiver
    .hits(path)
    .map((hit: Hit) => hit.json)
    .filter((body) => body?.event === event)
    .flatMap((body) => (Array.isArray(body.data) ? body.data.map((data: unknown) => ({ ...body, data })) : [body]));
}

/** Waits until the receiver holds an envelope of `event` on `path` that `match`es; answers it. */
async function arrival(path: string, event: string, match: (envelope: any) => boolean, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = delivered(path, event).find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${event} on ${path} matched within ${timeoutMs} ms; got ${JSON.stringify(delivered(path, event).map((e) => e.data))}`);
    await Bun.sleep(50);
  }
}

const shapeOf = (data: any) => ({ top: Object.keys(data).sort(), key: Object.keys(data.key ?? {}).sort(), status: Object.keys(data.statuses?.[0] ?? {}).sort() });

describe('item 1: a failed send’s messages.update has one shape on every network (spec 6.1: `statuses[].errors`)', () => {
  test('official: the platform’s failed status (131047) arrives as data.statuses[0].errors, in the same shape as a sandbox failure', async () => {
    const contact = newContact('4479');
    sim.closeWindowFor(contact);
    // The contact writes first, so the service lets free text through; the platform fails it later.
    expect((await sim.deliverIncoming(official.callbackUrl, { from: contact, type: 'text', text: { body: 'hi' } })).status).toBe(200);
    const res = await send(official.id, { to: contact, text: 'refused by the platform' });
    expect(res.status).toBe(201);
    const failed = await until(official.id, res.body.id, (m) => m.status === 'FAILED');
    expect(failed.status).toBe('FAILED');
    sim.openWindowFor(contact);

    const update = await arrival(official.path, 'messages.update', (e) => e.data.key?.id === failed.externalId);
    expect(update.data.statuses).toHaveLength(1);
    expect(update.data.statuses[0]).toMatchObject({ id: failed.externalId, status: 'failed', recipient_id: contact, errors: [{ code: 131047 }] });
    expect(typeof update.data.statuses[0].errors[0].title).toBe('string');
    expect(update.data.errors).toBeUndefined();

    // Sandbox: "Recipients starting with 999 simulate numbers that are not on the network".
    const lost = await send(sandbox.id, { to: '9995550001', text: 'nobody there' });
    expect(lost.status).toBe(201);
    const lostUpdate = await arrival(sandbox.path, 'messages.update', (e) => e.data.key?.id === lost.body.id);
    expect(lostUpdate.data.statuses[0]).toMatchObject({ status: 'failed', errors: [{ code: 'not_on_network' }] });
    expect(shapeOf(lostUpdate.data)).toEqual(shapeOf(update.data));
  }, 60_000);
});

describe('item 5: SENT is a status change too (spec 6.1: "sent, delivered, read")', () => {
  test('sandbox: PENDING → SENT publishes send.message AND messages.update (status sent), shaped like a receipt', async () => {
    const contact = newContact('5511');
    const res = await send(sandbox.id, { to: contact, text: 'did it go?' });
    expect(res.status).toBe(201);
    const done = await until(sandbox.id, res.body.id, (m) => m.status !== 'PENDING');
    expect(done.status).toBe('SENT');
    await arrival(sandbox.path, 'send.message', (e) => e.data.key.id === done.externalId);
    const sent = await arrival(sandbox.path, 'messages.update', (e) => e.data.key?.id === done.externalId);
    expect(sent).toMatchObject({ event: 'messages.update', connectionId: sandbox.id, remoteJid: `${contact}@s.whatsapp.net` });
    expect(sent.data).toMatchObject({ key: { id: done.externalId, remoteJid: `${contact}@s.whatsapp.net`, fromMe: true }, statuses: [{ id: done.externalId, status: 'sent', recipient_id: contact }] });
    expect(Number.isInteger(sent.data.statuses[0].timestamp)).toBe(true);

    // A receipt afterwards: the same shape, only the status differs.
    const receipt = await service.call('POST', `/v3/connections/${sandbox.id}/sandbox/receipts`, { apikey: owner.token, body: { messageId: res.body.id, status: 'DELIVERED' } });
    expect(receipt.status).toBe(201);
    const deliveredUpdate = await arrival(sandbox.path, 'messages.update', (e) => e.data.key?.id === done.externalId && e.data.statuses[0].status === 'delivered');
    expect(shapeOf(deliveredUpdate.data)).toEqual(shapeOf(sent.data));
  }, 60_000);

  test('official: the platform’s `sent` status is published as messages.update in the same shape (once: the service adds none of its own)', async () => {
    const contact = newContact('4479');
    expect((await sim.deliverIncoming(official.callbackUrl, { from: contact, type: 'text', text: { body: 'hi' } })).status).toBe(200);
    const res = await send(official.id, { to: contact, text: 'tracked' });
    const done = await until(official.id, res.body.id, (m) => m.status !== 'PENDING');
    expect(done.status).toBe('SENT');
    // The platform posts `sent` by itself after taking the send; `delivered` follows.
    await sim.settle();
    expect(sim.statuses.filter((s) => s.id === done.externalId).map((s) => [s.status, s.answer])).toEqual([['sent', 200]]);
    expect((await sim.deliverStatus(official.callbackUrl, { messageId: done.externalId, status: 'delivered' })).status).toBe(200);
    const sent = await arrival(official.path, 'messages.update', (e) => e.data.key?.id === done.externalId && e.data.statuses[0].status === 'sent');
    expect(sent.data).toMatchObject({ key: { id: done.externalId, remoteJid: `${contact}@s.whatsapp.net`, fromMe: true }, statuses: [{ id: done.externalId, status: 'sent', recipient_id: contact }] });
    const sandboxSent = delivered(sandbox.path, 'messages.update').find((e) => e.data.statuses?.[0]?.status === 'sent')!;
    expect(shapeOf(sent.data)).toEqual(shapeOf(sandboxSent.data));
    await arrival(official.path, 'messages.update', (e) => e.data.key?.id === done.externalId && e.data.statuses[0].status === 'delivered');
    expect(delivered(official.path, 'messages.update').filter((e) => e.data.key?.id === done.externalId).map((e) => e.data.statuses[0].status)).toEqual(['sent', 'delivered']);
  }, 60_000);
});

describe('item 6: send.message shows what was sent', () => {
  test('contacts: contactsArrayMessage.contacts is a list of { displayName, vcard }', async () => {
    const contact = newContact('5511');
    const res = await send(sandbox.id, { to: contact, contacts: [{ name: 'Ana Souza', phones: ['+5511977776666'] }, { name: 'Bruno Lima', phones: ['5511966665555'], emails: ['b@example.com'] }] });
    expect(res.status).toBe(201);
    const done = await until(sandbox.id, res.body.id, (m) => m.status !== 'PENDING');
    const event = await arrival(sandbox.path, 'send.message', (e) => e.data.key.id === done.externalId);
    expect(event.data.messageType).toBe('contactsArrayMessage');
    const node = event.data.message.contactsArrayMessage;
    expect(node.displayName).toBe('2 contacts');
    expect(Array.isArray(node.contacts)).toBe(true);
    expect(node.contacts.map((c: any) => c.displayName)).toEqual(['Ana Souza', 'Bruno Lima']);
    expect(node.contacts[0].vcard).toContain('BEGIN:VCARD');
    expect(node.contacts[0].vcard).toContain('waid=5511977776666');
    expect(node.contacts[1].vcard).toContain('EMAIL;type=INTERNET:b@example.com');
  }, 60_000);

  test('list and buttons: listMessage / buttonsMessage nodes with their title, text, sections and buttons', async () => {
    const contact = newContact('5511');
    const list = await send(sandbox.id, {
      to: contact,
      list: { header: 'Plans', body: 'Pick one', buttonText: 'Options', footer: 'Prices in BRL', sections: [{ title: 'Monthly', rows: [{ id: 'basic', title: 'Basic' }, { id: 'pro', title: 'Pro', description: 'More' }] }] },
    });
    const buttons = await send(sandbox.id, { to: contact, buttons: { body: 'Confirm?', footer: 'Reply within a day', buttons: [{ id: 'yes', title: 'Yes' }, { id: 'no', title: 'No' }] } });
    expect([list.status, buttons.status]).toEqual([201, 201]);
    const listDone = await until(sandbox.id, list.body.id, (m) => m.status !== 'PENDING');
    const buttonsDone = await until(sandbox.id, buttons.body.id, (m) => m.status !== 'PENDING');

    const listEvent = await arrival(sandbox.path, 'send.message', (e) => e.data.key.id === listDone.externalId);
    expect(listEvent.data.messageType).toBe('listMessage');
    expect(listEvent.data.message).toEqual({
      listMessage: {
        title: 'Plans',
        description: 'Pick one',
        buttonText: 'Options',
        footerText: 'Prices in BRL',
        listType: 'SINGLE_SELECT',
        sections: [{ title: 'Monthly', rows: [{ rowId: 'basic', title: 'Basic' }, { rowId: 'pro', title: 'Pro', description: 'More' }] }],
      },
    });
    const buttonsEvent = await arrival(sandbox.path, 'send.message', (e) => e.data.key.id === buttonsDone.externalId);
    expect(buttonsEvent.data.messageType).toBe('buttonsMessage');
    expect(buttonsEvent.data.message).toEqual({
      buttonsMessage: {
        contentText: 'Confirm?',
        footerText: 'Reply within a day',
        buttons: [
          { buttonId: 'yes', buttonText: { displayText: 'Yes' }, type: 'RESPONSE' },
          { buttonId: 'no', buttonText: { displayText: 'No' }, type: 'RESPONSE' },
        ],
      },
    });
  }, 60_000);
});

describe('item 7: an official image without a media id keeps its mimetype (spec 2.13: `imageMessage` with `mimetype`)', () => {
  test('the node has the provider’s mimetype and no downloadMediaUrl', async () => {
    const contact = newContact('4479');
    const answer = await sim.deliverIncoming(official.callbackUrl, { from: contact, type: 'image', image: { mime_type: 'image/png', caption: 'no id' } });
    expect(answer.status).toBe(200);
    const upsert = await arrival(official.path, 'messages.upsert', (e) => e.data.key.id === answer.messageId);
    expect(upsert.data.messageType).toBe('imageMessage');
    expect(upsert.data.message.imageMessage).toEqual({ caption: 'no id', mimetype: 'image/png' });
  }, 60_000);
});

describe('item 2: media the provider cannot serve is 502 or 404, never 500 (spec 7.1)', () => {
  test('official: the platform down → 502; the platform no longer has it → 404; on the signed link and on the v2 route', async () => {
    const contact = newContact('4479');
    // A media id the platform does not (or no longer) know: the real platform keeps media about 30 days.
    const answer = await sim.deliverIncoming(official.callbackUrl, { from: contact, type: 'image', image: { id: '990000000000001', mime_type: 'image/jpeg' } });
    expect(answer.status).toBe(200);
    const upsert = await arrival(official.path, 'messages.upsert', (e) => e.data.key.id === answer.messageId);
    const link: string = upsert.data.message.imageMessage.downloadMediaUrl;
    expect(link).toContain('/download?token=');
    const history = await service.call('GET', `/v3/connections/${official.id}/chats/messages?chat=${contact}`, { apikey: owner.token });
    expect(history.status).toBe(200);
    const messageId = (history.body as any[]).find((m) => m.externalId === answer.messageId).id;
    const v2Media = () => service.call('GET', `/v2/connections/${official.id}/chats/${contact}/messages/${messageId}/media`, { apikey: owner.token });
    const download = async () => {
      const res = await fetch(link.replace(service.runtime.ctx.config.publicUrl, service.url));
      return { status: res.status, body: await res.json().catch(() => undefined) };
    };

    sim.outageNext(1_000);
    try {
      const down = await download();
      expectStandardError(down, 502, 'Bad Gateway');
      expectStandardError(await v2Media(), 502, 'Bad Gateway');
    } finally {
      sim.outageNext(0);
    }
    const gone = await download();
    expectStandardError(gone, 404, 'Not Found');
    expect(gone.body.message).toContain('no longer available');
    expectStandardError(await v2Media(), 404, 'Not Found');
  }, 60_000);
});
