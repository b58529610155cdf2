/**
 * What an agent does to a conversation besides writing: resolve or reopen, assign to a member
 * of the inbox or to a team, labels, priority, snooze (presets or a chosen time), and macros.
 * Each is one call to the API; the pane shows the conversation it answers.
 */
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { get, itemsOf, patch as patchCall, post } from '../../api.ts';
import { Button } from '../../components.tsx';
import { useLoad } from '../../data.ts';
import { PRIORITIES, type Conversation, type Label, type Macro, type Person, type Team } from './conversation-model.ts';
import { customSnooze, snoozePresets } from './snooze-presets.ts';

export type Change = (write: () => Promise<Conversation | undefined>) => Promise<void>;

/** Resolve an open (or pending, snoozed) conversation, reopen a resolved one: the `e` key and its button. */
export function statusToggle(c: Conversation): { label: string; status: 'OPEN' | 'RESOLVED' } {
  return c.status === 'RESOLVED' ? { label: 'Reopen', status: 'OPEN' } : { label: 'Resolve', status: 'RESOLVED' };
}

export function setStatus(c: Conversation, status: string, snoozedUntil?: Date): Promise<Conversation> {
  return post<Conversation>(`/v3/helpdesk/conversations/${encodeURIComponent(c.id)}/status`, { status, ...(snoozedUntil && { snoozedUntil: snoozedUntil.toISOString() }) });
}

export function ConversationActions({
  conversation: c,
  inboxMembers,
  people,
  pending,
  change,
  onMacroRun,
}: {
  conversation: Conversation;
  inboxMembers: Person[] | undefined;
  people: Person[] | undefined;
  pending: boolean;
  change: Change;
  onMacroRun: (macroId: string) => Promise<void>;
}) {
  const base = `/v3/helpdesk/conversations/${encodeURIComponent(c.id)}`;
  const teams = useLoad(async () => itemsOf<Team>(await get('/v3/helpdesk/teams', { per_page: 100 })), []);
  const patch = (body: Record<string, unknown>) => change(() => patchCall<Conversation>(base, body));
  const toggle = statusToggle(c);
  const assignable = withCurrent(inboxMembers ?? [], people ?? [], c.assigneeUserId);
  const ids = { assignee: useId(), team: useId(), priority: useId() };
  const bar = useOneMenuOpen();

  return (
    <div class="conversation-actions" role="group" aria-label="Conversation actions" ref={bar}>
      <Button variant={toggle.status === 'RESOLVED' ? 'primary' : 'secondary'} pending={pending} onClick={() => change(() => setStatus(c, toggle.status))} aria-keyshortcuts="e">
        {toggle.label}
      </Button>
      <div class="inline-field">
        <label for={ids.assignee}>Assignee</label>
        <select id={ids.assignee} value={c.assigneeUserId ?? ''} disabled={pending} onChange={(e) => patch({ assigneeUserId: e.currentTarget.value || null })}>
          <option value="">{c.assigneeAgentBotId ? 'Agent bot' : 'Unassigned'}</option>
          {assignable.map((p) => (
            <option value={p.userId}>{p.name}</option>
          ))}
        </select>
      </div>
      <div class="inline-field">
        <label for={ids.team}>Team</label>
        <select id={ids.team} value={c.teamId ?? ''} disabled={pending || !teams.data} onChange={(e) => patch({ teamId: e.currentTarget.value || null })}>
          <option value="">No team</option>
          {(teams.data ?? []).map((t) => (
            <option value={t.id}>{t.name}</option>
          ))}
        </select>
      </div>
      <div class="inline-field">
        <label for={ids.priority}>Priority</label>
        <select id={ids.priority} value={c.priority ?? ''} disabled={pending} onChange={(e) => patch({ priority: e.currentTarget.value || null })}>
          <option value="">None</option>
          {PRIORITIES.map((p) => (
            <option value={p}>{p[0] + p.slice(1).toLowerCase()}</option>
          ))}
        </select>
      </div>
      <LabelsMenu conversation={c} pending={pending} change={change} />
      <SnoozeMenu conversation={c} pending={pending} change={change} />
      <MacrosMenu pending={pending} onRun={onMacroRun} />
    </div>
  );
}

function LabelsMenu({ conversation: c, pending, change }: { conversation: Conversation; pending: boolean; change: Change }) {
  const labels = useLoad(async () => itemsOf<Label>(await get('/v3/helpdesk/labels', { per_page: 100 })), [c.labels.join(',')]);
  const [fresh, setFresh] = useState('');
  const has = (name: string) => c.labels.some((l) => l.toLowerCase() === name.toLowerCase());
  const save = (names: string[]) => change(() => post<Conversation>(`/v3/helpdesk/conversations/${encodeURIComponent(c.id)}/labels`, { labels: names }));
  const known = labels.data ?? [];
  const shown = [...known.map((l) => l.name), ...c.labels.filter((n) => !known.some((l) => l.name.toLowerCase() === n.toLowerCase()))];
  return (
    <details class="menu">
      <summary class="btn secondary">Labels{c.labels.length > 0 && ` (${c.labels.length})`}</summary>
      <div class="menu-body" role="group" aria-label="Labels">
        {shown.length === 0 && <p class="muted">No labels in this workspace yet.</p>}
        {shown.map((name) => (
          <label class="check-line">
            <input type="checkbox" checked={has(name)} disabled={pending} onChange={(e) => save(e.currentTarget.checked ? [...c.labels, name] : c.labels.filter((l) => l.toLowerCase() !== name.toLowerCase()))} />
            {name}
          </label>
        ))}
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (!fresh.trim()) return;
            void save([...c.labels, fresh.trim()]).then(() => setFresh(''));
          }}
        >
          <label class="sr-only" for="new-label">
            New label
          </label>
          <input id="new-label" value={fresh} maxLength={100} placeholder="New label" onInput={(e) => setFresh(e.currentTarget.value)} />
          <Button type="submit" variant="secondary" pending={pending}>
            Add
          </Button>
        </form>
      </div>
    </details>
  );
}

function SnoozeMenu({ conversation: c, pending, change }: { conversation: Conversation; pending: boolean; change: Change }) {
  const [custom, setCustom] = useState('');
  const presets = snoozePresets();
  const until = customSnooze(custom);
  const snooze = (at: Date) => change(() => setStatus(c, 'SNOOZED', at));
  return (
    <details class="menu">
      <summary class="btn secondary">Snooze</summary>
      <div class="menu-body" role="group" aria-label="Snooze until">
        {presets.map((p) => (
          <button type="button" class="btn link" disabled={pending} onClick={(e) => (closeMenu(e), snooze(freshPreset(p.label) ?? p.until))} title={p.until.toLocaleString()}>
            {p.label}
          </button>
        ))}
        <label for="snooze-custom">Until a time of your choice</label>
        <div class="row">
          <input id="snooze-custom" type="datetime-local" value={custom} onInput={(e) => setCustom(e.currentTarget.value)} />
          <Button variant="secondary" pending={pending} disabled={!until} onClick={(e: Event) => until && (closeMenu(e), snooze(until))}>
            Snooze
          </Button>
        </div>
        {custom && !until && <p class="hint">Choose a time in the future.</p>}
      </div>
    </details>
  );
}

function MacrosMenu({ pending, onRun }: { pending: boolean; onRun: (macroId: string) => Promise<void> }) {
  const macros = useLoad(async () => itemsOf<Macro>(await get('/v3/helpdesk/macros', { per_page: 100 })), []);
  const list = macros.data ?? [];
  return (
    <details class="menu">
      <summary class="btn secondary">Macros</summary>
      <div class="menu-body" role="group" aria-label="Run a macro">
        {macros.error && <p class="error-text">The macros could not be read.</p>}
        {macros.data && list.length === 0 && <p class="muted">No macros yet.</p>}
        {list.map((m) => (
          <button type="button" class="btn link" disabled={pending} onClick={(e) => (closeMenu(e), onRun(m.id))}>
            {m.name}
            {m.visibility === 'personal' && <span class="muted"> (yours)</span>}
          </button>
        ))}
      </div>
    </details>
  );
}

/**
 * The action bar's menus (`<details>`) behave as menus: opening one closes the others, and a
 * click elsewhere on the page or Escape closes it.
 */
function useOneMenuOpen() {
  const bar = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const menus = () => Array.from(bar.current?.querySelectorAll<HTMLDetailsElement>('details.menu[open]') ?? []);
    const clicked = (event: Event) => menus().forEach((m) => !m.contains(event.target as Node) && (m.open = false));
    const pressed = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      const open = menus();
      if (open.length === 0) return;
      open.forEach((m) => (m.open = false));
      open[0]?.querySelector('summary')?.focus();
    };
    document.addEventListener('click', clicked);
    document.addEventListener('keydown', pressed);
    return () => {
      document.removeEventListener('click', clicked);
      document.removeEventListener('keydown', pressed);
    };
  }, []);
  return bar;
}

/** A preset counted from the click, not from when the menu was drawn (a pane stays open for hours). */
function freshPreset(label: string): Date | undefined {
  return snoozePresets().find((p) => p.label === label)?.until;
}

function closeMenu(event: Event): void {
  (event.currentTarget as HTMLElement | null)?.closest('details')?.removeAttribute('open');
}

/** The inbox's members, and the assignee too when they are not one (a Manager from outside). */
function withCurrent(members: Person[], people: Person[], assigneeUserId: string | null): Person[] {
  if (!assigneeUserId || members.some((m) => m.userId === assigneeUserId)) return members;
  return [...members, people.find((p) => p.userId === assigneeUserId) ?? { userId: assigneeUserId, name: 'A member', email: '' }];
}
