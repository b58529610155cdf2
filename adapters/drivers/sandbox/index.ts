import type { DriverConnection, DriverEvents, NetworkDriver } from '../../../core/connections/driver.ts';
import { DriverError, MEDIA_GONE } from '../../../core/connections/driver.ts';
import { inspectSessionMaterial } from '../baileys/session-material.ts';

/** What a contact on the sandbox network would have seen of "typing…", newest last. */
export interface SandboxTyping {
  connectionId: string;
  to: string;
  typing: boolean;
  at: Date;
}

export interface SandboxDriver extends NetworkDriver {
  /** Typing shown to contacts (kept in memory, the last 1,000), for trying flows out and for tests. */
  readonly typingLog: SandboxTyping[];
}

/**
 * A simulated network inside the service: pairing completes at once, sends are accepted with
 * a network id, and the sandbox endpoints inject what a contact would do (messages, receipts,
 * presence, edits, deletions). It lets a new user try every flow with no phone.
 */
export function createSandboxDriver(): SandboxDriver {
  const typingLog: SandboxTyping[] = [];
  return {
    name: 'sandbox',
    typingLog,
    capabilities: { official: false, sendWindow: false, templates: false, carousels: false, flows: false, typing: true, pairing: 'instant', idempotentSends: true },

    async connect(connection: DriverConnection, events: DriverEvents) {
      // A number the connection already has (an imported session's account) stays its number.
      await events.status({ event: 'opened', phoneNumber: connection.phoneNumber ?? sandboxNumber(connection.id) });
    },

    // The sandbox simulates an unofficial account, so it takes the same session material (checked
    // the same way) and keeps only its number: there is no real session to open with it.
    sessionImport: { inspect: inspectSessionMaterial },

    async disconnect() {},

    // The same rule as sending: numbers starting with 999 are not on the sandbox network.
    async lookupNumber(_connection, phone) {
      const exists = !phone.startsWith('999');
      return { exists, jid: exists ? `${phone}@s.whatsapp.net` : null };
    },

    async send(_connection, message) {
      // Recipients starting with 999 simulate numbers that are not on the network.
      if (message.to.startsWith('999')) throw new DriverError(`${message.to} is not on the network`, 'not_on_network', false);
      // The service's id makes the network id, so a retried send is the same message (no duplicate).
      return { externalId: `SANDBOX.${(message.clientMessageId ?? crypto.randomUUID()).replace(/-/g, '').toUpperCase()}`, status: 'SENT' };
    },

    async fetchMedia(_connection, ref) {
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(ref);
      if (!match) throw new DriverError('sandbox media reference is not a data URL', MEDIA_GONE, false);
      return { mimetype: match[1]!, bytes: new Uint8Array(Buffer.from(match[2]!, 'base64')) };
    },

    async sendTyping(connection, to, typing) {
      typingLog.push({ connectionId: connection.id, to, typing, at: new Date() });
      if (typingLog.length > 1_000) typingLog.splice(0, typingLog.length - 1_000);
    },
  };
}

/** A stable fake number per connection (E.164 fictional range 1-555-01xx). */
export function sandboxNumber(connectionId: string): string {
  const digits = connectionId.replace(/\D/g, '').slice(-4).padStart(4, '0');
  return `1555010${digits}`;
}
