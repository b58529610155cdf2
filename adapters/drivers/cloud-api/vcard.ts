import type { WebhookContactCard } from './graph-types.ts';

/**
 * The Cloud API delivers shared contacts as structured cards; the 2.13 nodes
 * (`contactMessage`, `contactsArrayMessage`) carry a `displayName` and a vCard, as the
 * network's own clients do. This builds a vCard 3.0 from a card.
 */

export function displayNameOf(card: WebhookContactCard): string {
  const name = card.name ?? {};
  const formatted = name.formatted_name?.trim();
  if (formatted) return formatted;
  const parts = [name.prefix, name.first_name, name.middle_name, name.last_name, name.suffix].filter((p): p is string => Boolean(p?.trim()));
  if (parts.length > 0) return parts.join(' ');
  return card.phones?.find((p) => p.phone)?.phone ?? '';
}

export function toVcard(card: WebhookContactCard): string {
  const name = card.name ?? {};
  const lines = ['BEGIN:VCARD', 'VERSION:3.0'];
  lines.push(`N:${[name.last_name, name.first_name, name.middle_name, name.prefix, name.suffix].map(escape).join(';')}`);
  lines.push(`FN:${escape(displayNameOf(card))}`);
  if (card.org?.company || card.org?.department) lines.push(`ORG:${[card.org.company, card.org.department].map(escape).join(';')}`);
  if (card.org?.title) lines.push(`TITLE:${escape(card.org.title)}`);
  for (const phone of card.phones ?? []) {
    if (!phone.phone && !phone.wa_id) continue;
    const params = [phone.type ? `type=${param(phone.type)}` : undefined, phone.wa_id ? `waid=${param(phone.wa_id)}` : undefined].filter(Boolean);
    lines.push(`TEL${params.map((p) => `;${p}`).join('')}:${escape(phone.phone ?? `+${phone.wa_id}`)}`);
  }
  for (const email of card.emails ?? []) {
    if (email.email) lines.push(`EMAIL${email.type ? `;type=${param(email.type)}` : ''}:${escape(email.email)}`);
  }
  for (const url of card.urls ?? []) {
    if (url.url) lines.push(`URL${url.type ? `;type=${param(url.type)}` : ''}:${escape(url.url)}`);
  }
  for (const address of card.addresses ?? []) {
    const fields = ['', '', address.street, address.city, address.state, address.zip, address.country].map(escape).join(';');
    lines.push(`ADR${address.type ? `;type=${param(address.type)}` : ''}:${fields}`);
  }
  if (card.birthday) lines.push(`BDAY:${escape(card.birthday)}`);
  lines.push('END:VCARD');
  return lines.join('\n');
}

/** RFC 6350 text escaping: backslash, comma, semicolon, newline. */
function escape(value: string | undefined): string {
  return (value ?? '').replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/;/g, '\\;').replace(/\r?\n/g, '\\n');
}

/** Parameter values may not hold separators. */
function param(value: string): string {
  return value.replace(/[;:,"\r\n]/g, '');
}
