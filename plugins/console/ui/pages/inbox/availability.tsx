/**
 * The agent's own availability (`GET/PATCH /v3/helpdesk/profile/availability`: round-robin hands
 * new conversations to those online) and their colleagues' presence, live from the websocket's
 * `presence.update`, named from `GET /v3/members`.
 */
import { get, patch } from '../../api.ts';
import { ErrorNote } from '../../components.tsx';
import { useAction, useLoad } from '../../data.ts';
import { useLive } from '../../live.ts';
import { useSession } from '../../session.ts';
import type { Named } from './inbox-model.ts';

const AVAILABILITIES = [
  { value: 'online', label: 'Online' },
  { value: 'busy', label: 'Busy' },
  { value: 'offline', label: 'Offline' },
] as const;

interface Availability {
  userId: string;
  availability: 'online' | 'busy' | 'offline';
  status: 'online' | 'busy' | 'offline';
}

export function AvailabilityToggle() {
  const own = useLoad(() => get<Availability>('/v3/helpdesk/profile/availability'), []);
  const write = useAction();
  const writes = useSession().may('helpdesk.work', 'write');
  const value = own.data?.availability ?? 'online';
  return (
    <div class="availability">
      <label for="own-availability">Your status</label>
      <span class={`presence-dot ${value}`} aria-hidden="true" />
      <select
        id="own-availability"
        value={value}
        disabled={!own.data || !writes || write.pending}
        onChange={async (e) => {
          const availability = (e.currentTarget as HTMLSelectElement).value;
          if (await write.run(() => patch('/v3/helpdesk/profile/availability', { availability }))) await own.reload();
        }}
      >
        {AVAILABILITIES.map((a) => (
          <option value={a.value}>{a.label}</option>
        ))}
      </select>
      <ErrorNote error={write.error ?? own.error} />
    </div>
  );
}

/** Who else is here: every member with their shown status, online ones first. */
export function Colleagues({ members }: { members: Named[] }) {
  const live = useLive();
  const me = useSession().user.userId;
  const rank = { online: 0, busy: 1, offline: 2 } as Record<string, number>;
  const others = members
    .filter((m) => m.id !== me)
    .map((m) => ({ ...m, status: live.presence[m.id] ?? 'offline' }))
    .sort((a, b) => (rank[a.status] ?? 3) - (rank[b.status] ?? 3) || a.name.localeCompare(b.name));
  const online = others.filter((m) => m.status === 'online').length;
  if (others.length === 0) return null;
  return (
    <details class="colleagues">
      <summary>
        Colleagues <span class="muted">({online} online)</span>
      </summary>
      <ul>
        {others.map((m) => (
          <li>
            <span class={`presence-dot ${m.status}`} aria-hidden="true" /> {m.name} <span class="muted">{m.status}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
