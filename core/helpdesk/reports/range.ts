/**
 * Report ranges and their day buckets (spec 2.1: "Report ranges: inclusive on both ends. Day
 * buckets are UTC days"). A range names two UTC days, `from` and `to`; it covers every instant
 * from the first millisecond of `from` to the last millisecond of `to`, and each of its instants
 * falls in exactly one bucket, the UTC day it belongs to. Pure functions: no clock, no zone.
 */

export const DAY_MS = 86_400_000;
/** A year and a day: a leap year's whole range fits, and a report stays one query's worth. */
export const MAX_REPORT_DAYS = 366;

const DAY_SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface ReportRange {
  from: string;
  to: string;
  /** The first millisecond of `from` (UTC). */
  start: Date;
  /** The last millisecond of `to` (UTC): 23:59:59.999. */
  end: Date;
}

/** The UTC day (`YYYY-MM-DD`) an instant belongs to. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The first millisecond of a UTC day, or undefined when `day` is not a real `YYYY-MM-DD` date. */
export function dayStart(day: string): Date | undefined {
  const parts = DAY_SHAPE.exec(day);
  if (!parts) return undefined;
  const start = new Date(Date.UTC(Number(parts[1]), Number(parts[2]) - 1, Number(parts[3])));
  // Date.UTC rolls 2024-02-30 over to March; a real date reads back unchanged. Years below 100
  // are shifted by Date.UTC, so they fail this check too (and are no report's business).
  return utcDay(start) === day ? start : undefined;
}

/** The last millisecond of a UTC day. */
export function dayEnd(day: string): Date | undefined {
  const start = dayStart(day);
  return start && new Date(start.getTime() + DAY_MS - 1);
}

/**
 * The range of two query values, or the problems with them (one entry per broken rule, as a
 * 400 lists them): both required, real dates, `from` not after `to`, at most MAX_REPORT_DAYS days.
 */
export function parseReportRange(from: string | undefined, to: string | undefined): { range: ReportRange } | { problems: string[] } {
  const problems: string[] = [];
  const start = readDay('from', from, problems);
  const last = readDay('to', to, problems);
  if (start && last) {
    if (start.getTime() > last.getTime()) problems.push('query.from must not be after query.to');
    else if (dayCount(from!, to!) > MAX_REPORT_DAYS) problems.push(`the range from query.from to query.to must be at most ${MAX_REPORT_DAYS} days (both ends count)`);
  }
  if (problems.length > 0 || !start || !last) return { problems };
  return { range: { from: from!, to: to!, start, end: new Date(last.getTime() + DAY_MS - 1) } };
}

function readDay(name: 'from' | 'to', value: string | undefined, problems: string[]): Date | undefined {
  if (value === undefined || value === '') {
    problems.push(`query.${name} is required: a UTC day YYYY-MM-DD`);
    return undefined;
  }
  const start = dayStart(value);
  if (!start) problems.push(`query.${name} must be a UTC day YYYY-MM-DD (a real date)`);
  return start;
}

/** How many days a range of two valid days spans, both ends included. */
export function dayCount(from: string, to: string): number {
  return Math.round((dayStart(to)!.getTime() - dayStart(from)!.getTime()) / DAY_MS) + 1;
}

/** Every day of the range, `from` to `to` inclusive, in order: the timeseries' buckets. */
export function rangeDays(range: Pick<ReportRange, 'from' | 'to'>): string[] {
  const first = dayStart(range.from)!.getTime();
  return Array.from({ length: dayCount(range.from, range.to) }, (_, i) => utcDay(new Date(first + i * DAY_MS)));
}

export function inRange(range: Pick<ReportRange, 'start' | 'end'>, at: Date): boolean {
  return at.getTime() >= range.start.getTime() && at.getTime() <= range.end.getTime();
}

/** The day bucket of an instant, or undefined when the range does not cover it. */
export function dayBucket(range: Pick<ReportRange, 'start' | 'end'>, at: Date): string | undefined {
  return inRange(range, at) ? utcDay(at) : undefined;
}

/** Median of the values (the mean of the two middle ones for an even count); null when empty. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Arithmetic mean; null when empty. */
export function average(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/** Rounded half away from zero to `digits` decimals (stable JSON and CSV numbers). */
export function rounded(value: number | null, digits: number): number | null {
  if (value === null) return null;
  const factor = 10 ** digits;
  return (Math.sign(value) * Math.round(Math.abs(value) * factor)) / factor;
}
