import { badRequest } from '../shared/errors.ts';

/**
 * Who a campaign goes to. Whatever the source (a list of numbers, recipients with variables, a
 * CSV, helpdesk contacts by label), the audience is a list of raw entries that is normalised here:
 * numbers to E.164 digits, repeated numbers kept once (the first occurrence, with its variables),
 * numbers that are not phone numbers and recipients missing a variable the message uses reported
 * as invalid, opted-out numbers reported and left out. Only `QUEUED` entries are reserved and sent.
 */
export interface RawRecipient {
  phone: unknown;
  variables?: Record<string, unknown>;
}

export type AudienceEntryStatus = 'QUEUED' | 'INVALID' | 'OPTED_OUT';

export interface AudienceEntry {
  /** Position in the audience as given (after duplicates are dropped), from 0. */
  position: number;
  /** E.164 digits without `+` when valid; the input as given when not. */
  phone: string;
  variables: Record<string, string>;
  status: AudienceEntryStatus;
  error: string | null;
}

export interface Audience {
  entries: AudienceEntry[];
  /** Entries dropped because their number came earlier in the list. */
  duplicates: number;
}

/** The most recipients one campaign may have. */
export const MAX_AUDIENCE = 200_000;

export function buildAudience(raw: readonly RawRecipient[], options: { optedOut: ReadonlySet<string>; variablesUsed: readonly Placeholder[] }): Audience {
  if (raw.length === 0) throw badRequest(['body.audience has no recipients']);
  if (raw.length > MAX_AUDIENCE) throw badRequest([`body.audience has ${raw.length} recipients; a campaign may have at most ${MAX_AUDIENCE}`]);
  const seen = new Set<string>();
  const entries: AudienceEntry[] = [];
  let duplicates = 0;
  for (const item of raw) {
    const phone = normalizePhone(item.phone);
    const variables = stringVariables(item.variables);
    if (phone === null) {
      entries.push({ position: entries.length, phone: String(item.phone ?? '').slice(0, 64), variables, status: 'INVALID', error: 'not a phone number in international format (E.164)' });
      continue;
    }
    if (seen.has(phone)) {
      duplicates += 1;
      continue;
    }
    seen.add(phone);
    const missing = options.variablesUsed.filter((p) => p.fallback === null && !variables[p.name]?.trim()).map((p) => p.name);
    const [status, error]: [AudienceEntryStatus, string | null] = options.optedOut.has(phone)
      ? ['OPTED_OUT', 'the contact opted out of campaigns']
      : missing.length > 0
        ? ['INVALID', `missing variable${missing.length > 1 ? 's' : ''} ${missing.map((m) => `"${m}"`).join(', ')}`]
        : ['QUEUED', null];
    entries.push({ position: entries.length, phone, variables, status, error });
  }
  return { entries, duplicates };
}

/** `+55 (11) 99999-9999`, `0055…` → `5511999999999`; null when it is not a phone number. */
export function normalizePhone(input: unknown): string | null {
  if (typeof input !== 'string' && typeof input !== 'number') return null;
  const text = String(input).trim().replace(/@s\.whatsapp\.net$/, '');
  const digits = text.replace(/[\s().-]/g, '').replace(/^\+/, '').replace(/^00/, '');
  return /^[1-9]\d{6,14}$/.test(digits) ? digits : null;
}

function stringVariables(input: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!input || typeof input !== 'object' || Array.isArray(input)) return out;
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = String(value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Personalisation: `{{name}}` or `{{name|fallback}}` anywhere in the message's text; a name is a CSV header, spaces allowed.

export interface Placeholder {
  name: string;
  fallback: string | null;
}

const PLACEHOLDER = /\{\{\s*([^{}|]*?[^{}|\s])\s*(?:\|([^}]*))?\}\}/g;

/** The placeholders a message uses, each name once (a fallback anywhere makes it optional). */
export function placeholdersOf(content: unknown): Placeholder[] {
  const found = new Map<string, Placeholder>();
  for (const text of stringsOf(content)) {
    for (const match of text.matchAll(PLACEHOLDER)) {
      const name = match[1]!;
      const fallback = match[2] === undefined ? null : match[2].trim();
      const known = found.get(name);
      if (!known || (known.fallback === null && fallback !== null)) found.set(name, { name, fallback });
    }
  }
  return [...found.values()];
}

/** The message for one recipient: every placeholder replaced by the recipient's value or its fallback. */
export function personalise<T>(content: T, variables: Readonly<Record<string, string>>): T {
  return mapStrings(content, (text) =>
    text.replace(PLACEHOLDER, (_, name: string, fallback: string | undefined) => {
      const value = variables[name];
      return value !== undefined && value.trim() !== '' ? value : (fallback ?? '').trim();
    }),
  ) as T;
}

function* stringsOf(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const item of value) yield* stringsOf(item);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) yield* stringsOf(item);
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, map)]));
  return value;
}

// ---------------------------------------------------------------------------------------------
// CSV: a header row, then one recipient per row (RFC 4180 quoting).

const PHONE_COLUMNS = ['phone', 'number', 'phone_number', 'phonenumber', 'to', 'whatsapp', 'mobile'];

/**
 * Recipients of a CSV: the column named `phone` (or `number`, `to`, `mobile`…; else the first)
 * holds the number, every other column is a variable named by its header.
 */
export function recipientsFromCsv(text: string): RawRecipient[] {
  const rows = parseCsv(text.replace(/^\uFEFF/, '')).filter((row) => row.some((cell) => cell.trim() !== ''));
  if (rows.length < 2) throw badRequest(['body.audience.csv needs a header row and at least one recipient']);
  const header = rows[0]!.map((h) => h.trim());
  const lower = header.map((h) => h.toLowerCase());
  const phoneColumn = Math.max(0, lower.findIndex((h) => PHONE_COLUMNS.includes(h)));
  return rows.slice(1).map((row) => {
    const variables: Record<string, string> = {};
    header.forEach((name, i) => {
      if (i !== phoneColumn && name) variables[name] = (row[i] ?? '').trim();
    });
    return { phone: row[phoneColumn] ?? '', variables };
  });
}

/** Splits CSV text into rows of cells; a quoted cell may hold commas, quotes (`""`) and newlines. */
export function parseCsv(text: string): string[][] {
  const delimiter = detectDelimiter(text);
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"' && cell === '') quoted = true;
    else if (char === delimiter) {
      row.push(cell);
      cell = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += char;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

/** Spreadsheets in many locales save `;`-separated files: the header row tells. */
function detectDelimiter(text: string): string {
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  return (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ';' : ',';
}
