import { badRequest, DomainError, excerpt } from '../../shared/errors.ts';
import { accepts, nextState, type TransitionTable } from '../../shared/transition-table.ts';

/**
 * Conversation status (spec 3.1): "States: `OPEN`, `PENDING`, `SNOOZED`, `RESOLVED`.
 * Transitions: not shown". The transitions below are ours, designed as users of shared
 * inboxes expect (issue 6: "resolve, reopen, snooze until a time, pending; snooze expiry is
 * automatic and `silent`"). A message after RESOLVED opens a new conversation (issue 20, item
 * 17): a resolved conversation is a closed case, with its own history, reports and CSAT; the
 * contact's next message starts a new case with its own `displayId`, and only an agent reopens
 * the old one. So `incomingMessage` never applies to RESOLVED (conversations.ts
 * `joinConversation` looks for the latest unresolved conversation, else opens a new OPEN one).
 *
 * | from \ event | resolve  | reopen | snooze(until)      | pending | incomingMessage | snoozeExpired               |
 * |--------------|----------|--------|--------------------|---------|-----------------|-----------------------------|
 * | OPEN         | RESOLVED | 422    | SNOOZED            | PENDING | OPEN (no change)| 422                         |
 * | PENDING      | RESOLVED | OPEN   | SNOOZED            | 422     | OPEN            | 422                         |
 * | SNOOZED      | RESOLVED | OPEN   | SNOOZED (new time) | 422     | OPEN            | OPEN if snoozedUntil <= now,|
 * |              |          |        |                    |         |                 | else 422; silent            |
 * | RESOLVED     | 422      | OPEN   | 422                | 422     | 422 (new conv.) | 422                         |
 *
 * Rules around the table:
 * - `snooze` needs `until` strictly after `now`, else 400 (checked before the table).
 * - `snoozedUntil` is set exactly while the status is SNOOZED; every move out of SNOOZED clears it.
 * - `snoozeExpired` is the automatic change (spec 3.1: "an automatic change (for example a snooze
 *   expiring) carries `silent: true` and leaves no activity message"). A stale expiry (the
 *   conversation was reopened or re-snoozed later) is refused with 422: the worker drops it.
 * - `changed` is true when the status changes (that is when `helpdesk.conversation.status_changed`
 *   is emitted). Re-snoozing a snoozed conversation keeps the status (`changed: false`) but moves
 *   `snoozedUntil`; callers compare `snoozedUntil` for that.
 * - `incomingMessage` on an OPEN conversation is accepted and changes nothing.
 */
export const CONVERSATION_STATUSES = ['OPEN', 'PENDING', 'SNOOZED', 'RESOLVED'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

export const CONVERSATION_EVENT_TYPES = ['resolve', 'reopen', 'snooze', 'pending', 'incomingMessage', 'snoozeExpired'] as const;
export type ConversationEventType = (typeof CONVERSATION_EVENT_TYPES)[number];

export type ConversationEvent =
  /** An agent resolves the conversation. */
  | { type: 'resolve' }
  /** An agent reopens it. */
  | { type: 'reopen' }
  /** An agent snoozes it until a future time (or moves the time of a snoozed one). */
  | { type: 'snooze'; until: Date }
  /** An agent marks it as waiting (pending). */
  | { type: 'pending' }
  /** A new message from the customer arrived. */
  | { type: 'incomingMessage' }
  /** The automatic check found the snooze due. */
  | { type: 'snoozeExpired' };

export interface ConversationStatusState {
  status: ConversationStatus;
  /** Set exactly while `status` is SNOOZED. */
  snoozedUntil: Date | null;
}

export interface ConversationStatusChange {
  status: ConversationStatus;
  snoozedUntil: Date | null;
  /** The status changed (emit `helpdesk.conversation.status_changed`). */
  changed: boolean;
  /** An automatic change: `silent: true` on the event, no activity message. */
  silent: boolean;
}

/** The transition table: for each status, the events it accepts and where they lead. */
export const CONVERSATION_TRANSITIONS: TransitionTable<ConversationStatus, ConversationEventType> = {
  OPEN: { resolve: 'RESOLVED', snooze: 'SNOOZED', pending: 'PENDING', incomingMessage: 'OPEN' },
  PENDING: { resolve: 'RESOLVED', reopen: 'OPEN', snooze: 'SNOOZED', incomingMessage: 'OPEN' },
  SNOOZED: { resolve: 'RESOLVED', reopen: 'OPEN', snooze: 'SNOOZED', incomingMessage: 'OPEN', snoozeExpired: 'OPEN' },
  // No `incomingMessage`: the contact's next message opens a new conversation (see above).
  RESOLVED: { reopen: 'OPEN' },
};

/** Events that are automatic changes (spec 3.1 "carries `silent: true`"). */
export const SILENT_EVENTS: readonly ConversationEventType[] = ['snoozeExpired'];

export function canTransition(from: ConversationStatus, event: ConversationEventType): boolean {
  return accepts(CONVERSATION_TRANSITIONS, from, event);
}

/**
 * The conversation after `event` at `now`, or the refusal: a 400 `DomainError` for a snooze time
 * not strictly after `now`, a 422 `DomainError` naming the status and event the table refuses.
 * A refusal is returned, not thrown; `applyConversationEvent` throws it.
 */
export function transition(conversation: ConversationStatusState, event: ConversationEvent, now: Date): ConversationStatusChange | DomainError {
  if (event.type === 'snooze') {
    const until = event.until;
    if (!(until instanceof Date) || Number.isNaN(until.getTime())) return badRequest(['body.snoozedUntil must be a valid date-time']);
    if (until.getTime() <= now.getTime()) return badRequest(['body.snoozedUntil must be in the future']);
  }
  const from = conversation.status;
  const to = nextState(CONVERSATION_TRANSITIONS, from, event.type);
  if (to === undefined) return refusal(from, event.type);
  if (event.type === 'snoozeExpired') {
    const due = conversation.snoozedUntil;
    if (due === null || due.getTime() > now.getTime()) return refusal(from, event.type, due === null ? 'it has no snooze time' : `it is snoozed until ${due.toISOString()}`);
  }
  return {
    status: to,
    snoozedUntil: to === 'SNOOZED' ? (event.type === 'snooze' ? event.until : conversation.snoozedUntil) : null,
    changed: to !== from,
    silent: SILENT_EVENTS.includes(event.type),
  };
}

/** `transition`, throwing the refusal (for use cases). */
export function applyConversationEvent(conversation: ConversationStatusState, event: ConversationEvent, now: Date): ConversationStatusChange {
  const result = transition(conversation, event, now);
  if (result instanceof DomainError) throw result;
  return result;
}

/** Whether the automatic check should fire `snoozeExpired` now. */
export function snoozeDue(conversation: ConversationStatusState, now: Date): boolean {
  return conversation.status === 'SNOOZED' && conversation.snoozedUntil !== null && conversation.snoozedUntil.getTime() <= now.getTime();
}

/**
 * The activity message for a status change ("Conversation was resolved by {actor}"), or null
 * when there is none: a silent change, or nothing changed (re-snoozing to a new time does leave
 * one). `actor` is the display name of the acting user; null for a change nobody made by hand.
 */
export function conversationActivityText(event: ConversationEvent, change: ConversationStatusChange, actor: string | null): string | null {
  if (change.silent) return null;
  if (!change.changed && event.type !== 'snooze') return null;
  const by = actor ? ` by ${actor}` : '';
  switch (event.type) {
    case 'resolve':
      return `Conversation was resolved${by}`;
    case 'reopen':
      return `Conversation was reopened${by}`;
    case 'snooze':
      return `Conversation was snoozed${by} until ${event.until.toISOString()}`;
    case 'pending':
      return `Conversation was marked as pending${by}`;
    case 'incomingMessage':
      return 'Conversation was reopened by a new message from the contact';
    case 'snoozeExpired':
      return null;
  }
}

function refusal(from: ConversationStatus, event: ConversationEventType, why?: string): DomainError {
  return new DomainError('unprocessable', `A conversation that is ${from} cannot take the event "${excerpt(String(event))}"${why ? `: ${why}` : ''}`);
}
