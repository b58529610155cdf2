import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { SandboxDriver } from '../../adapters/drivers/sandbox/index.ts';
import { startGraphSimulator, type GraphSimulator } from '../support/graph-simulator.ts';
import { teachTemplates, type TemplateSimulator } from '../support/graph-simulator-templates.ts';
import { connectedConnection, eventually } from '../support/helpdesk.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { useReceiver } from '../support/webhook-receiver.ts';
import { utilityTemplate } from '../support/template-definitions.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * The v2 plugin (issue 10; spec 9: "v2 keeps answering but is frozen … The same API key
 * authenticates v2 and v3 … v2 puts the recipient in the URL path
 * (`/v2/connections/{id}/chats/{remoteJid}/messages`); v3 puts it in the body as `to`").
 * Behaviour on the sandbox and on cloud-api against the Graph simulator; the shapes are pinned
 * in v2-contract.test.ts.
 */

let sim: GraphSimulator;
let templates: TemplateSimulator;
let sandboxId: string;
const receiver = useReceiver();

beforeAll(async () => {
  // The contacts' phones stay offline: after a send the platform posts `sent` only.
  sim = await startGraphSimulator({ statusCallbacks: { upTo: 'sent' } });
  templates = teachTemplates(sim);
}, HOOK_TIMEOUT);

const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl, PLAN_FREE_MESSAGES: '2' } }));
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  sandboxId = await connectedConnection(service, owner.token, 'v2 sandbox');
}, HOOK_TIMEOUT);

afterAll(async () => {
  await sim?.stop();
}, HOOK_TIMEOUT);

const call = (method: string, path: string, body?: unknown, apikey = owner.token, headers?: Record<string, string>) => service.call(method, path, { apikey, body, headers });
const v2Messages = (connectionId: string, chat: string) => `/v2/connections/${connectionId}/chats/${chat}/messages`;

async function settled(connectionId: string, id: string) {
  return eventually(async () => {
    const found = await call('GET', `/v3/connections/${connectionId}/chats/messages/${id}`);
    return found.body.status !== 'PENDING' ? found.body : undefined;
  }, `message ${id} settled`);
}

async function uploaded(connectionId: string, bytes: Uint8Array, mimetype: string): Promise<string> {
  const response = await fetch(`${service.url}/v3/connections/${connectionId}/media`, { method: 'POST', headers: { apikey: owner.token, 'content-type': mimetype }, body: bytes as Uint8Array<ArrayBuffer> });
  expect(response.status).toBe(201);
  return ((await response.json()) as { mediaId: string }).mediaId;
}

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3]);

describe('v2 on the sandbox', () => {
  test('connections: the list and one, with their status; an unknown id is the coded CONNECTION_NOT_FOUND', async () => {
    const list = await call('GET', '/v2/connections');
    expect(list.status).toBe(200);
    expect(list.body.find((c: any) => c.id === sandboxId)).toMatchObject({ name: 'v2 sandbox', status: 'CONNECTED' });
    expect((await call('GET', `/v2/connections/${sandboxId}`)).body.status).toBe('CONNECTED');
    const unknown = await call('GET', '/v2/connections/00000000-0000-7000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('CONNECTION_NOT_FOUND');
  });

  test('every v2 message kind is sent with the recipient in the path, and reaches the network', async () => {
    const chat = '5511977770001';
    const imageId = await uploaded(sandboxId, PNG, 'image/png');
    const bodies: Record<string, unknown>[] = [
      { text: 'hello from v2' },
      { image: { mediaId: imageId, caption: 'a picture' } },
      { video: { mediaId: await uploaded(sandboxId, new Uint8Array([0, 0, 0, 24, 102, 116, 121, 112]), 'video/mp4') } },
      { audio: { mediaId: await uploaded(sandboxId, new Uint8Array([79, 103, 103, 83, 0, 2]), 'audio/ogg'), voiceNote: true } },
      { document: { mediaId: await uploaded(sandboxId, new TextEncoder().encode('%PDF-1.4'), 'application/pdf'), fileName: 'terms.pdf' } },
      { sticker: { mediaId: await uploaded(sandboxId, new TextEncoder().encode('RIFF0000WEBPVP8 '), 'image/webp') } },
      { list: { body: 'Pick one', buttonText: 'Options', sections: [{ title: 'Fruit', rows: [{ id: 'lemon', title: 'Lemon' }] }] } },
      { buttons: { body: 'Yes or no?', buttons: [{ id: 'y', title: 'Yes' }, { id: 'n', title: 'No' }] } },
    ];
    for (const body of bodies) {
      const res = await call('POST', v2Messages(sandboxId, chat), body);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ remoteJid: `${chat}@s.whatsapp.net`, fromMe: true, type: Object.keys(body)[0], status: 'PENDING' });
      expect((await settled(sandboxId, res.body.id)).status).toBe('SENT');
    }
    const history = await call('GET', `${v2Messages(sandboxId, chat)}?limit=100`);
    expect(history.status).toBe(200);
    expect(history.body.map((m: any) => m.type)).toEqual(bodies.map((b) => Object.keys(b)[0]));
    expect(history.body.every((m: any) => m.status === 'SENT')).toBe(true);
  });

  test('a template needs an official connection (422), as on v3', async () => {
    expectStandardError(await call('POST', v2Messages(sandboxId, '5511977770002'), { template: { name: 'hello', language: 'en_US' } }), 422, 'Unprocessable Entity');
  });

  test('v3’s message kinds and fields are not v2’s: location, contacts, reactions, replies and a `to` are refused, nothing sent', async () => {
    const chat = '5511977770003';
    for (const body of [
      { location: { latitude: 1, longitude: 2 } },
      { contacts: [{ name: 'A', phones: ['+5511999990000'] }] },
      { reaction: { messageId: 'x', emoji: '👍' } },
      { text: 'hi', replyTo: 'x' },
      { text: 'hi', to: '5511977770099' },
    ]) {
      const res = await call('POST', v2Messages(sandboxId, chat), body);
      expectStandardError(res, 400, 'Bad Request');
      expect(res.body.message.join(' ')).toContain('not part of v2');
    }
    // The kinds named to a caller are v2's own.
    const empty = await call('POST', v2Messages(sandboxId, chat), {});
    expect(empty.body.message).toEqual(['body must contain exactly one message field: text, image, video, audio, document, sticker, list, buttons, template']);
    expect((await call('GET', v2Messages(sandboxId, chat))).body).toEqual([]);
  });

  test('a chat id in the path works as a number does; a bad one is a 400', async () => {
    const res = await call('POST', v2Messages(sandboxId, '5511977770004@s.whatsapp.net'), { text: 'by jid' });
    expect(res.status).toBe(201);
    expect(res.body.remoteJid).toBe('5511977770004@s.whatsapp.net');
    expect((await call('GET', v2Messages(sandboxId, '5511977770004'))).body.map((m: any) => m.id)).toEqual([res.body.id]);
    expectStandardError(await call('POST', v2Messages(sandboxId, 'not-a-number'), { text: 'x' }), 400, 'Bad Request');
  });

  test('Idempotency-Key: a retried v2 send answers the first message (200)', async () => {
    const headers = { 'idempotency-key': `v2-${crypto.randomUUID()}` };
    const first = await call('POST', v2Messages(sandboxId, '5511977770005'), { text: 'once' }, owner.token, headers);
    const again = await call('POST', v2Messages(sandboxId, '5511977770005'), { text: 'once' }, owner.token, headers);
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.id).toBe(first.body.id);
  });

  test('chats: the page envelope of the connection’s chats, most recent first', async () => {
    const chats = await call('GET', `/v2/connections/${sandboxId}/chats?per_page=100`);
    expect(chats.status).toBe(200);
    expect(chats.body.data.map((c: any) => c.remoteJid)).toContain('5511977770001@s.whatsapp.net');
  });

  test('presence: composing shows “typing…” to the contact, paused clears it (through the worker); anything else is 400', async () => {
    const typing = (service.runtime.ctx.drivers.get('sandbox') as SandboxDriver).typingLog;
    const seen = (on: boolean) => eventually(async () => typing.find((t) => t.connectionId === sandboxId && t.to === '5511977770006' && t.typing === on), `typing ${on}`);
    const shown = await call('POST', `/v2/connections/${sandboxId}/chats/5511977770006/presence`, { presence: 'composing' });
    expect(shown.status).toBe(202);
    await seen(true);
    expect((await call('POST', `/v2/connections/${sandboxId}/chats/5511977770006/presence`, { presence: 'paused' })).status).toBe(202);
    await seen(false);
    expectStandardError(await call('POST', `/v2/connections/${sandboxId}/chats/5511977770006/presence`, { presence: 'dancing' }), 400, 'Bad Request');
  });

  test('media download: a received image’s bytes with the API key; a text message, another chat or no key is refused', async () => {
    const injected = await call('POST', `/v3/connections/${sandboxId}/sandbox/messages`, {
      from: '5511977770007',
      type: 'imageMessage',
      text: 'look',
      media: { base64: Buffer.from(PNG).toString('base64'), mimetype: 'image/png' },
    });
    expect(injected.status).toBe(201);
    const [received] = (await call('GET', v2Messages(sandboxId, '5511977770007'))).body;
    expect(received).toMatchObject({ fromMe: false, type: 'imageMessage', status: 'RECEIVED' });
    const path = `${v2Messages(sandboxId, '5511977770007')}/${received.id}/media`;
    const download = await fetch(`${service.url}${path}`, { headers: { apikey: owner.token } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(PNG);
    expect((await fetch(`${service.url}${path}`)).status).toBe(401);
    expect((await call('GET', `${v2Messages(sandboxId, '5511977770008')}/${received.id}/media`)).status).toBe(404);
    const text = await call('POST', v2Messages(sandboxId, '5511977770007'), { text: 'no media' });
    expect((await call('GET', `${v2Messages(sandboxId, '5511977770007')}/${text.body.id}/media`)).status).toBe(404);
  });

  test('an uploaded image sent through v2 downloads through v2 too', async () => {
    const mediaId = await uploaded(sandboxId, PNG, 'image/png');
    const sent = await call('POST', v2Messages(sandboxId, '5511977770009'), { image: { mediaId } });
    const download = await fetch(`${service.url}${v2Messages(sandboxId, '5511977770009')}/${sent.body.id}/media`, { headers: { apikey: owner.token } });
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(PNG);
  });

  test('verifications through the connection and standalone: on the network or not; a bad number is 400', async () => {
    const on = await call('POST', `/v2/connections/${sandboxId}/verifications`, { phone: '+55 11 97777-0010' });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ phone: '5511977770010', exists: true, jid: '5511977770010@s.whatsapp.net', connectionId: sandboxId });
    expect((await call('POST', `/v2/connections/${sandboxId}/verifications`, { phone: '9990001112' })).body).toMatchObject({ exists: false, jid: null });
    const standalone = await call('POST', '/v2/verifications', { phone: '5511977770011' });
    expect(standalone.status).toBe(200);
    expect(standalone.body).toMatchObject({ exists: true, connectionId: expect.any(String) });
    expectStandardError(await call('POST', '/v2/verifications', { phone: 'call me' }), 400, 'Bad Request');
  });

  test('standalone verification with no connected connection that can tell is 422', async () => {
    const lonely = await service.bootstrap({ email: 'lonely-v2@example.com', workspace: 'Lonely', plan: 'PRO' });
    expectStandardError(await call('POST', '/v2/verifications', { phone: '5511977770012' }, lonely.token), 422, 'Unprocessable Entity');
  });
});

describe('v2 shares authentication, credits and permissions with v3 (spec 9)', () => {
  test('no key is 401 in the standard shape; X-Account-Id selects the workspace as on v3', async () => {
    const res = await service.call('GET', '/v2/connections');
    expect(res.status).toBe(401);
    const wrong = await call('GET', '/v2/connections', undefined, owner.token, { 'x-account-id': '00000000-0000-7000-8000-000000000000' });
    const v3 = await call('GET', '/v3/connections', undefined, owner.token, { 'x-account-id': '00000000-0000-7000-8000-000000000000' });
    expect(wrong.status).toBe(v3.status);
    expect(wrong.body).toEqual(v3.body);
    const mine = await call('GET', '/v2/connections', undefined, owner.token, { 'x-account-id': owner.workspaceId });
    expect(mine.status).toBe(200);
  });

  test('a v2 send consumes a credit; out of credits it is 403 USER_PLAN_EXCEEDED_MESSAGES as on v3', async () => {
    const free = await service.bootstrap({ email: 'free-v2@example.com', workspace: 'Free v2', plan: 'FREE' });
    const connection = await connectedConnection(service, free.token, 'free');
    const before = (await call('GET', '/v3/summary', undefined, free.token)).body.messages;
    expect((await call('POST', v2Messages(connection, '5511977770013'), { text: '1' }, free.token)).status).toBe(201);
    expect((await call('POST', '/v3/connections/' + connection + '/chats/messages', { to: '5511977770013', text: '2' }, free.token)).status).toBe(201);
    const out = await call('POST', v2Messages(connection, '5511977770013'), { text: '3' }, free.token);
    expect(out.status).toBe(403);
    expect(out.body.message).toBe('USER_PLAN_EXCEEDED_MESSAGES');
    const after = (await call('GET', '/v3/summary', undefined, free.token)).body.messages;
    expect(after.reserved + after.consumed - (before.reserved + before.consumed)).toBe(2);
  });

  test('the roles matrix: a Manager cannot read a connection’s messages, an Agent cannot send (403 on v2 as on v3)', async () => {
    const manager = await memberWithToken(service, owner, 'MANAGER');
    const agent = await memberWithToken(service, owner, 'AGENT');
    expect((await call('GET', v2Messages(sandboxId, '5511977770001'), undefined, manager.token)).status).toBe(403);
    expect((await call('GET', `/v3/connections/${sandboxId}/chats/messages?chat=5511977770001`, undefined, manager.token)).status).toBe(403);
    expect((await call('POST', v2Messages(sandboxId, '5511977770001'), { text: 'x' }, agent.token)).status).toBe(403);
    expect((await call('POST', `/v2/connections/${sandboxId}/verifications`, { phone: '5511977770001' }, agent.token)).status).toBe(403);
  });
});

describe('a message sent through v2 and one through v3 are indistinguishable (issue 10)', () => {
  test('in v3 history and in the send.message webhook, apart from ids and times', async () => {
    const hook = await call('POST', '/v3/webhooks', { url: receiver.url('/same'), events: ['send.message'], connections: [sandboxId] });
    expect(hook.status).toBe(201);
    const chat = '5511977770020';
    const viaV2 = await call('POST', v2Messages(sandboxId, chat), { text: 'same words' });
    await settled(sandboxId, viaV2.body.id);
    const viaV3 = await call('POST', `/v3/connections/${sandboxId}/chats/messages`, { to: chat, text: 'same words' });
    await settled(sandboxId, viaV3.body.id);

    const history = (await call('GET', `/v3/connections/${sandboxId}/chats/messages?chat=${chat}`)).body;
    expect(history).toHaveLength(2);
    const comparable = ({ id: _id, externalId: _e, messageTimestamp: _m, createdAt: _c, updatedAt: _u, ...rest }: any) => rest;
    expect(comparable(history[0])).toEqual(comparable(history[1]));

    const hits = await receiver.waitFor('/same', 2);
    const data = hits.map((h) => {
      const { data: d, ...envelope } = h.json;
      const { key, messageTimestamp: _t, ...rest } = d;
      return { envelope, rest, key: { ...key, id: undefined } };
    });
    expect(data[0]).toEqual(data[1]!);
    // The same through v2's own history.
    const v2History = (await call('GET', v2Messages(sandboxId, chat))).body;
    const plain = ({ id: _id, timestamp: _t, ...rest }: any) => rest;
    expect(plain(v2History[0])).toEqual(plain(v2History[1]));
  });
});

describe('v2 on cloud-api against the Graph simulator', () => {
  let officialId: string;
  let callbackUrl: string;
  let lastIncoming = '';
  beforeAll(async () => {
    ({ connectionId: officialId, callbackUrl } = await officialConnection(service, sim, owner.token, 'v2 official'));
  }, HOOK_TIMEOUT);

  test('the connection shows CONNECTED in the v2 list', async () => {
    expect((await call('GET', '/v2/connections')).body.find((c: any) => c.id === officialId)).toMatchObject({ status: 'CONNECTED' });
  });

  test('a contact writes; v2 sends free text inside the 24-hour window, the platform takes it, history and media work', async () => {
    const from = '447700900501';
    const imageId = sim.addMedia(PNG, 'image/png');
    const delivered = await sim.deliverIncoming(callbackUrl, { from, type: 'image', image: { id: imageId, mime_type: 'image/png' } });
    expect(delivered.status).toBe(200);
    lastIncoming = delivered.messageId;
    const [received] = await eventually(async () => {
      const found = (await call('GET', v2Messages(officialId, from))).body;
      return found.length > 0 ? found : undefined;
    }, 'incoming image');
    expect(received).toMatchObject({ fromMe: false, type: 'imageMessage' });
    const media = await fetch(`${service.url}${v2Messages(officialId, from)}/${received.id}/media`, { headers: { apikey: owner.token } });
    expect(media.status).toBe(200);
    expect(new Uint8Array(await media.arrayBuffer())).toEqual(PNG);

    const sent = await call('POST', v2Messages(officialId, from), { text: 'thanks, got it' });
    expect(sent.status).toBe(201);
    expect((await settled(officialId, sent.body.id)).status).toBe('SENT');
    expect(sim.sent.some((m) => m.body.to === from && m.body.text?.body === 'thanks, got it')).toBe(true);
  });

  test('free text into a closed window is 422, as on v3', async () => {
    expectStandardError(await call('POST', v2Messages(officialId, '447700900502'), { text: 'hello?' }), 422, 'Unprocessable Entity');
  });

  test('templates: created PENDING through v2, listed, approved, then sent through v2 with the recipient in the path', async () => {
    const name = `v2_order_${Date.now() % 100_000}`;
    const created = await call('POST', `/v2/connections/${officialId}/templates`, utilityTemplate(name, 'Order {{1}} is ready'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name, status: 'PENDING' });
    const externalId = [...templates.templates.values()].find((t) => t.name === name)!.id;
    await templates.approve(externalId);
    const listed = await call('GET', `/v2/connections/${officialId}/templates?s=${name}`);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: created.body.id, status: 'APPROVED' })]);
    const misfit = await call('POST', v2Messages(officialId, '447700900503'), { template: { name, language: 'en_US' } });
    expectStandardError(misfit, 400, 'Bad Request');
    const sent = await call('POST', v2Messages(officialId, '447700900503'), {
      template: { name, language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: '42' }] }] },
    });
    expect(sent.status).toBe(201);
    expect((await settled(officialId, sent.body.id)).status).toBe('SENT');
  });

  test('verification through an official connection is 422 (the network offers no lookup)', async () => {
    expectStandardError(await call('POST', `/v2/connections/${officialId}/verifications`, { phone: '447700900501' }), 422, 'Unprocessable Entity');
  });

  test('presence on the official network: “typing…” answers the contact’s latest message (marked read with typing_indicator)', async () => {
    expect((await call('POST', `/v2/connections/${officialId}/chats/447700900501/presence`, { presence: 'composing' })).status).toBe(202);
    await eventually(async () => sim.marks.find((m: any) => m.message_id === lastIncoming && m.typing_indicator?.type === 'text'), 'typing indicator on the last message');
  });
});
