import { badRequest, excerpt } from '../shared/errors.ts';
import type { ZoneRules } from '../helpdesk/sla/business-hours.ts';

const MINUTE_MS = 60_000;
const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/**
 * When a campaign starts: `startAt` as an instant with an offset (`2026-12-01T09:00:00Z`,
 * `…+01:00`), or as a local wall time (`2026-12-01T09:00`) in `timezone` (an IANA zone). No
 * `startAt`: at launch. A local time that a DST change skips resolves to the instant after the gap.
 */
export function parseStartTime(schedule: { startAt?: string | null; timezone?: string | null }, zones: ZoneRules): Date | null {
  const { startAt, timezone } = schedule;
  if (timezone) {
    try {
      zones.offsetMinutes(timezone, 0);
    } catch {
      throw badRequest([`body.schedule.timezone "${excerpt(timezone)}" is not an IANA time zone`]);
    }
  }
  if (startAt === undefined || startAt === null || startAt === '') return null;
  const local = LOCAL.exec(startAt);
  if (local) {
    if (!timezone) throw badRequest(['body.schedule.startAt without an offset needs body.schedule.timezone']);
    const [, y, mo, d, h, mi, s] = local.map(Number) as number[];
    const wall = Date.UTC(y!, mo! - 1, d!, h!, mi!, s || 0);
    if (Number.isNaN(wall) || new Date(wall).getUTCDate() !== d) throw badRequest(['body.schedule.startAt is not a valid date and time']);
    return new Date(wallToInstant(zones, timezone, wall));
  }
  const instant = Date.parse(startAt);
  if (!/[zZ]|[+-]\d{2}:?\d{2}$/.test(startAt) || Number.isNaN(instant)) {
    throw badRequest(['body.schedule.startAt must be an ISO 8601 date-time with an offset, or a local date-time with body.schedule.timezone']);
  }
  return new Date(instant);
}

/** The instant whose wall clock in `zone` reads `wall` (UTC-encoded local time). */
export function wallToInstant(zones: ZoneRules, zone: string, wall: number): number {
  // Two passes settle the offset on either side of a DST change.
  let instant = wall - zones.offsetMinutes(zone, wall) * MINUTE_MS;
  instant = wall - zones.offsetMinutes(zone, instant) * MINUTE_MS;
  return instant;
}
