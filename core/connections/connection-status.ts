import { DomainError } from '../shared/errors.ts';
import { accepts, nextState, type TransitionTable } from '../shared/transition-table.ts';

/**
 * The life of a connection's session with the network (spec 3.6 names no states; these are ours).
 *
 * DISCONNECTED  no session; nothing sends or receives
 * CONNECTING    a session is being opened (or re-opened after a drop)
 * QR_PENDING    an unofficial account waits for its phone to scan the QR code / enter the pairing code
 * CONNECTED     live: sends and receives
 * LOGGED_OUT    the phone unlinked the device (or the credentials were revoked): pairing starts over
 */
export const CONNECTION_STATUSES = ['DISCONNECTED', 'CONNECTING', 'QR_PENDING', 'CONNECTED', 'LOGGED_OUT'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/**
 * What happens to a connection's session:
 *
 * connect      the user asks to connect (pair)
 * qr           the network offers a (new) QR code / pairing code
 * opened       the session opened
 * dropped      the session dropped without a logout; the driver reconnects with backoff
 * loggedOut    the network ended the pairing: the device was unlinked or credentials revoked
 * disconnect   the user asks to disconnect, keeping the pairing
 * logout       the user asks to log out, ending the pairing
 * imported     a companion handed over the account's session material (sync flow, spec 4.3): the session opens with it
 */
export const CONNECTION_EVENTS = ['connect', 'qr', 'opened', 'dropped', 'loggedOut', 'disconnect', 'logout', 'imported'] as const;
export type ConnectionEvent = (typeof CONNECTION_EVENTS)[number];

/** The transition table: for each status, the events it accepts and where they lead. */
export const CONNECTION_TRANSITIONS: TransitionTable<ConnectionStatus, ConnectionEvent> = {
  // `imported` replaces the pairing, so it is refused while a live session uses the current one.
  DISCONNECTED: { connect: 'CONNECTING', logout: 'LOGGED_OUT', disconnect: 'DISCONNECTED', imported: 'CONNECTING' },
  CONNECTING: { qr: 'QR_PENDING', opened: 'CONNECTED', dropped: 'CONNECTING', loggedOut: 'LOGGED_OUT', disconnect: 'DISCONNECTED', logout: 'LOGGED_OUT', connect: 'CONNECTING', imported: 'CONNECTING' },
  QR_PENDING: { qr: 'QR_PENDING', opened: 'CONNECTED', dropped: 'CONNECTING', loggedOut: 'LOGGED_OUT', disconnect: 'DISCONNECTED', logout: 'LOGGED_OUT', connect: 'QR_PENDING', imported: 'CONNECTING' },
  CONNECTED: { dropped: 'CONNECTING', loggedOut: 'LOGGED_OUT', disconnect: 'DISCONNECTED', logout: 'LOGGED_OUT', connect: 'CONNECTED', opened: 'CONNECTED' },
  LOGGED_OUT: { connect: 'CONNECTING', logout: 'LOGGED_OUT', disconnect: 'LOGGED_OUT', imported: 'CONNECTING' },
};

export function canTransition(from: ConnectionStatus, event: ConnectionEvent): boolean {
  return accepts(CONNECTION_TRANSITIONS, from, event);
}

/** The next status, or a 409 when the event makes no sense in this status. */
export function nextConnectionStatus(from: ConnectionStatus, event: ConnectionEvent): ConnectionStatus {
  const to = nextState(CONNECTION_TRANSITIONS, from, event);
  if (!to) throw new DomainError('conflict', `A connection that is ${from} cannot ${describe(event)}`);
  return to;
}

/** Whether a session should be running (the worker keeps one alive) in this status. */
export function wantsSession(status: ConnectionStatus): boolean {
  return status === 'CONNECTING' || status === 'QR_PENDING' || status === 'CONNECTED';
}

function describe(event: ConnectionEvent): string {
  return { connect: 'connect', qr: 'show a QR code', opened: 'open', dropped: 'drop', loggedOut: 'be logged out', disconnect: 'disconnect', logout: 'log out', imported: 'take imported session material (log out first)' }[event];
}
