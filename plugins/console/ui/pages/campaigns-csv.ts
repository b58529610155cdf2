/**
 * A campaign's audience from a CSV, read in the browser before anything is sent: the same
 * parsing and phone rules the service applies (core/campaigns/audience.ts), so each row's problem
 * shows next to its line number while the person can still fix the file. Rows with a problem are
 * left out of `audience.recipients`; repeated numbers are kept once, as the service would.
 */
import { normalizePhone, parseCsv, type Placeholder } from '../../../../core/campaigns/audience.ts';

export interface CsvRecipient {
  phone: string;
  variables: Record<string, string>;
}

export interface RowProblem {
  /** The line of the file, counting the header as line 1. */
  line: number;
  problem: string;
}

export interface ParsedAudience {
  /** Column names other than the phone column: the variables a message can use. */
  variables: string[];
  phoneColumn: string | null;
  recipients: CsvRecipient[];
  problems: RowProblem[];
  duplicates: number;
  /** Why the file cannot be used at all (no header, no rows). */
  unusable: string | null;
}

/** Headers taken for the phone column, as the service takes them; else the first column. */
const PHONE_COLUMNS = ['phone', 'number', 'phone_number', 'phonenumber', 'to', 'whatsapp', 'mobile'];

export function parseAudience(text: string, placeholders: readonly Placeholder[]): ParsedAudience {
  const empty: ParsedAudience = { variables: [], phoneColumn: null, recipients: [], problems: [], duplicates: 0, unusable: null };
  const rows = parseCsv(text.replace(/^\uFEFF/, ''))
    .map((cells, index) => ({ cells, line: index + 1 }))
    .filter((row) => row.cells.some((cell) => cell.trim() !== ''));
  if (rows.length === 0) return { ...empty, unusable: 'Paste or upload a CSV: a header row (phone, then variable names), one recipient per line.' };
  const header = rows[0]!.cells.map((h) => h.trim());
  const phoneIndex = Math.max(0, header.findIndex((h) => PHONE_COLUMNS.includes(h.toLowerCase())));
  const variables = header.filter((name, i) => i !== phoneIndex && name !== '');
  if (rows.length < 2) return { ...empty, variables, phoneColumn: header[phoneIndex] ?? null, unusable: 'The CSV has a header row but no recipients.' };

  const seen = new Set<string>();
  const recipients: CsvRecipient[] = [];
  const problems: RowProblem[] = [];
  let duplicates = 0;
  for (const { cells, line } of rows.slice(1)) {
    const raw = (cells[phoneIndex] ?? '').trim();
    const phone = normalizePhone(raw);
    if (phone === null) {
      problems.push({ line, problem: raw ? `“${raw}” is not a phone number in international format (country code first)` : 'no phone number' });
      continue;
    }
    if (seen.has(phone)) {
      duplicates += 1;
      continue;
    }
    seen.add(phone);
    const values: Record<string, string> = {};
    header.forEach((name, i) => {
      if (i !== phoneIndex && name) values[name] = (cells[i] ?? '').trim();
    });
    const missing = placeholders.filter((p) => p.fallback === null && !values[p.name]).map((p) => p.name);
    if (missing.length > 0) {
      problems.push({ line, problem: `no value for ${missing.map((m) => `“${m}”`).join(', ')}, which the message uses without a fallback` });
      continue;
    }
    recipients.push({ phone, variables: values });
  }
  return { variables, phoneColumn: header[phoneIndex] ?? null, recipients, problems, duplicates, unusable: null };
}
