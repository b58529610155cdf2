import { describe, expect, test } from 'bun:test';
import { proto } from 'baileys';
import { DriverError } from '../../core/connections/driver.ts';
import { KNOWN_MESSAGE_TYPES, toMessageData } from '../../core/messaging/incoming.ts';
import { parseOutgoingContent, type OutgoingMessage } from '../../core/messaging/outgoing.ts';
import { albumOf, hasMedia, isReportable, mapIncoming, sourceOf, toNumber } from '../../adapters/drivers/baileys/message-mapping.ts';
import { buttonsAsText, listAsText, quotedMessage, toBaileysContent, toJid, toVcard } from '../../adapters/drivers/baileys/outgoing-mapping.ts';
import { fixture, loadFixtures } from '../fixtures/baileys/support.ts';

const fixtures = loadFixtures();
const reported = fixtures.filter((f) => f.expected !== null);
const skipped = fixtures.filter((f) => f.expected === null);

describe('recorded Baileys messages → the closed shape of spec 2.13', () => {
  test.each(reported.map((f) => [f.name, f] as const))('%s', (_name, f) => {
    const received = mapIncoming(f.message, f.albumIndex === undefined ? {} : { albumIndex: f.albumIndex });
    expect(received).toBeDefined();
    const data = toMessageData(received!, f.downloadMediaUrl ? { downloadMediaUrl: f.downloadMediaUrl } : {});
    expect(data as unknown).toEqual(f.expected!);
    // The webhook body is JSON: nothing binary, no Long, nothing lost on the way.
    expect(JSON.parse(JSON.stringify(data))).toEqual(data as any);
  });

  test.each(skipped.map((f) => [f.name, f] as const))('%s is not reported as a message', (_name, f) => {
    expect(isReportable(f.message)).toBe(false);
    expect(mapIncoming(f.message)).toBeUndefined();
  });

  test('every type of the fixed 2.13 list has a recorded fixture', () => {
    const covered = new Set(reported.map((f) => (f.expected as any).messageType));
    for (const type of KNOWN_MESSAGE_TYPES) expect(covered.has(type) ? type : `missing ${type}`).toBe(type);
  });

  test('the fixtures are real WebMessageInfo: every field survives the protobuf definitions', () => {
    for (const f of fixtures) {
      const { key: _key, ...info } = f.message as any;
      const decoded = proto.WebMessageInfo.toObject(proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(proto.WebMessageInfo.fromObject({ ...info, key: { remoteJid: f.message.key.remoteJid, fromMe: f.message.key.fromMe, id: f.message.key.id, participant: f.message.key.participant } })).finish()), {
        longs: Number,
        bytes: String,
        defaults: false,
      });
      const missing = paths(info).filter((p) => !paths(decoded).includes(p));
      expect(`${f.name}: ${missing.join(', ')}`).toBe(`${f.name}: `);
    }
  });

  test('media are referenced by the message id, with mimetype and file name', () => {
    const doc = mapIncoming(fixture('document-with-caption').message)!;
    expect(doc.media).toEqual({ ref: doc.externalId, mimetype: 'application/pdf', fileName: 'contrato-2025.pdf' });
    expect(hasMedia(fixture('document-with-caption').message)).toBe(true);
    expect(hasMedia(fixture('conversation').message)).toBe(false);
    expect(hasMedia(fixture('location').message)).toBe(false);
    // Without a download link the node says so by its absence.
    const data = toMessageData(mapIncoming(fixture('image').message)!);
    expect((data.message.imageMessage as any).downloadMediaUrl).toBeUndefined();
    expect((data.message.imageMessage as any).mediaKey).toBeUndefined();
    expect((data.message.imageMessage as any).url).toBeUndefined();
  });

  test('album association: position from the network, else the one the driver supplies, else 0', () => {
    expect(albumOf(fixture('album-item-indexed').message)).toEqual({ id: fixture('album').message.key.id!, index: 2 });
    expect(albumOf(fixture('album-item-child-wrapper').message)).toEqual({ id: fixture('album').message.key.id!, index: undefined });
    expect(mapIncoming(fixture('album-item-child-wrapper').message)!.album!.index).toBe(0);
    expect(albumOf(fixture('image').message)).toBeUndefined();
    expect(mapIncoming(fixture('image').message)!.album).toBeUndefined();
  });

  test('unknown types keep their name and an empty node; contextInfo and album stay absent, not null', () => {
    const data = toMessageData(mapIncoming(fixture('unknown-event').message)!);
    expect(data.messageType).toBe('eventMessage');
    expect(data.message).toEqual({});
    expect('contextInfo' in data).toBe(false);
    expect('album' in data).toBe(false);
    expect('aiMessageSource' in data).toBe(false);
  });

  test('native AI markers: a first-party business bot, a support AI, Meta AI writing, our message with bot metadata', () => {
    const base = fixture('conversation').message;
    const ai = (patch: Record<string, unknown>, key: Record<string, unknown> = {}) =>
      mapIncoming({ ...base, ...patch, key: { ...base.key, ...key } } as any)!.isAiMessage;
    expect(ai({})).toBe(false);
    expect(ai({ is1PBizBotMessage: true })).toBe(true);
    expect(ai({ isSupportAiMessage: true })).toBe(true);
    expect(ai({}, { remoteJid: '13135550002@bot' })).toBe(true);
    expect(ai({}, { remoteJid: '13135550002@bot', fromMe: true })).toBe(false); // we wrote to Meta AI
    const withBot = { message: { conversation: 'Oi', messageContextInfo: { botMetadata: { personaId: 'p' } } } };
    expect(ai(withBot, { fromMe: true })).toBe(true);
    expect(ai(withBot)).toBe(false); // a contact's message about a bot is still the contact's
  });

  test('source from the message id: android, ios, web (desktop counts as web), unknown', () => {
    expect(sourceOf('A1B2C3D4E5F60718293A4B5C6D7E8F91')).toBe('android');
    expect(sourceOf('3A5F3E2D1C0B9A000001')).toBe('ios');
    expect(sourceOf('3EB04C7D2E9A1B3F000001')).toBe('web');
    expect(sourceOf('3F1234567890ABCD')).toBe('web');
    expect(sourceOf('XYZ')).toBe('unknown');
  });

  test('timestamps: numbers, Longs, numeric strings, bigints → integer seconds', () => {
    expect(toNumber(1735732800)).toBe(1735732800);
    expect(toNumber({ low: 1735732800, high: 0, unsigned: false })).toBe(1735732800);
    expect(toNumber({ low: 1735732799123 | 0, high: Math.floor(1735732799123 / 2 ** 32), unsigned: false })).toBe(1735732799123);
    expect(toNumber('1735732800')).toBe(1735732800);
    expect(toNumber(1735732800n)).toBe(1735732800);
    expect(toNumber(proto.WebMessageInfo.decode(proto.WebMessageInfo.encode({ key: {}, messageTimestamp: 1735732800 }).finish()).messageTimestamp)).toBe(1735732800);
  });

  test('a message decoded from the wire (protobuf instances, Long fields) maps like its JSON form', () => {
    const f = fixture('image');
    const wire = proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(proto.WebMessageInfo.fromObject(f.message)).finish());
    const fromWire = toMessageData(mapIncoming(wire as any)!, { downloadMediaUrl: f.downloadMediaUrl! });
    expect(fromWire as unknown).toEqual(f.expected!);
  });
});

describe('outgoing messages → Baileys content', () => {
  const to = '5511987654321';
  const jid = '5511987654321@s.whatsapp.net';
  const send = (body: Record<string, unknown>, extra: Partial<OutgoingMessage> = {}): OutgoingMessage => ({ to, content: parseOutgoingContent(body), ...extra });
  const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);

  test('recipients: digits become a phone JID, JIDs pass', () => {
    expect(toJid(to)).toBe(jid);
    expect(toJid('120363025246125486@g.us')).toBe('120363025246125486@g.us');
    expect(toJid('218741234567890@lid')).toBe('218741234567890@lid');
  });

  test('text, with and without a link preview', () => {
    expect(toBaileysContent(send({ text: 'Olá' }))).toEqual({ text: 'Olá' });
    expect(toBaileysContent({ to, content: { kind: 'text', text: 'https://x.example', previewUrl: false } })).toEqual({ text: 'https://x.example', linkPreview: null });
  });

  test('image and video by bytes or URL, with captions', () => {
    const image = toBaileysContent(send({ image: { mediaId: 'm1', caption: 'Foto' } }), { media: { bytes, mimetype: 'image/jpeg' } }) as any;
    expect(Buffer.isBuffer(image.image)).toBe(true);
    expect([...image.image]).toEqual([...bytes]);
    expect(image).toMatchObject({ mimetype: 'image/jpeg', caption: 'Foto' });
    expect(toBaileysContent(send({ video: { url: 'https://cdn.example/v.mp4' } }), { media: { url: 'https://cdn.example/v.mp4', mimetype: 'video/mp4' } })).toEqual({
      video: { url: 'https://cdn.example/v.mp4' },
      mimetype: 'video/mp4',
    });
  });

  test('audio: voice notes are ptt Opus', () => {
    expect(toBaileysContent(send({ audio: { mediaId: 'a', voiceNote: true } }), { media: { bytes, mimetype: 'audio/ogg' } })).toMatchObject({ ptt: true, mimetype: 'audio/ogg; codecs=opus' });
    expect(toBaileysContent(send({ audio: { url: 'https://cdn.example/a.mp3' } }), { media: { url: 'https://cdn.example/a.mp3', mimetype: 'audio/mpeg' } })).toEqual({
      audio: { url: 'https://cdn.example/a.mp3' },
      mimetype: 'audio/mpeg',
      ptt: false,
    });
  });

  test('document with file name and caption; sticker', () => {
    expect(toBaileysContent(send({ document: { url: 'https://cdn.example/c.pdf', fileName: 'contrato.pdf', caption: 'Segue' } }), { media: { url: 'https://cdn.example/c.pdf', mimetype: 'application/pdf' } })).toEqual({
      document: { url: 'https://cdn.example/c.pdf' },
      mimetype: 'application/pdf',
      fileName: 'contrato.pdf',
      caption: 'Segue',
    });
    expect(toBaileysContent(send({ document: { mediaId: 'd' } }), { media: { bytes, mimetype: 'text/csv', fileName: 'upload.csv' } })).toMatchObject({ fileName: 'upload.csv', mimetype: 'text/csv' });
    expect(toBaileysContent(send({ sticker: { url: 'https://cdn.example/s.webp' } }), { media: { url: 'https://cdn.example/s.webp', mimetype: 'image/webp' } })).toEqual({
      sticker: { url: 'https://cdn.example/s.webp' },
      mimetype: 'image/webp',
    });
  });

  test('media without bytes or URL is refused, not retried', () => {
    try {
      toBaileysContent(send({ image: { mediaId: 'm1' } }));
      throw new Error('expected a DriverError');
    } catch (error) {
      expect(error).toBeInstanceOf(DriverError);
      expect((error as DriverError).retryable).toBe(false);
    }
  });

  test('location', () => {
    expect(toBaileysContent(send({ location: { latitude: -23.56, longitude: -46.65, name: 'MASP', address: 'Av. Paulista, 1578' } }))).toEqual({
      location: { degreesLatitude: -23.56, degreesLongitude: -46.65, name: 'MASP', address: 'Av. Paulista, 1578' },
    });
  });

  test('contacts as vCards with a waid', () => {
    const content = toBaileysContent(send({ contacts: [{ name: 'João Lima', phones: ['+55 21 99887-7665'], emails: ['joao@example.com'], organization: 'Loja; Centro' }] })) as any;
    expect(content.contacts.displayName).toBe('João Lima');
    expect(content.contacts.contacts).toHaveLength(1);
    const vcard: string = content.contacts.contacts[0].vcard;
    expect(vcard.split('\n')).toEqual([
      'BEGIN:VCARD',
      'VERSION:3.0',
      'FN:João Lima',
      'N:;João Lima;;;',
      'ORG:Loja\\; Centro',
      'TEL;type=CELL;type=VOICE;waid=5521998877665:+55 21 99887-7665',
      'EMAIL;type=INTERNET:joao@example.com',
      'END:VCARD',
    ]);
    const two = toBaileysContent(send({ contacts: [{ name: 'A', phones: ['5511900000001'] }, { name: 'B', phones: ['5511900000002'] }] })) as any;
    expect(two.contacts.displayName).toBe('2 contacts');
    expect(toVcard({ name: 'B', phones: ['5511900000002'] })).toContain('waid=5511900000002:+5511900000002');
  });

  test('lists and buttons degrade to text with numbered options', () => {
    const list = {
      header: 'Planos',
      body: 'Escolha um plano',
      buttonText: 'Ver planos',
      footer: 'Responda com o número',
      sections: [
        { title: 'Mensal', rows: [{ id: 'm', title: 'Mensal', description: 'R$ 49' }] },
        { title: 'Anual', rows: [{ id: 'a', title: 'Anual', description: 'R$ 490' }, { id: 'a2', title: 'Anual Pro' }] },
      ],
    };
    expect(toBaileysContent(send({ list }))).toEqual({ text: listAsText(list) });
    expect(listAsText(list)).toBe('*Planos*\n\nEscolha um plano\n\nVer planos:\n*Mensal*\n1. Mensal — R$ 49\n\n*Anual*\n2. Anual — R$ 490\n3. Anual Pro\n\n_Responda com o número_');
    const buttons = { body: 'Confirma o pedido?', footer: 'Loja', buttons: [{ id: 'y', title: 'Sim' }, { id: 'n', title: 'Não' }] };
    expect(toBaileysContent(send({ buttons }))).toEqual({ text: buttonsAsText(buttons) });
    expect(buttonsAsText(buttons)).toBe('Confirma o pedido?\n\n1. Sim\n2. Não\n\n_Loja_');
  });

  test('reactions address the stored key, else a contact message in the chat', () => {
    const key = { remoteJid: '218741234567890@lid', id: 'ABC', fromMe: true };
    expect(toBaileysContent(send({ reaction: { messageId: 'ABC', emoji: '❤️' } }), { reactionKey: key })).toEqual({ react: { text: '❤️', key } });
    expect(toBaileysContent(send({ reaction: { messageId: 'ABC', emoji: '' } }))).toEqual({ react: { text: '', key: { remoteJid: jid, id: 'ABC', fromMe: false } } });
  });

  test('templates are refused on an unofficial connection, not retried', () => {
    try {
      toBaileysContent(send({ template: { name: 'order_update', language: 'pt_BR' } }));
      throw new Error('expected a DriverError');
    } catch (error) {
      expect(error).toBeInstanceOf(DriverError);
      expect((error as DriverError).retryable).toBe(false);
      expect((error as DriverError).message).toContain('templates are not supported');
    }
  });

  test('quoted replies use the stored original, else a stand-in with the id', () => {
    const stored = fixture('conversation').message;
    expect(quotedMessage(to, stored.key.id!, stored)).toBe(stored);
    expect(quotedMessage(to, 'XYZ')).toEqual({ key: { remoteJid: jid, id: 'XYZ', fromMe: false }, message: { conversation: '' } });
  });
});

function paths(value: unknown, prefix = ''): string[] {
  if (value === null || value === undefined || typeof value !== 'object' || Buffer.isBuffer(value) || value instanceof Uint8Array) return [prefix];
  const v = value as Record<string, unknown>;
  if (typeof v.low === 'number' && typeof v.high === 'number') return [prefix];
  if (Array.isArray(value)) return value.flatMap((item, i) => paths(item, `${prefix}[${i}]`));
  const entries = Object.entries(v);
  if (entries.length === 0) return [prefix];
  return entries.flatMap(([k, item]) => paths(item, prefix ? `${prefix}.${k}` : k));
}
