import type { ZoneRules } from '../../core/helpdesk/sla/business-hours.ts';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, format);
  }
  return format;
}

/**
 * The runtime's zone database (ICU, through `Intl`) as core's `ZoneRules`: the zone's wall clock
 * at the instant, read back as if it were UTC, minus the instant (whole seconds: `Intl` shows no
 * milliseconds), in whole minutes (every offset in use today is).
 */
export const intlZoneRules: ZoneRules = {
  offsetMinutes(zone, at) {
    const parts: Record<string, number> = {};
    for (const part of formatter(zone).formatToParts(new Date(at))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
    const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
    return Math.round((wall - Math.floor(at / 1000) * 1000) / 60_000);
  },
};
