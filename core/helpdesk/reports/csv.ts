import type { ReportGroup, ReportMetrics, SummaryReport, TimeseriesReport } from './reports.ts';
import type { DurationStats } from './aggregation.ts';
import { SLA_TARGETS } from '../sla/sla.ts';

/**
 * Reports as CSV (RFC 4180): a header row, one row per line, CRLF line ends, a field quoted
 * when it holds a comma, a double quote, CR or LF (quotes doubled inside). Numbers are written
 * as JSON writes them; a missing figure (a median of nothing) is an empty field.
 *
 * Names come from people (inbox, team, label and member names). A spreadsheet would run a cell
 * that starts with `=`, `+`, `-`, `@`, tab or CR as a formula, so such a name is written with a
 * leading `'` (OWASP's advice for CSV injection); ids, days and numbers never need it.
 */

type Cell = string | number | null;

/** One field, quoted only when it must be. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The rows as a CSV document, every line (the last too) ended by CRLF. */
export function renderCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
}

const FORMULA_START = /^[=+\-@\t\r]/;

/** A name as a spreadsheet must not run it. */
export function inertText(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

const cell = (value: Cell): string => (value === null ? '' : String(value));

type MetricColumn = readonly [string, (m: ReportMetrics) => number | null];

/** A duration's columns: how many were measured, their median and their average. */
const durationColumns = (prefix: string, read: (m: ReportMetrics) => DurationStats): MetricColumn[] => [
  [`${prefix}_count`, (m) => read(m).count],
  [`${prefix}_median_seconds`, (m) => read(m).medianSeconds],
  [`${prefix}_average_seconds`, (m) => read(m).averageSeconds],
];

/** The metric columns, in order, with how each is read. */
export const METRIC_COLUMNS: readonly MetricColumn[] = [
  ['conversations_opened', (m) => m.conversationsOpened],
  ['conversations_resolved', (m) => m.conversationsResolved],
  ...durationColumns('first_response', (m) => m.firstResponseTime),
  ...durationColumns('resolution', (m) => m.resolutionTime),
  ['csat_responses', (m) => m.csat.responses],
  ['csat_average_rating', (m) => m.csat.averageRating],
  ['csat_satisfied_percent', (m) => m.csat.satisfiedPercent],
  ['sla_breaches', (m) => m.slaBreaches.total],
  ...SLA_TARGETS.map((target): MetricColumn => [`sla_breaches_${target}`, (m) => m.slaBreaches[target]]),
];

const metricCells = (m: ReportMetrics) => METRIC_COLUMNS.map(([, read]) => cell(read(m)));
const METRIC_NAMES = METRIC_COLUMNS.map(([name]) => name);

/** `scope` is `total`, or the grouping (`inbox`, `agent`, `team`, `label`); an empty key is the group of none. */
const groupCells = (scope: string, group?: ReportGroup) => [scope, group?.key ?? '', inertText(group?.name ?? '')];

/** The summary: the totals row, then one row per group. */
export function summaryCsv(report: SummaryReport): string {
  const range = [report.from, report.to];
  return renderCsv([
    ['from', 'to', 'scope', 'group_key', 'group_name', ...METRIC_NAMES],
    [...range, ...groupCells('total'), ...metricCells(report.totals)],
    ...report.groups.map((g) => [...range, ...groupCells(report.groupBy!, g), ...metricCells(g.metrics)]),
  ]);
}

/** The timeseries: the totals of every day, then every day of each group. */
export function timeseriesCsv(report: TimeseriesReport): string {
  return renderCsv([
    ['day', 'scope', 'group_key', 'group_name', ...METRIC_NAMES],
    ...report.buckets.map((b) => [b.day, ...groupCells('total'), ...metricCells(b.metrics)]),
    ...report.groups.flatMap((g) => g.buckets.map((b) => [b.day, ...groupCells(report.groupBy!, g), ...metricCells(b.metrics)])),
  ]);
}

/** A file name for `content-disposition`: only ASCII letters, digits, dots and dashes. */
export function reportFileName(kind: 'summary' | 'timeseries', report: { from: string; to: string; groupBy: string | null }): string {
  return `helpdesk-${kind}-${report.from}-to-${report.to}${report.groupBy ? `-by-${report.groupBy}` : ''}.csv`;
}
