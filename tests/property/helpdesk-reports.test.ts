import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { csvField, inertText, renderCsv, summaryCsv, timeseriesCsv, METRIC_COLUMNS } from '../../core/helpdesk/reports/csv.ts';
import { average, DAY_MS, dayBucket, dayCount, dayEnd, dayStart, MAX_REPORT_DAYS, median, parseReportRange, rangeDays, utcDay, type ReportRange } from '../../core/helpdesk/reports/range.ts';
import { holderAt } from '../../core/helpdesk/reports/aggregation.ts';
import {
  parseReportQuery,
  REPORT_GROUPINGS,
  summaryReport,
  timeseriesReport,
  type HolderChange,
  type ReportFacts,
  type ReportGrouping,
  type ReportStores,
} from '../../core/helpdesk/reports/reports.ts';
import { DomainError } from '../../core/shared/errors.ts';

/**
 * Report bucketing (spec 2.1: "Report ranges: inclusive on both ends. Day buckets are UTC days")
 * against references written from those words: a day is [00:00:00.000, 23:59:59.999] UTC, found
 * by counting whole days from the epoch; a range is every instant from the first millisecond of
 * `from` to the last of `to`. The aggregation is checked against a brute-force count over the
 * facts, and the CSV against a small RFC 4180 parser written here.
 */

const MIN = Date.UTC(1970, 0, 1);
const MAX = Date.UTC(2199, 11, 31);
const day = fc.integer({ min: MIN / DAY_MS, max: MAX / DAY_MS }).map((n) => new Date(n * DAY_MS).toISOString().slice(0, 10));
/** A range of 1 to 366 days. */
const range = fc.tuple(day, fc.integer({ min: 1, max: MAX_REPORT_DAYS })).map(([from, days]): ReportRange => {
  const to = new Date(Date.parse(`${from}T00:00:00.000Z`) + (days - 1) * DAY_MS).toISOString().slice(0, 10);
  const parsed = parseReportRange(from, to);
  if (!('range' in parsed)) throw new Error(`valid range refused: ${from}..${to}`);
  return parsed.range;
});
/** The reference day of an instant: whole days since the epoch. */
const referenceDay = (ms: number) => new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);

describe('UTC days and ranges', () => {
  test('every instant in the range falls in exactly one bucket, its UTC day; instants outside fall in none', () => {
    fc.assert(
      fc.property(range, fc.integer({ min: -3 * DAY_MS, max: 3 * DAY_MS }), fc.double({ min: 0, max: 1, noNaN: true }), (r, outside, position) => {
        const span = r.end.getTime() - r.start.getTime();
        const inside = r.start.getTime() + Math.floor(position * span);
        const days = rangeDays(r);
        for (const at of [inside, r.start.getTime() + outside, r.end.getTime() + outside, r.start.getTime() - 1, r.start.getTime(), r.end.getTime(), r.end.getTime() + 1]) {
          const covered = at >= r.start.getTime() && at <= r.end.getTime();
          const holders = days.filter((d) => at >= dayStart(d)!.getTime() && at <= dayEnd(d)!.getTime());
          expect(holders.length).toBe(covered ? 1 : 0);
          expect(dayBucket(r, new Date(at))).toBe(covered ? referenceDay(at) : undefined);
          if (covered) expect(holders[0]).toBe(referenceDay(at));
        }
      }),
    );
  });

  test('both ends are inclusive: the first millisecond of from and the last of to count, one millisecond beyond either does not', () => {
    fc.assert(
      fc.property(range, (r) => {
        expect(r.start.toISOString()).toBe(`${r.from}T00:00:00.000Z`);
        expect(r.end.toISOString()).toBe(`${r.to}T23:59:59.999Z`);
        expect(dayBucket(r, r.start)).toBe(r.from);
        expect(dayBucket(r, r.end)).toBe(r.to);
        expect(dayBucket(r, new Date(r.start.getTime() - 1))).toBeUndefined();
        expect(dayBucket(r, new Date(r.end.getTime() + 1))).toBeUndefined();
      }),
    );
  });

  test('the buckets are every day from `from` to `to`, consecutive, each once, empty days included', () => {
    fc.assert(
      fc.property(range, (r) => {
        const days = rangeDays(r);
        expect(days.length).toBe(dayCount(r.from, r.to));
        expect(days[0]).toBe(r.from);
        expect(days.at(-1)).toBe(r.to);
        for (let i = 1; i < days.length; i++) expect(dayStart(days[i]!)!.getTime() - dayStart(days[i - 1]!)!.getTime()).toBe(DAY_MS);
        expect(new Set(days).size).toBe(days.length);
        expect((r.end.getTime() + 1 - r.start.getTime()) / DAY_MS).toBe(days.length);
      }),
    );
  });

  test('utcDay is the reference day of any instant, and a day read back is itself', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN, max: MAX }), (ms) => {
        expect(utcDay(new Date(ms))).toBe(referenceDay(ms));
        const d = referenceDay(ms);
        expect(utcDay(dayStart(d)!)).toBe(d);
        expect(utcDay(dayEnd(d)!)).toBe(d);
      }),
    );
  });

  test('a range is accepted exactly when both days are real, from <= to and it spans at most 366 days', () => {
    fc.assert(
      fc.property(day, fc.integer({ min: -5, max: 400 }), (from, offset) => {
        const to = new Date(Date.parse(`${from}T00:00:00Z`) + offset * DAY_MS).toISOString().slice(0, 10);
        const parsed = parseReportRange(from, to);
        const days = offset + 1;
        if (offset < 0) expect(parsed).toEqual({ problems: ['query.from must not be after query.to'] });
        else if (days > MAX_REPORT_DAYS) expect('problems' in parsed).toBe(true);
        else expect('range' in parsed && parsed.range.to).toBe(to);
      }),
    );
    for (const bad of ['2025-02-29', '2025-13-01', '2025-00-10', '2025-1-1', '2025-01-01T00:00:00Z', 'today', '0099-01-01']) {
      expect(parseReportRange(bad, '2025-03-01')).toEqual({ problems: ['query.from must be a UTC day YYYY-MM-DD (a real date)'] });
    }
    expect(parseReportRange('2024-02-29', '2024-02-29')).toMatchObject({ range: { from: '2024-02-29', to: '2024-02-29' } });
    expect(parseReportRange(undefined, '')).toEqual({ problems: ['query.from is required: a UTC day YYYY-MM-DD', 'query.to is required: a UTC day YYYY-MM-DD'] });
  });
});

describe('median and average', () => {
  test('match a sort-based reference, whatever the order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 10 ** 9 }), { maxLength: 50 }), (values) => {
        const sorted = [...values].sort((a, b) => a - b);
        const n = sorted.length;
        const expectedMedian = n === 0 ? null : n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
        expect(median(values)).toBe(expectedMedian!);
        expect(median([...values].reverse())).toBe(expectedMedian!);
        if (n === 0) expect(average(values)).toBeNull();
        else expect(average(values)!).toBeCloseTo(sorted.reduce((a, b) => a + b, 0) / n, 6);
      }),
    );
  });
});

describe('who held a conversation', () => {
  test('replaying the changes gives the holder of a reference timeline at any instant', () => {
    const person = fc.constantFrom(null, 'u1', 'u2', 'u3');
    fc.assert(
      fc.property(person, fc.array(fc.tuple(fc.integer({ min: 1, max: 1000 }), person, fc.constantFrom(null, 't1', 't2')), { maxLength: 8 }), fc.integer({ min: 0, max: 10_000 }), (initial, steps, probe) => {
        // The reference: a list of (from instant, holder) intervals.
        let at = 0;
        let holder = { userId: initial, teamId: null as string | null };
        const timeline = [{ at: -Infinity, ...holder }];
        const changes: HolderChange[] = [];
        for (const [gap, userId, teamId] of steps) {
          at += gap;
          changes.push({ conversationId: 'c', at: new Date(at), fromUserId: holder.userId, toUserId: userId, fromTeamId: holder.teamId, toTeamId: teamId });
          holder = { userId, teamId };
          timeline.push({ at, ...holder });
        }
        const expected = timeline.filter((t) => t.at <= probe).at(-1)!;
        expect(holderAt(changes, new Date(probe), { assigneeUserId: holder.userId, teamId: holder.teamId })).toEqual({ userId: expected.userId, teamId: expected.teamId });
      }),
    );
  });
});

/** Random facts around a range (after every conversation's creation, as the store guarantees), for conversations of two inboxes, three holders and three labels. */
const OWNER = { userId: 'owner', workspaceId: 'w', roles: ['OWNER' as const] };
const facts = (r: ReportRange): fc.Arbitrary<ReportFacts> => {
  // Day edges are where an off-by-one lives: half of the instants are a millisecond either side of midnight.
  const edge = fc.tuple(fc.integer({ min: -1, max: rangeDays(r).length + 1 }), fc.constantFrom(-1, 0)).map(([d, ms]) => r.start.getTime() + d * DAY_MS + ms);
  const instant = fc.oneof(fc.integer({ min: r.start.getTime() - 2 * DAY_MS, max: r.end.getTime() + 2 * DAY_MS }), edge).map((ms) => new Date(ms));
  const conversation = fc.record({
    inboxId: fc.constantFrom('i1', 'i2'),
    assigneeUserId: fc.constantFrom(null, 'u1', 'u2'),
    teamId: fc.constantFrom(null, 't1'),
    labels: fc.subarray(['Billing', 'vip', 'Refund']),
  });
  return fc.array(conversation, { minLength: 1, maxLength: 6 }).chain((convs) => {
    const ids = convs.map((_, i) => `c${i}`);
    const moment = fc.record({ conversationId: fc.constantFrom(...ids), at: instant });
    return fc.record({
      conversations: fc.constant(convs.map((c, i) => ({ ...c, id: ids[i]!, createdAt: new Date(r.start.getTime() - 3 * DAY_MS + i * 997) }))),
      opened: fc.array(moment, { maxLength: 8 }),
      resolved: fc.array(moment, { maxLength: 8 }),
      firstReplies: fc.array(moment, { maxLength: 8 }),
      csat: fc.array(fc.record({ conversationId: fc.constantFrom(...ids), at: instant, rating: fc.integer({ min: 1, max: 5 }), inboxId: fc.constant('i1'), assigneeUserId: fc.constantFrom(null, 'u1'), teamId: fc.constantFrom(null, 't1') }), { maxLength: 6 }),
      slaBreaches: fc.array(fc.record({ conversationId: fc.constantFrom(...ids), at: instant, target: fc.constantFrom('first_response', 'next_response', 'resolution') }), { maxLength: 6 }),
      holderChanges: fc.constant([]),
    });
  });
};
const shortRange = fc.tuple(day, fc.integer({ min: 1, max: 5 })).map(([from, days]) => {
  const parsed = parseReportRange(from, new Date(Date.parse(`${from}T00:00:00Z`) + (days - 1) * DAY_MS).toISOString().slice(0, 10));
  return (parsed as { range: ReportRange }).range;
});
const storesOf = (f: ReportFacts): ReportStores => ({
  inboxes: { get: async () => undefined },
  reports: { facts: async () => f, names: async (_w, _g, keys) => new Map(keys.map((k) => [k, `name of ${k}`])) },
});
const query = (r: ReportRange, groupBy: ReportGrouping | null) => parseReportQuery(OWNER, { from: r.from, to: r.to, ...(groupBy && { groupBy }) });

describe('aggregation against a brute-force count', () => {
  test('each day counts exactly the facts of that UTC day; the summary counts those of the whole range; every day is present', async () => {
    await fc.assert(
      fc.asyncProperty(shortRange.chain((r) => fc.tuple(fc.constant(r), facts(r))), async ([r, f]) => {
        const series = await timeseriesReport(storesOf(f), OWNER, query(r, null));
        const summary = await summaryReport(storesOf(f), OWNER, query(r, null));
        expect(series.buckets.map((b) => b.day)).toEqual(rangeDays(r));
        const on = (d: string | null) => (m: { at: Date }) => (d === null ? m.at >= r.start && m.at <= r.end : referenceDay(m.at.getTime()) === d && m.at >= r.start && m.at <= r.end);
        const distinct = (list: { conversationId: string }[]) => new Set(list.map((m) => m.conversationId)).size;
        for (const [d, metrics] of [...series.buckets.map((b) => [b.day, b.metrics] as const), [null, summary.totals] as const]) {
          expect(metrics.conversationsOpened).toBe(f.opened.filter(on(d)).length);
          expect(metrics.conversationsResolved).toBe(distinct(f.resolved.filter(on(d))));
          expect(metrics.resolutionTime.count).toBe(metrics.conversationsResolved);
          // Resolution time: from creation to the conversation's last resolve in the bucket.
          const last = new Map<string, number>();
          for (const m of f.resolved.filter(on(d))) last.set(m.conversationId, Math.max(last.get(m.conversationId) ?? -Infinity, m.at.getTime()));
          const created = (id: string) => f.conversations.find((c) => c.id === id)!.createdAt.getTime();
          const seconds = (ms: number[]) => {
            const sorted = [...ms].sort((a, b) => a - b);
            const n = sorted.length;
            if (n === 0) return { median: null, average: null };
            const mid = n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
            return { median: Math.round(mid) / 1000, average: Math.round(sorted.reduce((a, b) => a + b, 0) / n) / 1000 };
          };
          const resolution = seconds([...last].map(([id, at]) => at - created(id)));
          expect([metrics.resolutionTime.medianSeconds, metrics.resolutionTime.averageSeconds]).toEqual([resolution.median, resolution.average]);
          const firstResponse = seconds(f.firstReplies.filter(on(d)).map((m) => m.at.getTime() - created(m.conversationId)));
          expect([metrics.firstResponseTime.medianSeconds, metrics.firstResponseTime.averageSeconds]).toEqual([firstResponse.median, firstResponse.average]);
          expect(metrics.firstResponseTime.count).toBe(f.firstReplies.filter(on(d)).length);
          const ratings = f.csat.filter(on(d)).map((c) => c.rating);
          expect(metrics.csat.responses).toBe(ratings.length);
          expect(metrics.csat.satisfiedPercent).toBe(ratings.length ? Math.round((ratings.filter((x) => x >= 4).length / ratings.length) * 10000) / 100 : null);
          expect(metrics.slaBreaches.total).toBe(f.slaBreaches.filter(on(d)).length);
          expect(metrics.slaBreaches.resolution).toBe(f.slaBreaches.filter(on(d)).filter((b) => b.target === 'resolution').length);
        }
        const sum = (pick: (m: (typeof series.buckets)[number]['metrics']) => number) => series.buckets.reduce((a, b) => a + pick(b.metrics), 0);
        expect(sum((m) => m.conversationsOpened)).toBe(summary.totals.conversationsOpened);
        expect(sum((m) => m.firstResponseTime.count)).toBe(summary.totals.firstResponseTime.count);
        expect(sum((m) => m.csat.responses)).toBe(summary.totals.csat.responses);
        expect(sum((m) => m.slaBreaches.total)).toBe(summary.totals.slaBreaches.total);
      }),
      { numRuns: 200 },
    );
  });

  test('inbox, agent and team groups split the totals exactly; a conversation counts in each of its labels; group series have every day', async () => {
    await fc.assert(
      fc.asyncProperty(shortRange.chain((r) => fc.tuple(fc.constant(r), facts(r), fc.constantFrom(...REPORT_GROUPINGS))), async ([r, f, groupBy]) => {
        const summary = await summaryReport(storesOf(f), OWNER, query(r, groupBy));
        const series = await timeseriesReport(storesOf(f), OWNER, query(r, groupBy));
        const total = (pick: (m: typeof summary.totals) => number) => summary.groups.reduce((a, g) => a + pick(g.metrics), 0);
        const picks = [(m: typeof summary.totals) => m.conversationsOpened, (m: typeof summary.totals) => m.conversationsResolved, (m: typeof summary.totals) => m.firstResponseTime.count, (m: typeof summary.totals) => m.csat.responses, (m: typeof summary.totals) => m.slaBreaches.total];
        for (const pick of picks) {
          if (groupBy === 'label') expect(total(pick)).toBeGreaterThanOrEqual(pick(summary.totals));
          else expect(total(pick)).toBe(pick(summary.totals));
        }
        if (groupBy === 'label') {
          const inLabel = (key: string | null) => f.opened.filter((m) => m.at >= r.start && m.at <= r.end).filter((m) => {
            const labels = f.conversations.find((c) => c.id === m.conversationId)!.labels.map((l) => l.toLowerCase());
            return key === null ? labels.length === 0 : labels.includes(key);
          }).length;
          for (const g of summary.groups) expect(g.metrics.conversationsOpened).toBe(inLabel(g.key));
        }
        for (const g of series.groups) expect(g.buckets.map((b) => b.day)).toEqual(rangeDays(r));
        expect(series.groups.map((g) => g.key)).toEqual(summary.groups.map((g) => g.key));
        // The group of none comes last; the others carry their names.
        const nullAt = summary.groups.findIndex((g) => g.key === null);
        if (nullAt >= 0) expect(nullAt).toBe(summary.groups.length - 1);
        for (const g of summary.groups) if (g.key !== null) expect(g.name).toBe(`name of ${g.key}`);
      }),
      { numRuns: 200 },
    );
  });

  test('an Agent may not read reports; bad queries list every problem', () => {
    const agent = { userId: 'a', workspaceId: 'w', roles: ['AGENT' as const] };
    expect(() => parseReportQuery(agent, { from: '2025-01-01', to: '2025-01-02' })).toThrow(DomainError);
    try {
      parseReportQuery(OWNER, { from: '2025-02-30', to: '2025-01-01', groupBy: 'contact', inboxId: 'x', format: 'xml' });
      throw new Error('accepted');
    } catch (error) {
      expect((error as DomainError).kind).toBe('invalid_input');
      expect((error as DomainError).messages).toHaveLength(4);
    }
  });
});

/** A reference RFC 4180 reader: fields split on commas, quoted fields with doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') row.push(field), rows.push(row), (row = []), (field = ''), i++;
    else field += c;
  }
  if (field !== '' || row.length > 0) throw new Error('the document does not end with CRLF');
  return rows;
}

describe('CSV', () => {
  test('any table of strings round-trips through the reference reader', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', ',', '"', '\r', '\n', 'é', '=', '😀'), maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.array(text, { minLength: 1, maxLength: 5 }), { maxLength: 6 }), (rows) => {
        expect(parseCsv(renderCsv(rows))).toEqual(rows);
      }),
    );
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a "b", c')).toBe('"a ""b"", c"');
  });

  test('names that a spreadsheet would run as formulas are made inert; others are untouched', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 10 }), (name) => {
        const out = inertText(name);
        if (/^[=+\-@\t\r]/.test(name)) expect(out).toBe(`'${name}`);
        else expect(out).toBe(name);
      }),
    );
  });

  test('reports as CSV: a header, one row per total and group (per day for the timeseries), the JSON figures in every cell', async () => {
    await fc.assert(
      fc.asyncProperty(shortRange.chain((r) => fc.tuple(fc.constant(r), facts(r), fc.constantFrom(...REPORT_GROUPINGS))), async ([r, f, groupBy]) => {
        const summary = await summaryReport(storesOf(f), OWNER, query(r, groupBy));
        const rows = parseCsv(summaryCsv(summary));
        expect(rows[0]).toEqual(['from', 'to', 'scope', 'group_key', 'group_name', ...METRIC_COLUMNS.map(([n]) => n)]);
        expect(rows.length).toBe(2 + summary.groups.length);
        const cells = (m: typeof summary.totals) => METRIC_COLUMNS.map(([, read]) => (read(m) === null ? '' : String(read(m))));
        expect(rows[1]).toEqual([r.from, r.to, 'total', '', '', ...cells(summary.totals)]);
        summary.groups.forEach((g, i) => expect(rows[2 + i]).toEqual([r.from, r.to, groupBy, g.key ?? '', g.name ?? '', ...cells(g.metrics)]));
        const series = await timeseriesReport(storesOf(f), OWNER, query(r, groupBy));
        const lines = parseCsv(timeseriesCsv(series));
        expect(lines.length).toBe(1 + rangeDays(r).length * (1 + series.groups.length));
        expect(lines.slice(1, 1 + rangeDays(r).length).map((l) => [l[0], l[1]])).toEqual(rangeDays(r).map((d) => [d, 'total']));
      }),
      { numRuns: 100 },
    );
  });
});
