import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { badRequest } from '../../shared/errors.ts';
import { inboxNotFound, type InboxStore } from '../inboxes/inboxes.ts';
import { aggregate, metricsOf, REPORT_GROUPINGS, type ReportFacts, type ReportGrouping, type ReportMetrics, type Tally } from './aggregation.ts';
import { dayBucket, parseReportRange, rangeDays, type ReportRange } from './range.ts';
import { isUuid } from '../../shared/ids.ts';

/** The facts, metrics and groupings are defined beside their arithmetic. */
export * from './aggregation.ts';

/**
 * Helpdesk reports (issue 7 item 5): what happened to conversations in a range of UTC days
 * (range.ts), in total, per UTC day, and per inbox, agent, team or label.
 *
 * The store hands over facts — one row per thing that happened in the range — and this module
 * buckets and aggregates them. Metrics, per bucket (the whole range, or one day):
 * - opened: conversations whose `helpdesk.conversation.created` event falls in the bucket;
 * - resolved: conversations with a `helpdesk.conversation.status_changed` to RESOLVED in the
 *   bucket, each counted once per bucket; resolution time runs from the conversation's creation
 *   to its last resolve in the bucket;
 * - first response time: from the conversation's creation to its first outgoing, non-private
 *   message written by a person or an agent bot (automatic texts, notes and activity lines do
 *   not count), counted in the bucket of that reply — once per conversation, ever;
 * - CSAT: answers submitted in the bucket; satisfied = rating 4 or 5;
 * - SLA breaches: missed SLA rounds whose due time (when the promise was broken) is in the
 *   bucket, by target (sla.ts).
 *
 * Grouping. Inbox: the conversation's. Label: each of the conversation's current labels (a
 * conversation with two labels counts in both; none: the `null` group). Agent and team: who held
 * the conversation when the metric happened (the assignment history replayed from
 * `assignee_changed` events), except that opened counts under the current holder (a conversation
 * is always created before anyone is assigned) and CSAT under the holder the survey recorded at
 * resolve. Nobody (or only a bot) holding it: the `null` group.
 */

export const REPORT_FORMATS = ['json', 'csv'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface ReportGroup {
  /** Inbox, user or team id; a label's lower-cased text; null: none. */
  key: string | null;
  name: string | null;
}

export interface SummaryReport {
  from: string;
  to: string;
  groupBy: ReportGrouping | null;
  inboxId: string | null;
  totals: ReportMetrics;
  groups: (ReportGroup & { metrics: ReportMetrics })[];
}

export interface DayMetrics {
  day: string;
  metrics: ReportMetrics;
}

export interface TimeseriesReport extends Omit<SummaryReport, 'totals' | 'groups'> {
  buckets: DayMetrics[];
  groups: (ReportGroup & { buckets: DayMetrics[] })[];
}

export interface ReportStore {
  facts(workspaceId: string, window: { start: Date; end: Date; inboxId: string | null; holders: boolean }): Promise<ReportFacts>;
  /** Display names of group keys (inbox, user, team names; labels as the catalogue spells them). */
  names(workspaceId: string, groupBy: ReportGrouping, keys: string[]): Promise<Map<string, string>>;
}

export interface ReportStores {
  reports: ReportStore;
  inboxes: Pick<InboxStore, 'get'>;
}

export interface ReportQuery {
  range: ReportRange;
  groupBy: ReportGrouping | null;
  inboxId: string | null;
  format: ReportFormat;
}


/**
 * The query, checked, once the caller may read reports (an Agent gets 403 whatever they ask):
 * every broken rule in one 400.
 */
export function parseReportQuery(actor: Actor, query: { from?: string; to?: string; groupBy?: string; inboxId?: string; format?: string }): ReportQuery {
  authorize(actor.roles, 'helpdesk.reports', 'read');
  const parsed = parseReportRange(query.from, query.to);
  const problems = 'problems' in parsed ? [...parsed.problems] : [];
  const groupBy = query.groupBy === undefined || query.groupBy === '' ? null : query.groupBy;
  if (groupBy !== null && !(REPORT_GROUPINGS as readonly string[]).includes(groupBy)) problems.push(`query.groupBy must be one of ${REPORT_GROUPINGS.join(', ')}`);
  const inboxId = query.inboxId === undefined || query.inboxId === '' ? null : query.inboxId;
  if (inboxId !== null && !isUuid(inboxId)) problems.push('query.inboxId must be an inbox id');
  const format = query.format === undefined || query.format === '' ? 'json' : query.format;
  if (!(REPORT_FORMATS as readonly string[]).includes(format)) problems.push(`query.format must be one of ${REPORT_FORMATS.join(', ')}`);
  if (problems.length > 0 || !('range' in parsed)) throw badRequest(problems);
  return { range: parsed.range, groupBy: groupBy as ReportGrouping | null, inboxId: inboxId?.toLowerCase() ?? null, format: format as ReportFormat };
}

/** Reads need no plan (spec 4.6); the roles matrix row "Helpdesk: reports" decides. */
async function load(stores: ReportStores, actor: Actor, query: ReportQuery): Promise<ReportFacts> {
  authorize(actor.roles, 'helpdesk.reports', 'read');
  if (query.inboxId && !(await stores.inboxes.get(actor.workspaceId, query.inboxId))) throw inboxNotFound();
  const { start, end } = query.range;
  const holders = query.groupBy === 'agent' || query.groupBy === 'team';
  return stores.reports.facts(actor.workspaceId, { start, end, inboxId: query.inboxId, holders });
}

/** The groups met, named (store names first, then a label's first spelling) and ordered: by name, then key; `null` last. */
async function namedGroups<T>(stores: ReportStores, actor: Actor, groupBy: ReportGrouping | null, groups: Map<string | null, T>, spellings: Map<string, string>): Promise<[ReportGroup, T][]> {
  if (!groupBy || groups.size === 0) return [];
  const keys = [...groups.keys()].filter((k): k is string => k !== null);
  const names = keys.length > 0 ? await stores.reports.names(actor.workspaceId, groupBy, keys) : new Map<string, string>();
  const named = [...groups.entries()].map(([key, value]): [ReportGroup, T] => [{ key, name: key === null ? null : (names.get(key) ?? spellings.get(key) ?? null) }, value]);
  return named.sort(([a], [b]) => {
    if (a.key === null || b.key === null) return a.key === null ? (b.key === null ? 0 : 1) : -1;
    return (a.name ?? '').localeCompare(b.name ?? '') || a.key.localeCompare(b.key);
  });
}

/** `GET /v3/helpdesk/reports/summary`: the whole range as one bucket. */
export async function summaryReport(stores: ReportStores, actor: Actor, query: ReportQuery): Promise<SummaryReport> {
  const facts = await load(stores, actor, query);
  const { totals, groups, spellings } = aggregate(facts, query.range, query.groupBy, () => 'all');
  const named = await namedGroups(stores, actor, query.groupBy, groups, spellings);
  return { ...header(query), totals: metricsOf(totals.get('all')), groups: named.map(([group, buckets]) => ({ ...group, metrics: metricsOf(buckets.get('all')) })) };
}

/** `GET /v3/helpdesk/reports/timeseries`: one bucket per UTC day of the range, each present even when empty. */
export async function timeseriesReport(stores: ReportStores, actor: Actor, query: ReportQuery): Promise<TimeseriesReport> {
  const facts = await load(stores, actor, query);
  const days = rangeDays(query.range);
  const { totals, groups, spellings } = aggregate(facts, query.range, query.groupBy, (at) => dayBucket(query.range, at));
  const series = (buckets: Map<string, Tally>) => days.map((day) => ({ day, metrics: metricsOf(buckets.get(day)) }));
  const named = await namedGroups(stores, actor, query.groupBy, groups, spellings);
  return { ...header(query), buckets: series(totals), groups: named.map(([group, buckets]) => ({ ...group, buckets: series(buckets) })) };
}

const header = (query: ReportQuery) => ({ from: query.range.from, to: query.range.to, groupBy: query.groupBy, inboxId: query.inboxId });
