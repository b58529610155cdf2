/**
 * Contact cards of a `contacts` send, as the network carries them (Baileys' `contactsArrayMessage`
 * proto: `displayName` and a list of `{ displayName, vcard }`). The Baileys driver sends this and
 * `send.message` shows it, so both say the same.
 */
export function contactCards(contacts: ReadonlyArray<{ name: string; phones: string[]; emails?: string[]; organization?: string }>): {
  displayName: string;
  contacts: Array<{ displayName: string; vcard: string }>;
} {
  const cards = contacts.map((c) => ({ displayName: c.name, vcard: toVcard(c) }));
  return { displayName: cards.length === 1 ? cards[0]!.displayName : `${cards.length} contacts`, contacts: cards };
}

/** A vCard 3.0 for one contact of a `contacts` message; `waid` lets the app offer "Message". */
export function toVcard(contact: { name: string; phones: string[]; emails?: string[]; organization?: string }): string {
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', `FN:${escapeVcard(contact.name)}`, `N:;${escapeVcard(contact.name)};;;`];
  if (contact.organization) lines.push(`ORG:${escapeVcard(contact.organization)}`);
  for (const phone of contact.phones) {
    const digits = phone.replace(/[^0-9]/g, '');
    const display = phone.trim().startsWith('+') ? phone.trim() : `+${digits}`;
    lines.push(digits ? `TEL;type=CELL;type=VOICE;waid=${digits}:${display}` : `TEL;type=CELL:${phone}`);
  }
  for (const email of contact.emails ?? []) lines.push(`EMAIL;type=INTERNET:${escapeVcard(email)}`);
  lines.push('END:VCARD');
  return lines.join('\n');
}

function escapeVcard(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/([,;])/g, '\\$1');
}
