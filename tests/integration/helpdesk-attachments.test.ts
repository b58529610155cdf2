import { beforeAll, describe, expect, test } from 'bun:test';
import { attachmentDownloadLink } from '../../core/helpdesk/conversations/message-attachments.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { useTestService } from '../support/service.ts';
import { conversationFromContact, helpdeskEvents, helpdeskWorkspace, messagesUntil, messageWhen, type Member, type Owner } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * Files on helpdesk messages (issue 6 item 6; spec 2.12 "fully hydrated", 4.5 "attachment
 * download for webhook consumers", 5.6 "signed token"): uploads put on notes and replies, the
 * media of a contact's message, each with a signed, expiring `downloadUrl` that needs no API
 * key; a reply with a file goes out on the connection as a media message.
 */

let owner: Owner;
let agent: Member;
let outsider: Member;
let connectionId: string;
let conversation: any;

const PNG: Uint8Array<ArrayBuffer> = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 250, 251, 252]);
const PDF: Uint8Array<ArrayBuffer> = new TextEncoder().encode('%PDF-1.4\n% invoice 42\n%%EOF\n') as Uint8Array<ArrayBuffer>;
const DAY = 86_400_000;

const service = useTestService();

beforeAll(async () => {
  ({ owner, agent, connectionId } = await helpdeskWorkspace(service, { connection: 'files line', inbox: 'Files' }));
  outsider = await memberWithToken(service, owner, 'AGENT');
  conversation = await conversationFrom('5511966610001', { text: 'hello' });
}, HOOK_TIMEOUT);

const conversationFrom = (phone: string, body: Record<string, unknown>) => conversationFromContact(service, owner.token, connectionId, phone, body);

/** Raw bytes with their Content-Type and X-File-Name, as an API client sends them. */
async function upload(conversationId: string, bytes: Uint8Array, contentType: string, fileName?: string, apikey = agent.token) {
  const res = await fetch(`${service.url}/v3/helpdesk/conversations/${conversationId}/attachments`, {
    method: 'POST',
    headers: { apikey, 'content-type': contentType, ...(fileName && { 'x-file-name': encodeURIComponent(fileName) }) },
    body: bytes as Uint8Array<ArrayBuffer>,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Fetches without any API key. */
async function download(url: string) {
  const res = await fetch(url);
  const bytes = new Uint8Array(await res.arrayBuffer());
  let body: any;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {}
  return { status: res.status, headers: res.headers, bytes, body };
}

const post = (conversationId: string, body: unknown, apikey = agent.token) => service.call('POST', `/v3/helpdesk/conversations/${conversationId}/messages`, { apikey, body });
const messages = async (conversationId: string) => (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}/messages?limit=100`, { apikey: owner.token })).body as any[];

function linkDeps(now: Date) {
  const ctx = service.runtime.ctx;
  return { clock: { now: () => now }, signingKey: ctx.keys.signing, publicUrl: ctx.config.publicUrl };
}

describe('a private note with an attachment', () => {
  let note: any;

  test('upload, then name it in the note: the message shows the file with a signed downloadUrl', async () => {
    const uploaded = await upload(conversation.id, PDF, 'application/pdf', 'Invoice №42.pdf');
    expect(uploaded.status).toBe(201);
    expect(uploaded.body).toMatchObject({ fileName: 'Invoice №42.pdf', mimeType: 'application/pdf', size: PDF.length });
    expect(uploaded.body.id).toMatch(UUID);

    const res = await post(conversation.id, { content: 'the invoice', private: true, attachments: [{ id: uploaded.body.id }] });
    expect(res.status).toBe(201);
    note = res.body;
    expect(note.attachments).toHaveLength(1);
    const [file] = note.attachments;
    expect(file).toMatchObject({ id: uploaded.body.id, fileName: 'Invoice №42.pdf', mimeType: 'application/pdf', size: PDF.length });
    expect(file.downloadUrl.startsWith(`${service.runtime.ctx.config.publicUrl}/v3/helpdesk/messages/attachments/${file.id}/public/download?token=`)).toBe(true);
    // The same shape in the list and in the message.created event.
    expect((await messages(conversation.id)).find((m) => m.id === note.id).attachments.map((a: any) => a.id)).toEqual([file.id]);
    const created = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.message.created')).find((e) => e.message.id === note.id);
    expect(created.message.attachments).toHaveLength(1);
    expect(created.message.attachments[0]).toMatchObject({ id: file.id, fileName: 'Invoice №42.pdf', mimeType: 'application/pdf', size: PDF.length });
  });

  test('its downloadUrl, fetched with no API key, streams the bytes with the content type and a download disposition', async () => {
    const got = await download(note.attachments[0].downloadUrl);
    expect(got.status).toBe(200);
    expect(got.bytes).toEqual(PDF);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    const disposition = got.headers.get('content-disposition')!;
    expect(disposition).toStartWith('attachment;');
    expect(disposition).toContain(`filename*=UTF-8''${encodeURIComponent('Invoice №42.pdf')}`);
  });

  test('tampered, expired, misdirected or missing tokens are 401; an unknown attachment with a good token is 404', async () => {
    const id = note.attachments[0].id;
    const base = `${service.url}/v3/helpdesk/messages/attachments/${id}/public/download`;
    const token = new URL(note.attachments[0].downloadUrl).searchParams.get('token')!;
    const [body, mac] = token.split('.');
    const flipped = mac!.startsWith('A') ? `B${mac!.slice(1)}` : `A${mac!.slice(1)}`;
    expectStandardError(await download(`${base}?token=${encodeURIComponent(`${body}.${flipped}`)}`), 401, 'Unauthorized');
    // A payload rewritten to outlive its expiry keeps the old signature: refused.
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...payload, exp: payload.exp + 365 * 86_400 })).toString('base64url');
    expectStandardError(await download(`${base}?token=${encodeURIComponent(`${forged}.${mac}`)}`), 401, 'Unauthorized');
    expectStandardError(await download(base), 401, 'Unauthorized');
    expectStandardError(await download(`${base}?token=garbage`), 401, 'Unauthorized');

    // Links live 7 days: one made 7 days and a minute ago is refused, one made 6 days ago works.
    expectStandardError(await download(attachmentDownloadLink(linkDeps(new Date(Date.now() - 7 * DAY - 60_000)), id)), 401, 'Unauthorized');
    expect((await download(attachmentDownloadLink(linkDeps(new Date(Date.now() - 6 * DAY)), id))).status).toBe(200);

    // A good token for one attachment opens no other.
    const other = (await upload(conversation.id, PNG, 'image/png', 'other.png')).body;
    expectStandardError(await download(`${service.url}/v3/helpdesk/messages/attachments/${other.id}/public/download?token=${encodeURIComponent(token)}`), 401, 'Unauthorized');
    // A link signed with another key is refused.
    const foreign = attachmentDownloadLink({ clock: { now: () => new Date() }, signingKey: new Uint8Array(32).fill(9), publicUrl: service.url }, id);
    expectStandardError(await download(foreign), 401, 'Unauthorized');

    const unknown = crypto.randomUUID();
    expectStandardError(await download(attachmentDownloadLink(linkDeps(new Date()), unknown)), 404, 'Not Found');
  });

  test('multipart upload; a note may be a file alone; an upload serves one message; bad references are 400', async () => {
    const form = new FormData();
    form.append('file', new File([PNG], 'photo.png', { type: 'image/png' }));
    const res = await fetch(`${service.url}/v3/helpdesk/conversations/${conversation.id}/attachments`, { method: 'POST', headers: { apikey: agent.token }, body: form });
    expect(res.status).toBe(201);
    const uploaded = (await res.json()) as any;
    expect(uploaded).toMatchObject({ fileName: 'photo.png', mimeType: 'image/png', size: PNG.length });

    const alone = await post(conversation.id, { content: '', private: true, attachments: [{ id: uploaded.id }] });
    expect(alone.status).toBe(201);
    expect(alone.body.content).toBe('');
    expect((await download(alone.body.attachments[0].downloadUrl)).bytes).toEqual(PNG);

    expectStandardError(await post(conversation.id, { content: 'again', private: true, attachments: [{ id: uploaded.id }] }), 400, 'Bad Request');
    expectStandardError(await post(conversation.id, { content: 'x', private: true, attachments: [{ id: crypto.randomUUID() }] }), 400, 'Bad Request');
    expectStandardError(await post(conversation.id, { content: 'x', private: true, attachments: [{}] }), 400, 'Bad Request');
    expectStandardError(await post(conversation.id, { content: '', private: true }), 400, 'Bad Request');
    // An upload of another conversation cannot be put here.
    const other = await conversationFrom('5511966610002', { text: 'other' });
    const foreign = (await upload(other.id, PNG, 'image/png')).body;
    expectStandardError(await post(conversation.id, { content: 'x', private: true, attachments: [{ id: foreign.id }] }), 400, 'Bad Request');
    // Uploads need a body with a media type.
    expectStandardError(await upload(conversation.id, new Uint8Array(0), 'image/png'), 400, 'Bad Request');
    expectStandardError(await upload(conversation.id, PNG, 'application/json'), 400, 'Bad Request');
  });

  test('media uploaded through the connection media API can be named by mediaId', async () => {
    const media = await fetch(`${service.url}/v3/connections/${connectionId}/media`, {
      method: 'POST',
      headers: { apikey: owner.token, 'content-type': 'image/png', 'x-file-name': 'label.png' },
      body: PNG,
    }).then((r) => r.json() as Promise<any>);
    const res = await post(conversation.id, { content: 'from media', private: true, attachments: [{ mediaId: media.mediaId }] }, owner.token);
    expect(res.status).toBe(201);
    expect(res.body.attachments[0]).toMatchObject({ fileName: 'label.png', mimeType: 'image/png', size: PNG.length });
    expect((await download(res.body.attachments[0].downloadUrl)).bytes).toEqual(PNG);
    expectStandardError(await post(conversation.id, { content: 'x', private: true, attachments: [{ mediaId: crypto.randomUUID() }] }, owner.token), 400, 'Bad Request');
  });

  test('an Agent outside the inbox cannot upload (404)', async () => {
    expectStandardError(await upload(conversation.id, PNG, 'image/png', 'x.png', outsider.token), 404, 'Not Found');
  });
});

describe('network media', () => {
  test('an incoming sandbox image gets an attachment whose link downloads the image', async () => {
    const c = await conversationFrom('5511966610003', { type: 'imageMessage', text: 'broken box', media: { base64: Buffer.from(PNG).toString('base64'), mimetype: 'image/png' } });
    const [incoming] = await messagesUntil(service, owner.token, c.id, 1);
    expect(incoming).toMatchObject({ direction: 'incoming', content: 'broken box' });
    expect(incoming.attachments).toHaveLength(1);
    const [file] = incoming.attachments;
    expect(file).toMatchObject({ fileName: 'image.png', mimeType: 'image/png' });
    const got = await download(file.downloadUrl);
    expect(got.status).toBe(200);
    expect(got.bytes).toEqual(PNG);
    expect(got.headers.get('content-type')).toBe('image/png');
    // Once the bytes are kept, the size is known.
    expect((await messages(c.id))[0].attachments[0].size).toBe(PNG.length);
  });

  test('a reply with an attachment goes out as a media message on the connection, the text as caption', async () => {
    const uploaded = (await upload(conversation.id, PNG, 'image/png', 'shipping-label.png')).body;
    const res = await post(conversation.id, { content: 'Your shipping label', attachments: [{ id: uploaded.id }] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'PENDING', private: false, content: 'Your shipping label' });
    expect(res.body.attachments[0]).toMatchObject({ id: uploaded.id, fileName: 'shipping-label.png', mimeType: 'image/png' });

    const db = service.runtime.ctx.db;
    const row = await helpdeskDb(db).selectFrom('helpdesk_messages').select('chat_message_id').where('id', '=', res.body.id).executeTakeFirstOrThrow();
    const chat = await db.selectFrom('messages').select(['kind', 'content', 'remote_jid', 'direction']).where('id', '=', row.chat_message_id!).executeTakeFirstOrThrow();
    expect(chat).toMatchObject({ kind: 'image', remote_jid: '5511966610001@s.whatsapp.net', direction: 'outbound' });
    const content = (typeof chat.content === 'string' ? JSON.parse(chat.content) : chat.content) as any;
    expect(content.image).toMatchObject({ caption: 'Your shipping label', mimetype: 'image/png' });
    // The bytes moved into the connection's media (one copy), which the send names.
    const media = await db.selectFrom('media').select(['bytes', 'connection_id']).where('id', '=', content.image.mediaId).executeTakeFirstOrThrow();
    expect(new Uint8Array(media.bytes!)).toEqual(PNG);
    expect(media.connection_id).toBe(connectionId);
    expect((await download(res.body.attachments[0].downloadUrl)).bytes).toEqual(PNG);

    const sent = await messageWhen(service, owner.token, conversation.id, res.body.id, (m) => m.status !== 'PENDING', { what: 'the reply to leave PENDING' });
    expect(['SENT', 'DELIVERED', 'READ']).toContain(sent.status);
  });

  test('a reply takes one file; an audio file carries no text', async () => {
    const a = (await upload(conversation.id, PNG, 'image/png')).body;
    const b = (await upload(conversation.id, PNG, 'image/png')).body;
    expectStandardError(await post(conversation.id, { content: 'two', attachments: [{ id: a.id }, { id: b.id }] }), 400, 'Bad Request');
    const voice = (await upload(conversation.id, new Uint8Array([1, 2, 3]), 'audio/ogg', 'voice.ogg')).body;
    expectStandardError(await post(conversation.id, { content: 'listen', attachments: [{ id: voice.id }] }), 400, 'Bad Request');
    const audio = await post(conversation.id, { content: '', attachments: [{ id: voice.id }] });
    expect(audio.status).toBe(201);
  });
});
