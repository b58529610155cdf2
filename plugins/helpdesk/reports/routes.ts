import type { DocumentDecoration, Static, TSchema } from 'elysia';
import type { Actor } from '../../../core/identity/identity.ts';
import { MAX_REPORT_DAYS } from '../../../core/helpdesk/reports/range.ts';
import { parseReportQuery, REPORT_GROUPINGS, summaryReport, timeseriesReport, type ReportQuery, type ReportStores } from '../../../core/helpdesk/reports/reports.ts';
import { METRIC_COLUMNS, reportFileName, summaryCsv, timeseriesCsv } from '../../../core/helpdesk/reports/csv.ts';
import { authenticatedRoutes, authErrors, StandardError } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { RouteScope } from '../../kernel/http.ts';
import { reportStores } from './store.ts';
import { reportQueryParameters, ReportQueryView, SummaryView, TimeseriesView } from './views.ts';

/**
 * Reports are workspace statistics (spec 2.7 `stats:read`, "Read workspace statistics") about
 * the helpdesk (`helpdesk:read`, "Read helpdesk conversations…"): either scope opens them. They
 * hold figures and names, never customers' words (CSAT comments stay behind `helpdesk:read`).
 */
export const REPORT_ROUTE_SCOPES: RouteScope[] = [
  { method: 'GET', path: '/v3/helpdesk/reports/summary', scopes: ['stats:read', 'helpdesk:read'] },
  { method: 'GET', path: '/v3/helpdesk/reports/timeseries', scopes: ['stats:read', 'helpdesk:read'] },
];

/**
 * CSV when `format=csv`, or when `format` is left out and `Accept` names `text/csv` (without
 * `q=0`); JSON otherwise. `format` wins, so a link can ask for a download whatever a browser sends.
 */
function wantsCsv(format: string, formatGiven: boolean, accept: string | undefined): boolean {
  if (formatGiven) return format === 'csv';
  return (accept ?? '')
    .split(',')
    .map((part) => part.trim().toLowerCase().split(';').map((p) => p.trim()))
    .some(([type, ...params]) => type === 'text/csv' && !params.some((p) => /^q=0(\.0{0,3})?$/.test(p)));
}

/**
 * The CSV answer. Elysia sends a returned Response as it is (no response validation); its types
 * only know the JSON model of the route, hence the cast to the report's type.
 */
function csvResponse<T>(body: string, fileName: string): T {
  const response = new Response(body, {
    headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${fileName}"`, vary: 'Accept' },
  });
  return response as unknown as T;
}

const METRICS_TEXT =
  'Metrics per bucket (UTC days; `from` and `to` both included, spec 2.1): ' +
  '`conversationsOpened`: conversations created in the bucket (their `helpdesk.conversation.created` event; a history sync creates none). ' +
  '`conversationsResolved`: conversations whose status changed to RESOLVED in the bucket, each once per bucket. ' +
  '`firstResponseTime`: seconds from a conversation’s creation to its first outgoing, non-private message written by a person or an agent bot (automatic texts such as the CSAT link do not count), in the bucket of that reply, once per conversation; median (mean of the two middle values for an even count) and mean, to the millisecond. ' +
  '`resolutionTime`: seconds from creation to the conversation’s last resolve in the bucket. ' +
  '`csat`: answers submitted in the bucket, their mean rating (2 decimals) and the share rated 4 or 5, in percent (2 decimals). ' +
  '`slaBreaches`: missed SLA rounds whose due time (when the promise was broken) falls in the bucket, in total and per target (`first_response`, `next_response`, `resolution`). ' +
  'Grouping (`groupBy`): `inbox`; `agent` and `team`: who held the conversation when the metric happened (a resolve, a reply, a breach; replayed from assignment changes), the current holder for `conversationsOpened`, the holder recorded with the survey for `csat`; `label`: each of the conversation’s labels (a conversation counts in every one of its labels). A group `key` of null gathers conversations with no agent, team or label. Deleted conversations leave the reports. Only groups with something in the range are listed.';

const csvText = (firstColumns: string) =>
  `CSV (\`format=csv\`, or \`Accept: text/csv\` with no \`format\`): \`text/csv; charset=utf-8\`, \`content-disposition: attachment\`, RFC 4180 (CRLF, quoted where needed), a header row ${firstColumns}, ${METRIC_COLUMNS.map(([name]) => `\`${name}\``).join(', ')}. ` +
  '`scope` is `total` or the grouping; an empty `group_key` is the group of none; an empty figure is a statistic of nothing. Names starting with `=`, `+`, `-`, `@` are written with a leading `\'` so spreadsheets do not run them.';

const ERROR_TEXT: Record<string, string> = {
  '400': 'Invalid query: `message` lists every problem',
  '401': 'No valid credential',
  '403': 'Not an Owner, Admin or Manager; or an OAuth token with neither stats:read nor helpdesk:read',
  '404': 'inboxId names no inbox of the workspace',
};

const responses = (view: object, firstColumns: string) =>
  ({
    '200': {
      description: 'The report',
      content: { 'application/json': { schema: view }, 'text/csv': { schema: { type: 'string', description: csvText(firstColumns) } } },
    },
    ...Object.fromEntries(Object.entries(authErrors).map(([status, schema]) => [status, { description: ERROR_TEXT[status], content: { 'application/json': { schema } } }])),
  }) as unknown as DocumentDecoration['responses'];

/** `GET /v3/helpdesk/reports/summary` and `/timeseries` (roles matrix: "Helpdesk: reports"). */
export function reportRoutes(ctx: PluginContext) {
  const common = `Owners, Admins and Managers (Agents 403); any plan. Range: \`from\` and \`to\` are UTC days (YYYY-MM-DD), both included, at most ${MAX_REPORT_DAYS} days; \`groupBy\` one of ${REPORT_GROUPINGS.join(', ')}; \`inboxId\` limits everything to one inbox. `;

  /** One report's answer: JSON, or its CSV download when asked (`wantsCsv`). */
  const answer =
    <R extends { from: string; to: string; groupBy: string | null }>(
      kind: 'summary' | 'timeseries',
      run: (stores: ReportStores, actor: Actor, query: ReportQuery) => Promise<R>,
      csv: (report: R) => string,
    ) =>
    async ({ actor, query, headers, set }: ReportRequest) => {
      const parsed = parseReportQuery(actor, query);
      const report = await run(ctx.storage.read(reportStores), actor, parsed);
      if (wantsCsv(parsed.format, Boolean(query.format), headers.accept)) return csvResponse<R>(csv(report), reportFileName(kind, report));
      set.headers.vary = 'Accept';
      return report;
    };
  /** One report's options: its view as JSON, its CSV's first columns, the shared query and texts. */
  const documented = <V extends TSchema>(view: V, summary: string, csvColumns: string) => ({
    query: ReportQueryView,
    response: { ...authErrors, 404: StandardError, 200: view },
    detail: {
      summary,
      description: `${common}${METRICS_TEXT}`,
      parameters: reportQueryParameters as DocumentDecoration['parameters'],
      responses: responses(view, csvColumns),
    },
  });

  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.reports', prefix: '/v3/helpdesk/reports', tags: ['Helpdesk'], role: 'helpdesk.reports' })
    .get(
      '/summary',
      answer('summary', summaryReport, summaryCsv),
      documented(
        SummaryView,
        'Helpdesk report over a range of UTC days: totals, and per inbox, agent, team or label',
        '`from`, `to`, `scope`, `group_key`, `group_name` (a totals row, then one row per group)',
      ),
    )
    .get(
      '/timeseries',
      answer('timeseries', timeseriesReport, timeseriesCsv),
      documented(
        TimeseriesView,
        'Helpdesk report per UTC day: every day of the range present, empty days too; per group as well',
        '`day`, `scope`, `group_key`, `group_name` (the totals of every day, then every day of each group)',
      ),
    );
}

type ReportRequest = {
  actor: Actor;
  query: Static<typeof ReportQueryView>;
  headers: Record<string, string | undefined>;
  set: { headers: Record<string, string | number> };
};
