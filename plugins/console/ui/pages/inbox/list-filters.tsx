/**
 * What the list shows: the view (Mine, Unassigned, All, with their open and unread counts), an
 * inbox or a team, the search box and the filters (status, priority, label, assignee, date,
 * sort). Every change rewrites the address's query (inbox-model.ts).
 */
import { useEffect, useState } from 'preact/hooks';
import type { Counts, ListState, Named } from './inbox-model.ts';
import { PRIORITIES, SORTS, STATUSES, VIEWS } from './inbox-model.ts';

export function ViewTabs({ state, counts, onChange }: { state: ListState; counts: Counts | undefined; onChange: (next: Partial<ListState>) => void }) {
  return (
    <nav class="view-tabs" aria-label="Views">
      {VIEWS.map((v) => {
        const badge = counts?.views[v.value];
        return (
          <button type="button" class="view-tab" aria-pressed={state.view === v.value} onClick={() => onChange({ view: v.value })}>
            {v.label}
            {badge && <CountBadge open={badge.open} unread={badge.unread} />}
          </button>
        );
      })}
    </nav>
  );
}

/** The numbers are drawn as bubbles; a screen reader hears them in words. */
function CountBadge({ open, unread }: { open: number; unread: number }) {
  const words = `${open} open${unread > 0 ? `, ${unread} unread` : ''}`;
  return (
    <span class="view-count" title={words}>
      <span class="sr-only">({words})</span>
      <span aria-hidden="true">{open}</span>
      {unread > 0 && (
        <span class="view-unread" aria-hidden="true">
          {unread}
        </span>
      )}
    </span>
  );
}

/** An inbox or a team narrows the view; inboxes show their open and unread counts. */
export function ScopeSelect({ state, counts, inboxes, teams, onChange }: { state: ListState; counts: Counts | undefined; inboxes: Named[]; teams: Named[]; onChange: (next: Partial<ListState>) => void }) {
  const value = state.inboxId ? `inbox:${state.inboxId}` : state.teamId ? `team:${state.teamId}` : '';
  const badge = (inboxId: string) => {
    const c = counts?.inboxes.find((i) => i.inboxId === inboxId);
    return c ? ` (${c.open} open${c.unread ? `, ${c.unread} unread` : ''})` : '';
  };
  return (
    <div class="field compact">
      <label for="inbox-scope">Inbox or team</label>
      <select
        id="inbox-scope"
        value={value}
        onChange={(e) => {
          const [kind, id = ''] = (e.currentTarget as HTMLSelectElement).value.split(':');
          onChange({ inboxId: kind === 'inbox' ? id : '', teamId: kind === 'team' ? id : '' });
        }}
      >
        <option value="">Every inbox</option>
        {inboxes.length > 0 && (
          <optgroup label="Inboxes">
            {inboxes.map((i) => (
              <option value={`inbox:${i.id}`}>{`${i.name}${badge(i.id)}`}</option>
            ))}
          </optgroup>
        )}
        {teams.length > 0 && (
          <optgroup label="Teams">
            {teams.map((t) => (
              <option value={`team:${t.id}`}>{t.name}</option>
            ))}
          </optgroup>
        )}
        {/* An inbox of the address the member does not see (an Agent's link to another's inbox). */}
        {state.inboxId && !inboxes.some((i) => i.id === state.inboxId) && <option value={`inbox:${state.inboxId}`}>Another inbox</option>}
      </select>
    </div>
  );
}

/** The search box: the address follows the typing after a short pause. */
export function SearchBox({ value, onSearch }: { value: string; onSearch: (s: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text === value) return;
    const timer = setTimeout(() => onSearch(text), 300);
    return () => clearTimeout(timer);
  }, [text]);
  return (
    <form
      class="search-box"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(text);
      }}
    >
      <label for="inbox-search" class="sr-only">
        Search conversations
      </label>
      <input id="inbox-search" type="search" placeholder="Search name, phone, e-mail, messages  (f)" value={text} maxLength={200} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} />
    </form>
  );
}

export function FilterFields({ state, labels, members, onChange }: { state: ListState; labels: Named[]; members: Named[]; onChange: (next: Partial<ListState>) => void }) {
  const active = [state.status !== 'OPEN', state.priority, state.labels, state.assigneeUserId, state.lastActivityFrom, state.sort !== 'last_activity'].filter(Boolean).length;
  const select = (key: keyof ListState) => (e: Event) => onChange({ [key]: (e.currentTarget as HTMLSelectElement).value });
  return (
    <details class="filters">
      <summary>
        Filters and sort{active > 0 && <span class="tag">{active} set</span>}
      </summary>
      <div class="filter-grid">
        <div class="field compact">
          <label for="filter-status">Status</label>
          <select id="filter-status" value={state.status} onChange={select('status')}>
            {STATUSES.map((s) => (
              <option value={s}>{s.charAt(0) + s.slice(1).toLowerCase()}</option>
            ))}
            <option value="">Any status</option>
          </select>
        </div>
        <div class="field compact">
          <label for="filter-priority">Priority</label>
          <select id="filter-priority" value={state.priority} onChange={select('priority')}>
            <option value="">Any priority</option>
            {PRIORITIES.map((p) => (
              <option value={p}>{p.charAt(0) + p.slice(1).toLowerCase()}</option>
            ))}
          </select>
        </div>
        <div class="field compact">
          <label for="filter-label">Label</label>
          <select id="filter-label" value={state.labels} onChange={select('labels')}>
            <option value="">Any label</option>
            {labels.map((l) => (
              <option value={l.name}>{l.name}</option>
            ))}
          </select>
        </div>
        <div class="field compact">
          <label for="filter-assignee">Assignee</label>
          <select id="filter-assignee" value={state.assigneeUserId} onChange={select('assigneeUserId')}>
            <option value="">Anyone</option>
            <option value="none">Nobody</option>
            {members.map((m) => (
              <option value={m.id}>{m.name}</option>
            ))}
          </select>
        </div>
        <div class="field compact">
          <label for="filter-since">Active since</label>
          <input id="filter-since" type="date" value={state.lastActivityFrom} onChange={(e) => onChange({ lastActivityFrom: (e.currentTarget as HTMLInputElement).value })} />
        </div>
        <div class="field compact">
          <label for="filter-sort">Sort</label>
          <select id="filter-sort" value={state.sort} onChange={select('sort')}>
            {SORTS.map((s) => (
              <option value={s.value}>{s.label}</option>
            ))}
          </select>
        </div>
      </div>
    </details>
  );
}
