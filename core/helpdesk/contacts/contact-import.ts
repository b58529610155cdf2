import type { Actor } from '../../identity/identity.ts';
import { parseCsv } from '../../campaigns/audience.ts';
import { badRequest } from '../../shared/errors.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import { assertHelpdeskConfigurable } from '../plan-gate.ts';
import { cleanEmail, cleanName, cleanPhone, type Contact, type ContactStores } from './contacts.ts';

export const MAX_IMPORT_BYTES = 2 * 1024 * 1024;
export const MAX_IMPORT_ROWS = 10_000;
const MAX_ATTRIBUTE_LENGTH = 1000;

const COLUMNS = {
  name: ['name', 'full name', 'full_name', 'fullname', 'contact'],
  phone: ['phone', 'phone number', 'phone_number', 'phonenumber', 'number', 'mobile', 'whatsapp'],
  email: ['email', 'e-mail', 'email address', 'mail'],
};

export interface ContactImport {
  created: number;
  updated: number;
  /** `line`: the row's number in the file, the header row being 1. */
  skipped: Array<{ line: number; reason: string }>;
}

/**
 * `POST /v3/helpdesk/contacts/import` (Managers and above, PRO): a CSV (RFC 4180; `,` or `;`)
 * with a header row. The `name`, `phone` and `email` columns (a few usual spellings, any case)
 * fill those fields; every other named column is a custom attribute (empty cells are left out).
 * Each row updates the contact with its phone, else the one with its e-mail, else creates one;
 * an update fills the row's values in and keeps the rest. A row that cannot be used (no phone
 * and no e-mail, a malformed one, a phone another contact has) is skipped with its reason; the
 * other rows still count. Only a file that is not a contact list at all is refused (400).
 */
export async function importContacts(stores: ContactStores, deps: { clock: Clock; ids: IdGen }, actor: Actor, csv: string): Promise<ContactImport> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const rows = parseCsv(csv.replace(/^\uFEFF/, ''));
  const header = (rows[0] ?? []).map((h) => h.trim());
  const columnOf = (names: string[]) => header.findIndex((h) => names.includes(h.toLowerCase()));
  const columns = { name: columnOf(COLUMNS.name), phone: columnOf(COLUMNS.phone), email: columnOf(COLUMNS.email) };
  if (columns.phone < 0 && columns.email < 0) throw badRequest(['body must be a CSV whose header row names a phone or an email column']);
  if (rows.length - 1 > MAX_IMPORT_ROWS) throw badRequest([`body has more than ${MAX_IMPORT_ROWS} rows: split the file`]);
  const attributeColumns = header.map((name, i) => ({ name, i })).filter(({ name, i }) => name !== '' && !Object.values(columns).includes(i));

  const result: ContactImport = { created: 0, updated: 0, skipped: [] };
  for (const [index, row] of rows.entries()) {
    if (index === 0 || row.every((cell) => cell.trim() === '')) continue;
    const line = index + 1;
    const problems: string[] = [];
    const cell = (i: number) => (i < 0 ? undefined : (row[i] ?? ''));
    const fields = { name: cleanName(cell(columns.name), problems), phone: cleanPhone(cell(columns.phone), problems), email: cleanEmail(cell(columns.email), problems) };
    if (!fields.phone && !fields.email && problems.length === 0) problems.push('the row has no phone and no email');
    const attributes: Record<string, string> = {};
    for (const { name, i } of attributeColumns) {
      const value = (row[i] ?? '').trim();
      if (value.length > MAX_ATTRIBUTE_LENGTH) problems.push(`${name} must be at most ${MAX_ATTRIBUTE_LENGTH} characters`);
      else if (value !== '') attributes[name] = value;
    }
    if (problems.length > 0) {
      result.skipped.push({ line, reason: problems.map((p) => p.replace(/^body\./, '')).join('; ') });
      continue;
    }
    const outcome = await upsert(stores, deps, actor.workspaceId, fields, attributes);
    if (typeof outcome === 'string') result.skipped.push({ line, reason: outcome });
    else result[outcome.created ? 'created' : 'updated'] += 1;
  }
  return result;
}

/** The row's contact by phone, then by e-mail, updated; or a new one. A string says why the row is skipped. */
async function upsert(
  stores: ContactStores,
  deps: { clock: Clock; ids: IdGen },
  workspaceId: string,
  fields: { name: string | null; phone: string | null; email: string | null },
  attributes: Record<string, string>,
): Promise<{ created: boolean } | string> {
  const now = deps.clock.now();
  const byPhone = fields.phone ? await stores.contacts.findByPhone(workspaceId, fields.phone) : undefined;
  const existing = byPhone ?? (fields.email ? await stores.contacts.findByEmail(workspaceId, fields.email) : undefined);
  if (!existing) {
    const contact: Contact = { id: deps.ids.next(), workspaceId, ...fields, customAttributes: attributes, createdAt: now, updatedAt: now };
    await stores.contacts.insert(contact);
    return { created: true };
  }
  // Found by e-mail with another phone: the row's phone must not be another contact's.
  if (fields.phone && existing.phone && existing.phone !== fields.phone) return `the contact with this email has another phone (${existing.phone})`;
  await stores.contacts.update({
    ...existing,
    name: fields.name ?? existing.name,
    phone: fields.phone ?? existing.phone,
    email: fields.email ?? existing.email,
    customAttributes: { ...existing.customAttributes, ...attributes },
    updatedAt: now,
  });
  return { created: false };
}
