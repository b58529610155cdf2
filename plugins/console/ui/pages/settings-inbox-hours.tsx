/**
 * An inbox's business hours (`GET/PUT /v3/helpdesk/inboxes/{id}/business-hours`): open around
 * the clock unless switched on; then working intervals per weekday and closed holidays, in the
 * inbox's time zone. They stop business-hours SLA clocks and decide when the out-of-office reply
 * goes out. Saving replaces the whole set, as the API does.
 */
import { useEffect, useState } from 'preact/hooks';
import { get, put } from '../api.ts';
import { Button, Checkbox, ErrorNote, Loading, Notice, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { itemPath } from './settings-model.ts';

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
type Weekday = (typeof WEEKDAYS)[number];
interface Interval {
  start: string;
  end: string;
}
interface Holiday {
  date: string;
  name: string | null;
}
interface BusinessHours {
  timezone: string;
  enabled: boolean;
  weeklyHours: Record<Weekday, Interval[]>;
  holidays: Holiday[];
  openNow: boolean;
  nextOpeningAt: string | null;
}

const OFFICE_DAY: Interval = { start: '09:00', end: '17:00' };
const dayName = (day: Weekday) => day[0]!.toUpperCase() + day.slice(1);

export function BusinessHoursForm({ inboxId }: { inboxId: string }) {
  const path = itemPath('inboxes', inboxId, '/business-hours');
  const current = useLoad(() => get<BusinessHours>(path), [path]);
  const [draft, setDraft] = useState<Pick<BusinessHours, 'enabled' | 'weeklyHours' | 'holidays'>>();
  const [saved, setSaved] = useState(false);
  const save = useAction();
  useEffect(() => {
    if (current.data) setDraft({ enabled: current.data.enabled, weeklyHours: current.data.weeklyHours, holidays: current.data.holidays });
  }, [current.data]);

  if (!current.data || !draft) return current.error ? <ErrorNote error={current.error} /> : <Loading rows={2} label="Loading business hours" />;
  const edit = (next: Partial<typeof draft>) => {
    setSaved(false);
    setDraft({ ...draft, ...next });
  };
  const setDay = (day: Weekday, intervals: Interval[]) => edit({ weeklyHours: { ...draft.weeklyHours, [day]: intervals } });
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    if (await save.run(() => put<BusinessHours>(path, { ...draft, holidays: draft.holidays.map((h) => ({ date: h.date, name: h.name?.trim() || null })) }))) {
      setSaved(true);
      await current.reload();
    }
  };

  return (
    <form onSubmit={submit} aria-label="Business hours">
      <p class="muted">
        In the inbox's time zone, {current.data.timezone}.{' '}
        {current.data.enabled && (current.data.openNow ? 'Open now.' : <>Closed now{current.data.nextOpeningAt && <>; opens <When at={current.data.nextOpeningAt} /></>}.</>)}
      </p>
      <Checkbox label="Keep business hours" hint="Off: open around the clock." checked={draft.enabled} onChecked={(enabled) => edit({ enabled })} />
      {draft.enabled && (
        <>
          <div class="settings-week">
            {WEEKDAYS.map((day) => (
              <DayHours day={day} intervals={draft.weeklyHours[day] ?? []} onChange={(intervals) => setDay(day, intervals)} />
            ))}
          </div>
          <Holidays holidays={draft.holidays} onChange={(holidays) => edit({ holidays })} />
        </>
      )}
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          Save business hours
        </Button>
      </div>
      <ErrorNote error={save.error} prefix="The hours were not changed." />
      {saved && <Notice>Business hours saved.</Notice>}
    </form>
  );
}

function DayHours({ day, intervals, onChange }: { day: Weekday; intervals: Interval[]; onChange: (intervals: Interval[]) => void }) {
  const name = dayName(day);
  const change = (i: number, next: Partial<Interval>) => onChange(intervals.map((interval, j) => (j === i ? { ...interval, ...next } : interval)));
  return (
    <fieldset class="settings-day">
      <legend>{name}</legend>
      <Checkbox label="Open" checked={intervals.length > 0} onChecked={(open) => onChange(open ? [OFFICE_DAY] : [])} />
      {intervals.map((interval, i) => (
        <div class="settings-interval">
          <label>
            <span class="sr-only">{name} </span>From
            <input type="text" required pattern="\d{2}:\d{2}" inputMode="numeric" size={5} placeholder="09:00" value={interval.start} onInput={(e) => change(i, { start: (e.currentTarget as HTMLInputElement).value })} />
          </label>
          <label>
            <span class="sr-only">{name} </span>to
            <input type="text" required pattern="\d{2}:\d{2}" inputMode="numeric" size={5} placeholder="17:00" value={interval.end} onInput={(e) => change(i, { end: (e.currentTarget as HTMLInputElement).value })} title="HH:MM; 24:00 is midnight" />
          </label>
          {intervals.length > 1 && (
            <Button variant="link" onClick={() => onChange(intervals.filter((_, j) => j !== i))} aria-label={`Remove ${name} ${interval.start}–${interval.end}`}>
              Remove
            </Button>
          )}
        </div>
      ))}
      {intervals.length > 0 && intervals.length < 10 && (
        <Button variant="link" onClick={() => onChange([...intervals, { start: '', end: '' }])} aria-label={`Add an interval on ${name}`}>
          + Interval
        </Button>
      )}
    </fieldset>
  );
}

function Holidays({ holidays, onChange }: { holidays: Holiday[]; onChange: (holidays: Holiday[]) => void }) {
  const change = (i: number, next: Partial<Holiday>) => onChange(holidays.map((h, j) => (j === i ? { ...h, ...next } : h)));
  return (
    <fieldset>
      <legend>Holidays (closed all day)</legend>
      {holidays.length === 0 && <p class="muted">None.</p>}
      {holidays.map((h, i) => (
        <div class="settings-interval">
          <label>
            Date
            <input type="date" required value={h.date} onInput={(e) => change(i, { date: (e.currentTarget as HTMLInputElement).value })} />
          </label>
          <label>
            Name
            <input type="text" value={h.name ?? ''} onInput={(e) => change(i, { name: (e.currentTarget as HTMLInputElement).value })} />
          </label>
          <Button variant="link" onClick={() => onChange(holidays.filter((_, j) => j !== i))} aria-label={`Remove holiday ${h.date}`}>
            Remove
          </Button>
        </div>
      ))}
      <Button variant="link" onClick={() => onChange([...holidays, { date: '', name: '' }])}>
        + Holiday
      </Button>
    </fieldset>
  );
}
