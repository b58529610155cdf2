import { DomainError } from '../shared/errors.ts';

/**
 * The 24-hour customer-service window of official connections (spec 3.4). Free-form messages
 * may go out only while it is open; it opens (or restarts) when the contact writes, and closes
 * 24 hours after the contact's last message. Unofficial connections have no window.
 */
export type SendWindowState = 'OPEN' | 'CLOSED';
export type SendWindowTrigger = 'contactMessage' | 'elapsed';

export const SEND_WINDOW_HOURS = 24;
const WINDOW_MS = SEND_WINDOW_HOURS * 3_600_000;

export const SEND_WINDOW_TRANSITIONS: ReadonlyArray<{ from: SendWindowState; trigger: SendWindowTrigger; to: SendWindowState }> = [
  { from: 'CLOSED', trigger: 'contactMessage', to: 'OPEN' },
  { from: 'OPEN', trigger: 'contactMessage', to: 'OPEN' },
  { from: 'OPEN', trigger: 'elapsed', to: 'CLOSED' },
];

/** The window of one chat, as the time of the contact's last message. */
export interface SendWindow {
  lastContactMessageAt: Date | null;
}

export function windowState(window: SendWindow, now: Date): SendWindowState {
  const last = window.lastContactMessageAt;
  let state: SendWindowState = 'CLOSED';
  if (last) {
    state = next(state, 'contactMessage');
    if (now.getTime() - last.getTime() >= WINDOW_MS) state = next(state, 'elapsed');
  }
  return state;
}

/** When the window closes (or closed): 24 hours after the contact's last message; null if the contact never wrote. */
export function windowClosesAt(window: SendWindow): Date | null {
  return window.lastContactMessageAt ? new Date(window.lastContactMessageAt.getTime() + WINDOW_MS) : null;
}

/** A contact's message (re)opens the window; older messages arriving late never move it back. */
export function recordContactMessage(window: SendWindow, at: Date): SendWindow {
  if (window.lastContactMessageAt && window.lastContactMessageAt.getTime() >= at.getTime()) return window;
  return { lastContactMessageAt: at };
}

/** Refuses free-form content into a closed window; templates always pass. */
export function assertMaySend(window: SendWindow, now: Date, kind: { isTemplate: boolean }): void {
  if (kind.isTemplate || windowState(window, now) === 'OPEN') return;
  throw new DomainError(
    'unprocessable',
    `The outbound window expired: the contact has not written in the last ${SEND_WINDOW_HOURS} hours, so only a pre-approved template may be sent`,
  );
}

function next(from: SendWindowState, trigger: SendWindowTrigger): SendWindowState {
  const rule = SEND_WINDOW_TRANSITIONS.find((t) => t.from === from && t.trigger === trigger);
  if (!rule) throw new Error(`send window: no transition from ${from} on ${trigger}`);
  return rule.to;
}
