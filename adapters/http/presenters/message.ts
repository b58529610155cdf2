import { t } from 'elysia';
import type { ChatMessage } from '../../../core/messaging/message.ts';
import { iso, Timestamp, Uuid } from '../schemas.ts';

/** A message as every surface shows it (v3 routes, sandbox, media, MCP history, the flows plugin). */
export const MessageView = t.Object({
  id: Uuid,
  connectionId: Uuid,
  direction: t.UnionEnum(['inbound', 'outbound']),
  remoteJid: t.String(),
  kind: t.String({ description: 'Outbound: the kind sent. Inbound: the 2.13 messageType' }),
  status: t.String({ description: 'Outbound: PENDING, SENT, DELIVERED, READ, FAILED. Inbound: RECEIVED' }),
  externalId: t.Nullable(t.String({ description: 'The network’s message id, once known' })),
  error: t.Nullable(t.Object({ code: t.Union([t.String(), t.Number()]), title: t.String() })),
  replyTo: t.Nullable(t.String()),
  content: t.Any({ description: 'Outbound: the content sent. Inbound: the closed 2.13 message data' }),
  messageTimestamp: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export function presentMessage(m: ChatMessage) {
  return {
    id: m.id,
    connectionId: m.connectionId,
    direction: m.direction,
    remoteJid: m.remoteJid,
    kind: m.kind,
    status: m.status,
    externalId: m.externalId,
    error: m.error,
    replyTo: m.replyTo,
    content: m.content,
    messageTimestamp: iso(m.messageTimestamp),
    createdAt: iso(m.createdAt),
    updatedAt: iso(m.updatedAt),
  };
}
