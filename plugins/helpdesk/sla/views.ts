import { t, type TSchema } from 'elysia';
import { isOpen, nextOpening, WEEKDAYS, type ZoneRules } from '../../../core/helpdesk/sla/business-hours.ts';
import { calendarOf, DEFAULT_OUT_OF_OFFICE_MESSAGE, formatClock, MAX_OUT_OF_OFFICE_MESSAGE, type InboxHours } from '../../../core/helpdesk/sla/business-hours-settings.ts';
import type { ConversationSla } from '../../../core/helpdesk/sla/conversation-sla.ts';
import type { Inbox } from '../../../core/helpdesk/inboxes/inboxes.ts';
import { MAX_TARGET_MINUTES, SLA_TARGETS, type SlaPolicy } from '../../../core/helpdesk/sla/sla.ts';
import { iso, Timestamp, Uuid } from '../../kernel/http.ts';

/** The REST shapes of business hours, out-of-office replies, SLA policies and a conversation's SLA. */

const Interval = t.Object({
  start: t.String({ pattern: '^\\d{2}:\\d{2}$', description: 'HH:MM local time, from 00:00', examples: ['09:00'] }),
  end: t.String({ pattern: '^\\d{2}:\\d{2}$', description: 'HH:MM local time, after start; 24:00 is midnight at the end of the day', examples: ['17:30'] }),
});

/** One schema per weekday, spelt out (so the types follow). */
function perWeekday<T extends TSchema>(schema: T, options: { description?: string } = {}) {
  return t.Object({ monday: schema, tuesday: schema, wednesday: schema, thursday: schema, friday: schema, saturday: schema, sunday: schema }, options);
}

export const WeeklyHours = perWeekday(t.Optional(t.Array(Interval, { maxItems: 10, description: 'Working intervals of that weekday; none or left out: closed' })), {
  description: "Working intervals per weekday in the inbox's timezone. A night shift is two intervals: 22:00–24:00 and the next day's 00:00–06:00",
});

export const HolidayView = t.Object({
  date: t.String({ description: 'Local date YYYY-MM-DD in the inbox\'s timezone, closed all day', examples: ['2026-12-25'] }),
  name: t.Nullable(t.String()),
});

export const BusinessHoursView = t.Object({
  inboxId: Uuid,
  timezone: t.String({ description: 'The inbox\'s IANA timezone (change it on the inbox); the hours and holidays are in it' }),
  enabled: t.Boolean({ description: 'false (the default): open around the clock (24/7); SLA clocks of business-hours policies never stop' }),
  weeklyHours: perWeekday(t.Array(Interval)),
  holidays: t.Array(HolidayView),
  openNow: t.Boolean(),
  nextOpeningAt: t.Nullable(Timestamp),
  updatedAt: t.Nullable(Timestamp),
});

export const OutOfOfficeView = t.Object({
  inboxId: Uuid,
  enabled: t.Boolean({ description: 'When true, a contact writing while the inbox is closed gets one automatic reply per conversation and closed period' }),
  message: t.Nullable(t.String({ description: `1 to ${MAX_OUT_OF_OFFICE_MESSAGE} characters; null: the default "${DEFAULT_OUT_OF_OFFICE_MESSAGE}"` })),
  businessHoursEnabled: t.Boolean({ description: 'Without business hours the inbox is never closed, so no reply is sent' }),
  updatedAt: t.Nullable(Timestamp),
});

const Minutes = (what: string) =>
  t.Nullable(t.Integer({ minimum: 1, maximum: MAX_TARGET_MINUTES, description: `${what}, in minutes of the policy's clock (business minutes unless onlyBusinessHours is false); null: no such target` }));

export const SlaPolicyView = t.Object({
  id: Uuid,
  name: t.String(),
  description: t.Nullable(t.String()),
  firstResponseMinutes: Minutes('The contact\'s first message gets a reply by a person or a bot within'),
  nextResponseMinutes: Minutes('After the first reply, each new message of the contact gets a reply within'),
  resolutionMinutes: Minutes('The conversation is resolved within (from when it opened or was reopened)'),
  onlyBusinessHours: t.Boolean({ description: 'true: the clock runs only in the inbox\'s business hours; false: around the clock' }),
  inboxIds: t.Array(Uuid, { description: 'Inboxes whose new conversations get this policy (an inbox has at most one)' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Target = t.UnionEnum([...SLA_TARGETS]);

export const ConversationSlaView = t.Object({
  conversationId: Uuid,
  policyId: t.Nullable(Uuid),
  policyName: t.Nullable(t.String()),
  appliedAt: t.Nullable(Timestamp, { description: 'When the policy was put on the conversation; its clocks start no earlier' }),
  firstResponseDueAt: t.Nullable(Timestamp, { description: 'Due time of the running first-response round; null when none runs' }),
  nextResponseDueAt: t.Nullable(Timestamp, { description: 'Due time of the running next-response round; null when none runs' }),
  resolutionDueAt: t.Nullable(Timestamp, { description: 'Due time of the running resolution round; null when none runs' }),
  breached: t.Array(Target, { description: 'Targets missed at least once on this conversation' }),
  breaches: t.Array(t.Object({ target: Target, dueAt: Timestamp, breachedAt: Timestamp })),
  firstReplyAt: t.Nullable(Timestamp, { description: 'First public reply by a person or a bot' }),
  waitingSince: t.Nullable(Timestamp, { description: 'When the contact\'s earliest unanswered message arrived' }),
  resolvedAt: t.Nullable(Timestamp, { description: 'Latest resolve (kept if reopened)' }),
});

export function presentBusinessHours(inbox: Inbox, hours: InboxHours, zones: ZoneRules, now: Date) {
  const calendar = calendarOf(hours, inbox.timezone);
  const open = isOpen(calendar, zones, now.getTime());
  const opening = open ? null : nextOpening(calendar, zones, now.getTime());
  return {
    inboxId: inbox.id,
    timezone: inbox.timezone,
    enabled: hours.enabled,
    weeklyHours: Object.fromEntries(WEEKDAYS.map((day, i) => [day, (hours.week[i] ?? []).map((x) => ({ start: formatClock(x.start), end: formatClock(x.end) }))])) as Record<
      (typeof WEEKDAYS)[number],
      Array<{ start: string; end: string }>
    >,
    holidays: hours.holidays,
    openNow: open,
    nextOpeningAt: opening === null ? null : new Date(opening).toISOString(),
    updatedAt: iso(hours.updatedAt),
  };
}

export function presentOutOfOffice(hours: InboxHours) {
  return { inboxId: hours.inboxId, enabled: hours.outOfOffice.enabled, message: hours.outOfOffice.message, businessHoursEnabled: hours.enabled, updatedAt: iso(hours.updatedAt) };
}

export function presentPolicy(p: SlaPolicy) {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    firstResponseMinutes: p.firstResponseMinutes,
    nextResponseMinutes: p.nextResponseMinutes,
    resolutionMinutes: p.resolutionMinutes,
    onlyBusinessHours: p.onlyBusinessHours,
    inboxIds: p.inboxIds,
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

export function presentConversationSla(s: ConversationSla) {
  const timing = s.timing;
  return {
    conversationId: s.conversationId,
    policyId: timing?.policyId ?? null,
    policyName: s.policy?.name ?? null,
    appliedAt: timing ? iso(timing.appliedAt) : null,
    firstResponseDueAt: iso(timing?.firstResponseDueAt ?? null),
    nextResponseDueAt: iso(timing?.nextResponseDueAt ?? null),
    resolutionDueAt: iso(timing?.resolutionDueAt ?? null),
    breached: SLA_TARGETS.filter((target) => s.breaches.some((b) => b.target === target)),
    breaches: s.breaches.map((b) => ({ target: b.target, dueAt: iso(b.dueAt), breachedAt: iso(b.breachedAt) })),
    firstReplyAt: iso(timing?.firstReplyAt ?? null),
    waitingSince: iso(timing?.waitingSince ?? null),
    resolvedAt: iso(timing?.resolvedAt ?? null),
  };
}
