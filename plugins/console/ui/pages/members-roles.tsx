/** Roles of a member as words, and the ticks to choose them (only roles the chooser may grant). */
import type { Role } from '../../../../core/identity/roles.ts';
import { Checkbox } from '../components.tsx';

const ROLE_NAMES: Record<Role, string> = { OWNER: 'Owner', ADMIN: 'Admin', MANAGER: 'Manager', AGENT: 'Agent' };

const ABOUT: Record<Role, string> = {
  OWNER: 'everything, billing and deleting the workspace included',
  ADMIN: 'members, connections, API tokens',
  MANAGER: 'connections, sending, inviting Agents, helpdesk set-up',
  AGENT: 'works conversations in the helpdesk',
};

export function roleNames(roles: readonly Role[]): string {
  return roles.map((r) => ROLE_NAMES[r]).join(', ');
}

export function RoleChoice({ legend, offered, chosen, onChosen }: { legend: string; offered: readonly Role[]; chosen: Role[]; onChosen: (roles: Role[]) => void }) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {offered.length === 0 && <p class="hint">Your role cannot grant any role.</p>}
      <div class="choices">
        {offered.map((role) => (
          <Checkbox label={ROLE_NAMES[role]} hint={ABOUT[role]} checked={chosen.includes(role)} onChecked={(on) => onChosen(on ? [...chosen.filter((r) => r !== role), role] : chosen.filter((r) => r !== role))} />
        ))}
      </div>
    </fieldset>
  );
}
