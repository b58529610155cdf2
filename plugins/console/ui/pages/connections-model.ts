/**
 * What the Connections and Messages pages read from `/v3/connections/…`: a connection with its
 * live status, a message of a chat, a chat; and the words a person reads for each.
 */

export type ConnectionStatus = 'DISCONNECTED' | 'CONNECTING' | 'QR_PENDING' | 'CONNECTED' | 'LOGGED_OUT';

/** A connection as `GET /v3/connections` answers it: the one shape every page uses. */
export interface Connection {
  id: string;
  name: string;
  driver: string;
  official: boolean;
  status: ConnectionStatus;
  statusReason: string | null;
  phoneNumber: string | null;
  qr: string | null;
  qrDataUrl: string | null;
  pairingCode: string | null;
  capabilities: { sendWindow: boolean; templates: boolean; carousels: boolean; flows: boolean; typing: boolean };
  credentials: Record<string, string>;
  callbackUrl: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Message {
  id: string;
  connectionId: string;
  direction: 'inbound' | 'outbound';
  remoteJid: string;
  kind: string;
  /** Outbound: PENDING, SENT, DELIVERED, READ, FAILED. Inbound: RECEIVED. */
  status: string;
  externalId: string | null;
  error: { code: string | number; title: string } | null;
  content: unknown;
  messageTimestamp: string;
}

export interface Chat {
  remoteJid: string;
  name: string | null;
  lastMessageAt: string;
  lastContactMessageAt: string | null;
}

export const DRIVERS = [
  { value: 'sandbox', label: 'Sandbox (simulated network, for trying things out)' },
  { value: 'baileys', label: 'WhatsApp account by QR code (baileys, unofficial)' },
  { value: 'cloud-api', label: 'WhatsApp Cloud API (official, paid plans)' },
] as const;

export type Driver = (typeof DRIVERS)[number]['value'];

export function driverName(driver: string): string {
  return { sandbox: 'Sandbox', baileys: 'QR code (baileys)', 'cloud-api': 'Cloud API' }[driver] ?? driver;
}

/** A phone number as people write it (`+15550109884`), from a number or a chat id. */
export function phoneOf(numberOrJid: string | null | undefined): string {
  if (!numberOrJid) return '—';
  const [user = '', server = ''] = numberOrJid.split('@');
  if (server && server !== 's.whatsapp.net' && server !== 'c.us') return numberOrJid;
  return /^\d+$/.test(user) ? `+${user}` : user;
}

/** The text a person reads for a message, whatever its kind and direction. */
export function textOf(message: Message): string {
  const content = (message.content ?? {}) as Record<string, any>;
  if (message.direction === 'outbound') {
    const part = content[message.kind];
    if (typeof content.text === 'string') return content.text;
    if (part && typeof part === 'object') return part.caption ?? part.body ?? part.name ?? `(${message.kind})`;
    return `(${message.kind})`;
  }
  const body = (content.message ?? {}) as Record<string, any>;
  if (typeof body.conversation === 'string') return body.conversation;
  for (const value of Object.values(body)) {
    if (value && typeof value === 'object') {
      const text = value.text ?? value.caption ?? value.name;
      if (typeof text === 'string') return text;
    }
  }
  return `(${message.kind})`;
}

