import type { Actor } from '../../identity/identity.ts';
import { badRequest } from '../../shared/errors.ts';
import type { Clock } from '../../shared/ports.ts';
import { normaliseDay, WEEKDAYS, type BusinessCalendar, type Weekday, type WorkingInterval } from './business-hours.ts';
import { visibleInbox, type Inbox, type InboxStore } from '../inboxes/inboxes.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';
import type { SettingsStore } from '../../shared/workspace-records.ts';

/**
 * An inbox's business hours and out-of-office reply (`GET`/`PUT /v3/helpdesk/inboxes/{id}/business-hours`
 * and `…/out-of-office`). The hours are in the inbox's `timezone` (spec 2.1, 2.10; changed with
 * the inbox): a week of working intervals (`"09:00"`–`"17:30"`, end `"24:00"` for midnight; a
 * night shift is two intervals, on either side of midnight) and holidays (local dates closed
 * all day). Never configured, or `enabled: false`: the inbox is open around the clock (24/7).
 * Reading is reading the inbox (any member who sees it); changing is configuring the helpdesk
 * (Owner, Admin, Manager) on the PRO plan.
 */

export interface Holiday {
  /** Local date `YYYY-MM-DD` in the inbox's zone. */
  date: string;
  name: string | null;
}

export interface OutOfOffice {
  enabled: boolean;
  /** Null: DEFAULT_OUT_OF_OFFICE_MESSAGE. */
  message: string | null;
}

export interface InboxHours {
  inboxId: string;
  workspaceId: string;
  enabled: boolean;
  /** Seven days, Monday first, each sorted and merged. */
  week: WorkingInterval[][];
  holidays: Holiday[];
  outOfOffice: OutOfOffice;
  /** Null while never configured. */
  updatedAt: Date | null;
}

export const MAX_INTERVALS_PER_DAY = 10;
export const MAX_HOLIDAYS = 400;
export const MAX_HOLIDAY_NAME = 120;
export const MAX_OUT_OF_OFFICE_MESSAGE = 1000;
export const DEFAULT_OUT_OF_OFFICE_MESSAGE = 'Thank you for your message. We are away right now and will answer as soon as we are back.';

/** By inbox id. */
export type InboxHoursStore = SettingsStore<InboxHours>;

export interface InboxHoursStores {
  inboxes: InboxStore;
  plans: WorkspacePlans;
  hours: InboxHoursStore;
}

/** An inbox never configured: open around the clock, no out-of-office reply. */
export function defaultInboxHours(inbox: Pick<Inbox, 'id' | 'workspaceId'>): InboxHours {
  return {
    inboxId: inbox.id,
    workspaceId: inbox.workspaceId,
    enabled: false,
    week: WEEKDAYS.map(() => []),
    holidays: [],
    outOfOffice: { enabled: false, message: null },
    updatedAt: null,
  };
}

/** The calendar the clock and the out-of-office reply go by; null: open 24/7. */
export function calendarOf(hours: InboxHours | undefined, zone: string): BusinessCalendar | null {
  if (!hours?.enabled) return null;
  return { zone, week: hours.week, holidays: new Set(hours.holidays.map((h) => h.date)) };
}

export async function getInboxHours(stores: InboxHoursStores, actor: Actor, inboxId: string): Promise<{ inbox: Inbox; hours: InboxHours }> {
  const inbox = await visibleInbox(stores, actor, inboxId);
  return { inbox, hours: (await stores.hours.get(inbox.id)) ?? defaultInboxHours(inbox) };
}

async function configurable(stores: InboxHoursStores, actor: Actor, inboxId: string): Promise<{ inbox: Inbox; hours: InboxHours }> {
  const found = await getInboxHours(stores, actor, inboxId);
  await assertHelpdeskConfigurable(stores.plans, actor);
  return found;
}

export interface BusinessHoursInput {
  enabled: boolean;
  weeklyHours?: Partial<Record<Weekday, Array<{ start: string; end: string }>>>;
  holidays?: Array<{ date: string; name?: string | null }>;
}

/** Replaces the business hours (the out-of-office setting stays). */
export async function setBusinessHours(stores: InboxHoursStores, deps: { clock: Clock }, actor: Actor, inboxId: string, input: BusinessHoursInput): Promise<{ inbox: Inbox; hours: InboxHours }> {
  const { inbox, hours } = await configurable(stores, actor, inboxId);
  const problems: string[] = [];
  const week = parseWeek(input.weeklyHours ?? {}, problems);
  const holidays = parseHolidays(input.holidays ?? [], problems);
  if (input.enabled === true && problems.length === 0 && week.every((d) => d.length === 0)) problems.push('body.weeklyHours must have at least one working interval when enabled');
  if (problems.length > 0) throw badRequest(problems);
  const updated: InboxHours = { ...hours, enabled: input.enabled === true, week, holidays, updatedAt: deps.clock.now() };
  await stores.hours.put(updated);
  return { inbox, hours: updated };
}

export async function setOutOfOffice(stores: InboxHoursStores, deps: { clock: Clock }, actor: Actor, inboxId: string, input: { enabled: boolean; message?: string | null }): Promise<{ inbox: Inbox; hours: InboxHours }> {
  const { inbox, hours } = await configurable(stores, actor, inboxId);
  let message: string | null = null;
  if (input.message != null) {
    message = input.message.trim();
    if (message.length < 1 || message.length > MAX_OUT_OF_OFFICE_MESSAGE) throw badRequest([`body.message must be 1 to ${MAX_OUT_OF_OFFICE_MESSAGE} characters, or null for the default text`]);
  }
  const updated: InboxHours = { ...hours, outOfOffice: { enabled: input.enabled === true, message }, updatedAt: deps.clock.now() };
  await stores.hours.put(updated);
  return { inbox, hours: updated };
}

/** `"HH:MM"` to minutes of the day; `"24:00"` only as an end. */
export function parseClock(value: unknown, isEnd: boolean): number | null {
  if (typeof value !== 'string') return null;
  const match = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(value);
  if (!match) return null;
  const minutes = Number(match[1]) * 60 + Number(match[2]);
  if (minutes > 1440 || (minutes === 1440 && !isEnd)) return null;
  return minutes;
}

export function formatClock(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

function parseWeek(weekly: Record<string, unknown>, problems: string[]): WorkingInterval[][] {
  for (const key of Object.keys(weekly)) if (!(WEEKDAYS as readonly string[]).includes(key)) problems.push(`body.weeklyHours.${key} is not a weekday (${WEEKDAYS.join(', ')})`);
  return WEEKDAYS.map((day) => {
    const given = weekly[day] ?? [];
    if (!Array.isArray(given)) {
      problems.push(`body.weeklyHours.${day} must be a list of { start, end }`);
      return [];
    }
    if (given.length > MAX_INTERVALS_PER_DAY) problems.push(`body.weeklyHours.${day} may have at most ${MAX_INTERVALS_PER_DAY} intervals`);
    const intervals: WorkingInterval[] = [];
    given.forEach((interval: any, i: number) => {
      const start = parseClock(interval?.start, false);
      const end = parseClock(interval?.end, true);
      if (start === null || end === null) problems.push(`body.weeklyHours.${day}[${i}]: start and end must be HH:MM (00:00 to 23:59; end may be 24:00)`);
      else if (start >= end) problems.push(`body.weeklyHours.${day}[${i}]: start must be before end (a night shift is two intervals, before and after midnight)`);
      else intervals.push({ start, end });
    });
    const merged = normaliseDay(intervals);
    // Overlaps are a mistake worth naming; intervals that only touch (09:00–12:00, 12:00–17:00) merge.
    const total = intervals.reduce((sum, i) => sum + i.end - i.start, 0);
    if (merged.reduce((sum, i) => sum + i.end - i.start, 0) !== total) problems.push(`body.weeklyHours.${day}: intervals overlap`);
    return merged;
  });
}

function isDate(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
}

function parseHolidays(given: unknown, problems: string[]): Holiday[] {
  if (!Array.isArray(given)) {
    problems.push('body.holidays must be a list of { date, name }');
    return [];
  }
  if (given.length > MAX_HOLIDAYS) problems.push(`body.holidays may have at most ${MAX_HOLIDAYS} dates`);
  const byDate = new Map<string, Holiday>();
  given.forEach((holiday: any, i: number) => {
    if (!isDate(holiday?.date)) return void problems.push(`body.holidays[${i}].date must be a date YYYY-MM-DD`);
    const name = typeof holiday.name === 'string' ? holiday.name.trim() : null;
    if (name !== null && (name.length < 1 || name.length > MAX_HOLIDAY_NAME)) return void problems.push(`body.holidays[${i}].name must be 1 to ${MAX_HOLIDAY_NAME} characters`);
    if (byDate.has(holiday.date)) return void problems.push(`body.holidays[${i}].date ${holiday.date} is listed twice`);
    byDate.set(holiday.date, { date: holiday.date, name });
  });
  return [...byDate.values()].sort((a, b) => a.date.localeCompare(b.date));
}
