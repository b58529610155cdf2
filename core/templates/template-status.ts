/**
 * Template approval (spec 3.5: "Creation returns `PENDING`; polling `GET /templates/{templateId}`
 * reaches `APPROVED`; a `rejected_reason` field explains a rejection. The full set of template
 * states: not shown"). The states are the platform's own (the Graph `status` of a message
 * template and the `event` of its `message_template_status_update` callback):
 *
 * PENDING    under review after creation
 * APPROVED   may be sent
 * REJECTED   failed review; `rejected_reason` says why (ABUSIVE_CONTENT, INVALID_FORMAT, …)
 * PAUSED     paused for low quality (first or second pause); comes back APPROVED by itself
 * DISABLED   disabled for repeated low quality; only an appeal (or reinstatement) brings it back
 * IN_APPEAL  a rejection or a disabling is being appealed
 *
 * Two ways a status moves, with different trust:
 * - a callback is one event, possibly late or out of order: it moves the template only along
 *   the table below; an event the table does not allow from the current status is ignored
 *   (a late `APPROVED` after a `PAUSED` must not unpause a template);
 * - polling reads the platform's current status: that is the truth and is taken as is.
 */
export const TEMPLATE_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED', 'IN_APPEAL'] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];

/** The transition table: where each status may go on a callback. */
export const TEMPLATE_TRANSITIONS: Record<TemplateStatus, readonly TemplateStatus[]> = {
  PENDING: ['APPROVED', 'REJECTED'],
  APPROVED: ['PAUSED', 'DISABLED', 'REJECTED'],
  PAUSED: ['APPROVED', 'DISABLED'],
  DISABLED: ['IN_APPEAL', 'APPROVED'],
  REJECTED: ['IN_APPEAL'],
  IN_APPEAL: ['APPROVED', 'REJECTED', 'DISABLED'],
};

/**
 * `message_template_status_update` events and what they mean for the status. `REINSTATED` is
 * an approval again; `FLAGGED` (quality warning), `LOCKED`/`UNLOCKED`, `ARCHIVED`/`UNARCHIVED`
 * and `LIMIT_EXCEEDED` change nothing we keep; `DELETED`/`PENDING_DELETION` remove it.
 */
export type TemplateEventEffect = { kind: 'status'; status: TemplateStatus } | { kind: 'deleted' } | { kind: 'none' };

export function templateEventEffect(event: string): TemplateEventEffect {
  const upper = event.toUpperCase();
  if (upper === 'REINSTATED') return { kind: 'status', status: 'APPROVED' };
  if (upper === 'DELETED' || upper === 'PENDING_DELETION') return { kind: 'deleted' };
  if (isTemplateStatus(upper)) return { kind: 'status', status: upper };
  return { kind: 'none' };
}

export function isTemplateStatus(value: unknown): value is TemplateStatus {
  return typeof value === 'string' && (TEMPLATE_STATUSES as readonly string[]).includes(value);
}

export function canMoveTemplate(from: TemplateStatus, to: TemplateStatus): boolean {
  return TEMPLATE_TRANSITIONS[from].includes(to);
}

/** Only an approved template may be sent. */
export function isSendable(status: TemplateStatus): boolean {
  return status === 'APPROVED';
}

/**
 * The status after a callback: the new one when the table allows the move, otherwise the
 * current one unchanged (`moved: false`). Repeating the current status is not a move.
 */
export function afterCallback(from: TemplateStatus, to: TemplateStatus): { status: TemplateStatus; moved: boolean } {
  return canMoveTemplate(from, to) ? { status: to, moved: true } : { status: from, moved: false };
}

/** `rejected_reason` is kept only while the template is REJECTED; the platform's `NONE` is no reason. */
export function reasonFor(status: TemplateStatus, reason: string | null | undefined): string | null {
  if (status !== 'REJECTED') return null;
  const text = typeof reason === 'string' ? reason.trim() : '';
  return text && text.toUpperCase() !== 'NONE' ? text : 'UNKNOWN';
}
