/**
 * The snooze menu's presets, in the agent's own time zone: an hour from now, tonight or
 * tomorrow at 9:00 (tonight at 21:00 when it is still before then), next Monday at 9:00.
 */

export interface SnoozePreset {
  label: string;
  until: Date;
}

export function snoozePresets(now: Date = new Date()): SnoozePreset[] {
  const at = (days: number, hour: number) => {
    const d = new Date(now);
    d.setDate(d.getDate() + days);
    d.setHours(hour, 0, 0, 0);
    return d;
  };
  const tonight = at(0, 21);
  const daysToMonday = ((8 - now.getDay()) % 7) || 7;
  return [
    { label: '1 hour', until: new Date(now.getTime() + 60 * 60 * 1000) },
    ...(tonight.getTime() - now.getTime() > 60 * 60 * 1000 ? [{ label: 'Tonight, 21:00', until: tonight }] : []),
    { label: 'Tomorrow, 9:00', until: at(1, 9) },
    { label: 'Next week (Monday, 9:00)', until: at(daysToMonday, 9) },
  ];
}

/** The value of a `datetime-local` input as an instant, or undefined when empty or not in the future. */
export function customSnooze(value: string, now: Date = new Date()): Date | undefined {
  if (!value) return undefined;
  const until = new Date(value);
  return Number.isNaN(until.getTime()) || until <= now ? undefined : until;
}
