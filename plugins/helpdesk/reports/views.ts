import { t } from 'elysia';
import { MAX_REPORT_DAYS } from '../../../core/helpdesk/reports/range.ts';
import { REPORT_FORMATS, REPORT_GROUPINGS } from '../../../core/helpdesk/reports/reports.ts';

/** HTTP models of the reports (core/helpdesk/reports/reports.ts defines every figure). */

/** Strings, checked by parseReportQuery so that every broken rule is reported in one answer. */
export const ReportQueryView = t.Object(
  {
    from: t.Optional(t.String({ description: 'Required. First UTC day of the range, YYYY-MM-DD (from its first millisecond)', examples: ['2025-01-01'] })),
    to: t.Optional(t.String({ description: `Required. Last UTC day of the range, YYYY-MM-DD, included (to 23:59:59.999); at most ${MAX_REPORT_DAYS} days from \`from\``, examples: ['2025-01-31'] })),
    groupBy: t.Optional(t.String({ description: `One of ${REPORT_GROUPINGS.join(', ')}; left out: totals only`, examples: ['agent'] })),
    inboxId: t.Optional(t.String({ description: 'Only conversations of this inbox (404 when unknown)' })),
    format: t.Optional(t.String({ description: '`json` (default) or `csv`; wins over `Accept`', examples: ['csv'] })),
  },
  { additionalProperties: true },
);

/**
 * The query as OpenAPI parameters: `from` and `to` marked required (the validator leaves them
 * optional so that parseReportQuery reports every problem of a query at once).
 */
export const reportQueryParameters = Object.entries(ReportQueryView.properties).map(([name, schema]) => {
  const { description, examples, ...rest } = schema as { description?: string; examples?: unknown[] };
  const values = name === 'groupBy' ? REPORT_GROUPINGS : name === 'format' ? REPORT_FORMATS : undefined;
  return { name, in: 'query', required: name === 'from' || name === 'to', description: description?.replace(/^Required\. /, ''), schema: { ...rest, ...(values && { enum: values }) }, ...(examples && { example: examples[0] }) };
});

const Seconds = (what: string) => t.Nullable(t.Number({ description: `${what} in seconds, to the millisecond; null with no sample` }));

const Duration = (what: string) =>
  t.Object({
    count: t.Integer({ description: `Samples: ${what}` }),
    medianSeconds: Seconds('Median'),
    averageSeconds: Seconds('Mean'),
  });

export const MetricsView = t.Object({
  conversationsOpened: t.Integer({ description: 'Conversations created in the bucket' }),
  conversationsResolved: t.Integer({ description: 'Conversations resolved in the bucket (each once)' }),
  firstResponseTime: Duration('conversations whose first response fell in the bucket'),
  resolutionTime: Duration('conversations resolved in the bucket (creation to their last resolve in it)'),
  csat: t.Object({
    responses: t.Integer({ description: 'Survey answers submitted in the bucket' }),
    averageRating: t.Nullable(t.Number({ description: 'Mean rating 1–5, 2 decimals' })),
    satisfiedPercent: t.Nullable(t.Number({ description: 'Share of answers rated 4 or 5, percent, 2 decimals' })),
  }),
  slaBreaches: t.Object({
    total: t.Integer({ description: 'Missed SLA rounds whose due time falls in the bucket' }),
    first_response: t.Integer(),
    next_response: t.Integer(),
    resolution: t.Integer(),
  }),
});

const Header = {
  from: t.String({ description: 'YYYY-MM-DD' }),
  to: t.String({ description: 'YYYY-MM-DD, included' }),
  groupBy: t.Nullable(t.String({ description: REPORT_GROUPINGS.join(', ') })),
  inboxId: t.Nullable(t.String({ format: 'uuid' })),
};

const Group = {
  key: t.Nullable(t.String({ description: 'Inbox, user or team id; a label’s lower-cased text; null: no agent, team or label' })),
  name: t.Nullable(t.String({ description: 'Inbox, member, team or label name' })),
};

export const DayMetricsView = t.Object({ day: t.String({ description: 'UTC day YYYY-MM-DD' }), metrics: MetricsView });

export const SummaryView = t.Object({
  ...Header,
  totals: MetricsView,
  groups: t.Array(t.Object({ ...Group, metrics: MetricsView }), { description: 'One per group met in the range (empty without groupBy); null key last' }),
});

export const TimeseriesView = t.Object({
  ...Header,
  buckets: t.Array(DayMetricsView, { description: 'Every day from `from` to `to`, in order' }),
  groups: t.Array(t.Object({ ...Group, buckets: t.Array(DayMetricsView) }), { description: 'Each group with every day of the range' }),
});
