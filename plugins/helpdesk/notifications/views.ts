import { t } from 'elysia';
import { iso, Timestamp, Uuid } from '../../kernel/http.ts';
import { PRIORITIES } from '../../../core/helpdesk/conversations/conversation.ts';
import type { CannedResponse } from '../../../core/helpdesk/library/canned-responses.ts';
import { MACRO_STATUSES } from '../../../core/helpdesk/library/macro-actions.ts';
import { MACRO_VISIBILITIES, type Macro } from '../../../core/helpdesk/library/macros.ts';
import { NOTIFICATION_TYPES, SECONDARY_ACTOR_TYPES, type Notification } from '../../../core/helpdesk/notifications/notifications.ts';

/** The REST shapes of notifications, canned responses and macros (payloads ours). */
export const NotificationView = t.Object({
  id: Uuid,
  notificationType: t.UnionEnum([...NOTIFICATION_TYPES], {
    description: 'mention: you were @mentioned in a private note; assigned: a conversation was assigned to you; new_message_in_assigned: the contact wrote on a conversation assigned to you',
  }),
  primaryActorType: t.Literal('conversation'),
  primaryActorId: Uuid,
  secondaryActorType: t.Nullable(t.UnionEnum([...SECONDARY_ACTOR_TYPES], { description: 'user: who mentioned or assigned you; contact: who wrote' })),
  secondaryActorId: t.Nullable(Uuid),
  conversationId: Uuid,
  messageId: t.Nullable(Uuid),
  readAt: t.Nullable(Timestamp),
  createdAt: Timestamp,
});

export function presentNotification(n: Notification) {
  return {
    id: n.id,
    notificationType: n.type,
    primaryActorType: n.primaryActorType,
    primaryActorId: n.primaryActorId,
    secondaryActorType: n.secondaryActorType,
    secondaryActorId: n.secondaryActorId,
    conversationId: n.conversationId,
    messageId: n.messageId,
    readAt: iso(n.readAt),
    createdAt: iso(n.createdAt),
  };
}

export const CannedResponseView = t.Object({
  id: Uuid,
  shortCode: t.String({ description: '1 to 50 letters, digits, _ or -; unique in the workspace case-insensitively' }),
  content: t.String(),
  createdBy: t.Nullable(Uuid),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export function presentCannedResponse(c: CannedResponse) {
  return { id: c.id, shortCode: c.shortCode, content: c.content, createdBy: c.createdBy, createdAt: iso(c.createdAt), updatedAt: iso(c.updatedAt) };
}

const Nullable = (schema: ReturnType<typeof t.String>) => t.Union([schema, t.Null()]);

/** The action shapes (core/helpdesk/library/macro-actions.ts), as answered; requests are checked by the use case. */
export const MacroActionView = t.Union([
  t.Object({ type: t.Literal('assign_agent'), userId: Nullable(Uuid) }),
  t.Object({ type: t.Literal('assign_team'), teamId: Nullable(Uuid) }),
  t.Object({ type: t.Literal('add_labels'), labels: t.Array(t.String()) }),
  t.Object({ type: t.Literal('remove_labels'), labels: t.Array(t.String()) }),
  t.Object({ type: t.Literal('set_priority'), priority: t.Nullable(t.UnionEnum([...PRIORITIES])) }),
  t.Object({
    type: t.Literal('change_status'),
    status: t.UnionEnum([...MACRO_STATUSES]),
    snoozedUntil: t.Optional(Timestamp),
    snoozeMinutes: t.Optional(t.Integer({ description: 'Snoozes for this long from the moment the macro runs' })),
  }),
  t.Object({ type: t.Literal('send_message'), content: t.String() }),
  t.Object({ type: t.Literal('add_private_note'), content: t.String() }),
]);

export const MacroView = t.Object({
  id: Uuid,
  name: t.String(),
  visibility: t.UnionEnum([...MACRO_VISIBILITIES], { description: 'personal: only its creator sees and runs it; workspace: every member' }),
  createdBy: t.Nullable(Uuid),
  actions: t.Array(MacroActionView),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export function presentMacro(m: Macro) {
  return { id: m.id, name: m.name, visibility: m.visibility, createdBy: m.createdBy, actions: m.actions, createdAt: iso(m.createdAt), updatedAt: iso(m.updatedAt) };
}
