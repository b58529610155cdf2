import type { Actor } from '../../identity/identity.ts';
import { parseCsv } from '../../campaigns/audience.ts';
import { badRequest, DomainError } from '../../shared/errors.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import type { UnitOfWork } from '../../shared/unit-of-work.ts';
import { assertHelpdeskConfigurable } from '../plan-gate.ts';
import { cleanEmail, cleanName, cleanPhone, type Contact, type ContactStores } from './contacts.ts';

export const MAX_IMPORT_BYTES = 2 * 1024 * 1024;
export const MAX_IMPORT_ROWS = 10_000;
const MAX_ATTRIBUTE_LENGTH = 1000;
/** Rows written per transaction: few enough that a lost race redoes little, many enough to be quick. */
const ROWS_PER_TRANSACTION = 100;
/** A row alone that loses to other requests this many times in a row is reported, not lost. */
const ATTEMPTS_ALONE = 3;

/**
 * Another request wrote the same contacts at the same moment (the database chose this
 * transaction as a deadlock's victim, or could not serialize it): nothing of it was kept, and
 * doing it again sees the other request's writes. The storage adapter raises it.
 */
export class LostRace extends Error {
  constructor(cause: unknown) {
    super('another request wrote the same contacts at the same moment', { cause });
    this.name = 'LostRace';
  }
}

/** In an import a phone collision can only come from a contact created since the row looked (the 409 of ContactStore). */
const lostRace = (error: unknown) => error instanceof LostRace || (error instanceof DomainError && error.kind === 'conflict');

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
 *
 * Rows are written a hundred to a transaction, so other requests (another import, an agent
 * creating a contact) run beside a long import. When one of them wrote the same phone at the
 * same moment, that batch is undone and each of its rows done again alone: a row whose phone
 * appeared meanwhile then updates that contact, as if it had been there from the start.
 */
export async function importContacts(uow: UnitOfWork<ContactStores>, deps: { clock: Clock; ids: IdGen }, actor: Actor, csv: string): Promise<ContactImport> {
  await uow.transaction((stores) => assertHelpdeskConfigurable(stores.plans, actor));
  const rows = parseCsv(csv.replace(/^\uFEFF/, ''));
  const header = (rows[0] ?? []).map((h) => h.trim());
  const columnOf = (names: string[]) => header.findIndex((h) => names.includes(h.toLowerCase()));
  const columns = { name: columnOf(COLUMNS.name), phone: columnOf(COLUMNS.phone), email: columnOf(COLUMNS.email) };
  if (columns.phone < 0 && columns.email < 0) throw badRequest(['body must be a CSV whose header row names a phone or an email column']);
  if (rows.length - 1 > MAX_IMPORT_ROWS) throw badRequest([`body has more than ${MAX_IMPORT_ROWS} rows: split the file`]);
  const attributeColumns = header.map((name, i) => ({ name, i })).filter(({ name, i }) => name !== '' && !Object.values(columns).includes(i));

  const result: ContactImport = { created: 0, updated: 0, skipped: [] };
  const usable: ImportRow[] = [];
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
    usable.push({ line, fields, attributes });
  }

  for (let start = 0; start < usable.length; start += ROWS_PER_TRANSACTION) {
    const batch = usable.slice(start, start + ROWS_PER_TRANSACTION);
    const outcomes = await uow
      .transaction(async (stores) => {
        const done: Outcome[] = [];
        for (const row of batch) done.push(await upsert(stores, deps, actor.workspaceId, row));
        return done;
      })
      .catch(async (error: unknown) => {
        if (!lostRace(error)) throw error;
        const alone: Outcome[] = [];
        for (const row of batch) alone.push(await upsertAlone(uow, deps, actor.workspaceId, row));
        return alone;
      });
    for (const [i, outcome] of outcomes.entries()) {
      if (typeof outcome === 'string') result.skipped.push({ line: batch[i]!.line, reason: outcome });
      else result[outcome.created ? 'created' : 'updated'] += 1;
    }
  }
  result.skipped.sort((a, b) => a.line - b.line);
  return result;
}

interface ImportRow {
  line: number;
  fields: { name: string | null; phone: string | null; email: string | null };
  attributes: Record<string, string>;
}

/** Created or updated; a string says why the row is skipped. */
type Outcome = { created: boolean } | string;

/** One row in its own transaction, again while other requests keep winning the race for its contact. */
async function upsertAlone(uow: UnitOfWork<ContactStores>, deps: { clock: Clock; ids: IdGen }, workspaceId: string, row: ImportRow): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await uow.transaction((stores) => upsert(stores, deps, workspaceId, row));
    } catch (error) {
      if (!lostRace(error)) throw error;
      if (attempt >= ATTEMPTS_ALONE) return 'other requests kept changing this contact at the same moment: import the row again';
    }
  }
}

/** The row's contact by phone, then by e-mail, updated; or a new one. A string says why the row is skipped. */
async function upsert(stores: ContactStores, deps: { clock: Clock; ids: IdGen }, workspaceId: string, { fields, attributes }: ImportRow): Promise<Outcome> {
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
