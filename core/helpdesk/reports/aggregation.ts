import type { Conversation } from '../conversations/conversation.ts';
import { labelKey } from '../labels/label-sets.ts';
import { average, inRange, median, rounded, type ReportRange } from './range.ts';
import { SLA_TARGETS, type SlaTarget } from '../sla/sla.ts';

/**
 * The arithmetic of reports (reports.ts describes every metric): facts into tallies per bucket
 * and group, tallies into figures, and who held a conversation at an instant. Pure.
 */

export const REPORT_GROUPINGS = ['inbox', 'agent', 'team', 'label'] as const;
export type ReportGrouping = (typeof REPORT_GROUPINGS)[number];

/** The conversation as reports group it (its current state). */
export type ReportConversation = Pick<Conversation, 'id' | 'inboxId' | 'createdAt' | 'assigneeUserId' | 'teamId' | 'labels'>;

/** One `assignee_changed` event; the store lists them oldest first. */
export interface HolderChange {
  conversationId: string;
  at: Date;
  fromUserId: string | null;
  toUserId: string | null;
  fromTeamId: string | null;
  toTeamId: string | null;
}

export interface Moment {
  conversationId: string;
  at: Date;
}

export interface CsatFact extends Moment {
  rating: number;
  inboxId: string;
  assigneeUserId: string | null;
  teamId: string | null;
}

/** `at` is the round's due time. */
export interface SlaBreachFact extends Moment {
  target: string;
}

/** What happened in the range (facts outside it are ignored), with every conversation they name. */
export interface ReportFacts {
  conversations: ReportConversation[];
  opened: Moment[];
  resolved: Moment[];
  firstReplies: Moment[];
  csat: CsatFact[];
  slaBreaches: SlaBreachFact[];
  /** Only needed (and only read) when grouping by agent or team. */
  holderChanges: HolderChange[];
}

export interface DurationStats {
  count: number;
  medianSeconds: number | null;
  averageSeconds: number | null;
}

export interface ReportMetrics {
  conversationsOpened: number;
  conversationsResolved: number;
  firstResponseTime: DurationStats;
  resolutionTime: DurationStats;
  csat: { responses: number; averageRating: number | null; satisfiedPercent: number | null };
  slaBreaches: { total: number } & Record<SlaTarget, number>;
}

/** Raw counts and samples of one bucket of one group (or of the totals). */
export interface Tally {
  opened: number;
  /** Conversation id → creation to its last resolve in the bucket, in ms. */
  resolutions: Map<string, number>;
  firstResponseMs: number[];
  ratings: number[];
  sla: Map<string, number>;
}

const emptyTally = (): Tally => ({ opened: 0, resolutions: new Map(), firstResponseMs: [], ratings: [], sla: new Map() });

/**
 * Facts into tallies per bucket, in total and per group. `bucketOf` names the bucket of an
 * instant (undefined: outside the range). Exported for the property tests.
 */
export function aggregate(facts: ReportFacts, range: Pick<ReportRange, 'start' | 'end'>, groupBy: ReportGrouping | null, bucketOf: (at: Date) => string | undefined) {
  const conversations = new Map(facts.conversations.map((c) => [c.id, c]));
  const history = holderHistory(facts.holderChanges);
  const totals = new Map<string, Tally>();
  const groups = new Map<string | null, Map<string, Tally>>();
  /** A label's first spelling met, for a label the catalogue does not know. */
  const spellings = new Map<string, string>();

  const keysOf = (c: ReportConversation, at: Date | 'now', fixed?: { userId: string | null; teamId: string | null }): (string | null)[] => {
    if (groupBy === 'inbox') return [c.inboxId];
    if (groupBy === 'label') {
      for (const label of c.labels) if (!spellings.has(labelKey(label))) spellings.set(labelKey(label), label.trim());
      const keys = [...new Set(c.labels.map(labelKey))];
      return keys.length > 0 ? keys : [null];
    }
    const holder = fixed ?? (at === 'now' ? { userId: c.assigneeUserId, teamId: c.teamId } : holderAt(history.get(c.id) ?? [], at, c));
    return [groupBy === 'agent' ? holder.userId : holder.teamId];
  };
  const record = (moment: Moment, apply: (tally: Tally) => void, when: Date | 'now' = moment.at, fixed?: { userId: string | null; teamId: string | null }) => {
    const bucket = inRange(range, moment.at) ? bucketOf(moment.at) : undefined;
    const conversation = conversations.get(moment.conversationId);
    if (bucket === undefined || !conversation) return;
    apply(tallyIn(totals, bucket));
    if (!groupBy) return;
    for (const key of keysOf(conversation, when, fixed)) {
      if (!groups.has(key)) groups.set(key, new Map());
      apply(tallyIn(groups.get(key)!, bucket));
    }
  };
  const createdAt = (id: string) => conversations.get(id)?.createdAt.getTime() ?? 0;

  for (const m of facts.opened) record(m, (t) => void (t.opened += 1), 'now');
  // The last resolve of a conversation in a bucket wins; it alone decides the holder too.
  const lastResolves = new Map<string, Moment>();
  for (const m of facts.resolved) {
    const bucket = inRange(range, m.at) ? bucketOf(m.at) : undefined;
    const key = `${bucket}|${m.conversationId}`;
    const kept = lastResolves.get(key);
    if (bucket !== undefined && (!kept || kept.at.getTime() <= m.at.getTime())) lastResolves.set(key, m);
  }
  for (const m of lastResolves.values()) record(m, (t) => void t.resolutions.set(m.conversationId, m.at.getTime() - createdAt(m.conversationId)));
  for (const m of facts.firstReplies) record(m, (t) => void t.firstResponseMs.push(m.at.getTime() - createdAt(m.conversationId)));
  for (const m of facts.csat) record(m, (t) => void t.ratings.push(m.rating), m.at, { userId: m.assigneeUserId, teamId: m.teamId });
  for (const m of facts.slaBreaches) record(m, (t) => void t.sla.set(m.target, (t.sla.get(m.target) ?? 0) + 1));
  return { totals, groups, spellings };
}

function tallyIn(buckets: Map<string, Tally>, bucket: string): Tally {
  let tally = buckets.get(bucket);
  if (!tally) buckets.set(bucket, (tally = emptyTally()));
  return tally;
}

function holderHistory(changes: readonly HolderChange[]): Map<string, HolderChange[]> {
  const byConversation = new Map<string, HolderChange[]>();
  for (const change of changes) {
    const list = byConversation.get(change.conversationId) ?? [];
    list.push(change);
    byConversation.set(change.conversationId, list);
  }
  for (const list of byConversation.values()) list.sort((a, b) => a.at.getTime() - b.at.getTime());
  return byConversation;
}

/**
 * Who held the conversation at `at`, from its changes (oldest first): the last change at or
 * before `at` says whom it went to; before the first change, that change says whom it came
 * from; with no change at all, the conversation's current holder always held it.
 */
export function holderAt(changes: readonly HolderChange[], at: Date, current: { assigneeUserId: string | null; teamId: string | null }): { userId: string | null; teamId: string | null } {
  let last: HolderChange | undefined;
  for (const change of changes) if (change.at.getTime() <= at.getTime()) last = change;
  if (last) return { userId: last.toUserId, teamId: last.toTeamId };
  const first = changes[0];
  if (first) return { userId: first.fromUserId, teamId: first.fromTeamId };
  return { userId: current.assigneeUserId, teamId: current.teamId };
}

/** The figures of a tally (none: every count zero, every statistic null). */
export function metricsOf(tally: Tally | undefined): ReportMetrics {
  const t = tally ?? emptyTally();
  const resolutionMs = [...t.resolutions.values()];
  const satisfied = t.ratings.filter((r) => r >= 4).length;
  const sla = Object.fromEntries(SLA_TARGETS.map((target) => [target, t.sla.get(target) ?? 0])) as Record<SlaTarget, number>;
  return {
    conversationsOpened: t.opened,
    conversationsResolved: t.resolutions.size,
    firstResponseTime: durations(t.firstResponseMs),
    resolutionTime: durations(resolutionMs),
    csat: {
      responses: t.ratings.length,
      averageRating: rounded(average(t.ratings), 2),
      satisfiedPercent: t.ratings.length === 0 ? null : rounded((satisfied / t.ratings.length) * 100, 2),
    },
    slaBreaches: { total: [...t.sla.values()].reduce((a, b) => a + b, 0), ...sla },
  };
}

/** Milliseconds in, seconds out to the millisecond (rounded in whole milliseconds, so the decimals are exact). */
function durations(ms: readonly number[]): DurationStats {
  const seconds = (value: number | null) => (value === null ? null : rounded(value, 0)! / 1000);
  return { count: ms.length, medianSeconds: seconds(median(ms)), averageSeconds: seconds(average(ms)) };
}
