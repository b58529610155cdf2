import { t } from 'elysia';
import type { Connection } from '../../core/connections/connection.ts';
import type { NumberCheck } from '../../core/connections/number-lookup.ts';
import type { Chat, ChatMessage } from '../../core/messaging/message.ts';
import type { Template } from '../../core/templates/templates.ts';
import { iso, Timestamp } from '../kernel/http.ts';

/**
 * The frozen v2 shapes (spec 9: "bug fixes only, no new fields"). Each is plain, and the
 * contract test (tests/integration/v2-contract.test.ts) fails on any field added or removed:
 * a v3 field never leaks in here.
 */

export const V2Connection = t.Object({
  id: t.String(),
  name: t.String(),
  status: t.String({ description: 'DISCONNECTED, CONNECTING, QR_PENDING, CONNECTED or LOGGED_OUT' }),
  phoneNumber: t.Nullable(t.String({ description: 'The connection’s own number, once paired' })),
});

export const V2Chat = t.Object({
  remoteJid: t.String(),
  name: t.Nullable(t.String()),
  lastMessageAt: Timestamp,
});

export const V2Message = t.Object({
  id: t.String(),
  remoteJid: t.String(),
  fromMe: t.Boolean(),
  type: t.String({ description: 'Sent: the kind sent (text, image…). Received: the messageType' }),
  status: t.String({ description: 'Sent: PENDING, SENT, DELIVERED, READ or FAILED. Received: RECEIVED' }),
  content: t.Any({ description: 'Sent: what was sent. Received: the message data (key, messageType, message, …)' }),
  timestamp: Timestamp,
});

export const V2Template = t.Object({
  id: t.String(),
  name: t.String(),
  language: t.String(),
  category: t.String(),
  status: t.String({ description: 'PENDING, APPROVED, REJECTED, PAUSED, DISABLED or IN_APPEAL' }),
  components: t.Array(t.Any()),
});

export const V2Verification = t.Object({
  phone: t.String({ description: 'The number checked, as digits' }),
  exists: t.Boolean({ description: 'The number is on the network' }),
  jid: t.Nullable(t.String({ description: 'Its chat id, when it exists' })),
  connectionId: t.String({ description: 'The connection that asked the network' }),
});

export const presentConnection = (c: Connection) => ({ id: c.id, name: c.name, status: c.status, phoneNumber: c.phoneNumber });

export const presentChat = (c: Chat) => ({ remoteJid: c.remoteJid, name: c.name, lastMessageAt: iso(c.lastMessageAt) });

export const presentMessage = (m: ChatMessage) => ({
  id: m.id,
  remoteJid: m.remoteJid,
  fromMe: m.direction === 'outbound',
  type: m.kind,
  status: m.status,
  content: m.content,
  timestamp: iso(m.messageTimestamp),
});

export const presentTemplate = (t: Template) => ({ id: t.id, name: t.name, language: t.language, category: t.category, status: t.status, components: t.components });

export const presentVerification = (v: NumberCheck) => ({ phone: v.phone, exists: v.exists, jid: v.jid, connectionId: v.connectionId });
