import type { Clock } from '../../shared/ports.ts';
import { isOpen, nextOpening, type ZoneRules } from '../sla/business-hours.ts';
import { calendarOf, DEFAULT_OUT_OF_OFFICE_MESSAGE, type InboxHours } from '../sla/business-hours-settings.ts';
import type { Conversation, HelpdeskMessage } from '../conversations/conversation.ts';

/**
 * The out-of-office reply of an inbox (issue 7 item 2): when a contact's message opens or
 * continues a conversation while the inbox is closed (outside its business hours or on a
 * holiday, in its timezone), the helpdesk itself answers once, through the normal reply path.
 *
 * Once per conversation per closed period: a closed period is named by the instant the inbox
 * opens again, and the claim (conversation, that instant) is taken in the transaction of the
 * reply, so a second message in the same night, or the same event handled twice, sends nothing;
 * the next night's first message gets the reply again. Nothing is sent when the inbox has no
 * business hours (open 24/7), when the reply is off, or when the message is handled only after
 * the inbox opened again (a late worker should not tell a contact the office is closed when it
 * is open). The reply is not a person's or a bot's, so it does not meet an SLA response target.
 */

export interface OutOfOfficeClaim {
  conversationId: string;
  workspaceId: string;
  /** When the inbox opens again: the closed period's name. */
  reopensAt: Date;
  sentAt: Date;
}

export interface OutOfOfficeStores {
  hours(inboxId: string): Promise<InboxHours | undefined>;
  zoneOf(workspaceId: string, inboxId: string): Promise<string | undefined>;
  conversation(workspaceId: string, id: string): Promise<Conversation | undefined>;
  /** False when this conversation already had its reply for this closed period. */
  claim(claim: OutOfOfficeClaim): Promise<boolean>;
  setMessage(conversationId: string, reopensAt: Date, messageId: string): Promise<void>;
  /** Sends the text to the contact as the helpdesk (the normal reply path); throws a DomainError when refused. */
  reply(conversation: Conversation, text: string): Promise<HelpdeskMessage>;
}

export type OutOfOfficeOutcome = 'not-incoming' | 'off' | 'open' | 'reopened' | 'already-sent' | 'sent';

export async function replyOutOfOffice(
  stores: OutOfOfficeStores,
  deps: { clock: Clock; zones: ZoneRules },
  event: { workspaceId: string; conversationId: string; inboxId: string; message: { direction: string; createdAt: Date } },
): Promise<OutOfOfficeOutcome> {
  if (event.message.direction !== 'incoming') return 'not-incoming';
  const hours = await stores.hours(event.inboxId);
  const zone = await stores.zoneOf(event.workspaceId, event.inboxId);
  const calendar = zone === undefined ? null : calendarOf(hours, zone);
  if (!hours?.outOfOffice.enabled || calendar === null) return 'off';
  const at = event.message.createdAt.getTime();
  if (isOpen(calendar, deps.zones, at)) return 'open';
  const reopens = nextOpening(calendar, deps.zones, at);
  const now = deps.clock.now();
  if (reopens === null) return 'off';
  if (reopens <= now.getTime()) return 'reopened';
  const conversation = await stores.conversation(event.workspaceId, event.conversationId);
  if (!conversation || conversation.inboxId !== event.inboxId) return 'off';
  const reopensAt = new Date(reopens);
  if (!(await stores.claim({ conversationId: conversation.id, workspaceId: conversation.workspaceId, reopensAt, sentAt: now }))) return 'already-sent';
  const sent = await stores.reply(conversation, hours.outOfOffice.message ?? DEFAULT_OUT_OF_OFFICE_MESSAGE);
  await stores.setMessage(conversation.id, reopensAt, sent.id);
  return 'sent';
}
