/**
 * One member in the table, with what the signed-in member may do to them: change roles and
 * remove (only below one's own role), sign out everywhere (Owners), and a password reset link
 * (Owners and Admins, for members not above them) shown once with its expiry.
 */
import { useState } from 'preact/hooks';
import { canGrant, outranks, ROLES, topRank, type Role } from '../../../../core/identity/roles.ts';
import { del, patch, post } from '../api.ts';
import { Button, ConfirmButton, Dialog, ErrorNote, Notice, SecretBox, When } from '../components.tsx';
import { useAction } from '../data.ts';
import { useSession } from '../session.ts';
import { RoleChoice, roleNames } from './members-roles.tsx';

export interface Member {
  userId: string;
  email: string;
  name: string;
  roles: Role[];
  joinedAt: string;
}

export function MemberRow({ member, onChanged }: { member: Member; onChanged: () => void }) {
  const { user, workspace, may } = useSession();
  const me = member.userId === user.userId;
  const writes = may('members', 'write');
  const above = writes && !me && outranks(workspace.roles, member.roles);
  const owner = workspace.roles.includes('OWNER');
  const resets = writes && !me && (owner || workspace.roles.includes('ADMIN')) && topRank(member.roles) <= topRank(workspace.roles);
  const [editing, setEditing] = useState(false);
  const [outcome, setOutcome] = useState<{ reset?: { url: string; expiresAt: string }; ended?: number }>();
  const action = useAction();
  const path = `/v3/members/${encodeURIComponent(member.userId)}`;

  const remove = async () => {
    if (await action.run(() => del(path))) onChanged();
  };
  const signOut = async () => {
    const answer = await action.run(() => del<{ ended: number }>(`${path}/sessions`));
    if (answer) setOutcome({ ended: answer.ended });
  };
  const resetLink = async () => {
    const answer = await action.run(() => post<{ url: string; expiresAt: string }>(`${path}/password-reset`));
    if (answer) setOutcome({ reset: answer });
  };

  return (
    <>
      <tr aria-label={member.name ? `${member.name} (${member.email})` : member.email}>
        <td>
          {member.name || <span class="muted">—</span>} {me && <span class="badge neutral">you</span>}
        </td>
        <td>{member.email}</td>
        <td>{roleNames(member.roles)}</td>
        <td>
          <When at={member.joinedAt} />
        </td>
        {writes && (
          <td class="member-actions">
            {(above || resets || (owner && !me)) && (
              <div class="actions">
                {above && (
                  <Button variant="secondary" onClick={() => setEditing(true)}>
                    Change roles
                  </Button>
                )}
                {resets && (
                  <Button variant="secondary" onClick={resetLink} pending={action.pending}>
                    Reset link
                  </Button>
                )}
                {owner && !me && (
                  <ConfirmButton confirm="End all their sessions?" onConfirm={signOut} pending={action.pending} variant="secondary">
                    Sign out everywhere
                  </ConfirmButton>
                )}
                {above && (
                  <ConfirmButton confirm="Remove them now?" onConfirm={remove} pending={action.pending}>
                    Remove
                  </ConfirmButton>
                )}
              </div>
            )}
            <Dialog title={`Roles of ${member.name || member.email}`} open={editing} onClose={() => setEditing(false)}>
              <ChangeRoles
                member={member}
                offered={ROLES.filter((r) => canGrant(workspace.roles, r))}
                onSaved={() => {
                  setEditing(false);
                  onChanged();
                }}
              />
            </Dialog>
          </td>
        )}
      </tr>
      {/* What an action answered (a refusal, a link to pass on) spans the whole table below the member. */}
      {(action.error || outcome) && (
        <tr class="member-outcome">
          <td colSpan={5}>
            <ErrorNote error={action.error} />
            {outcome?.ended !== undefined && <Notice>Signed out everywhere: {outcome.ended === 1 ? '1 session' : `${outcome.ended} sessions`} ended.</Notice>}
            {outcome?.reset && (
              <div class="stack">
                <SecretBox label={`Password reset link for ${member.email}`} value={outcome.reset.url} />
                <p class="hint">
                  Give it to them yourself: it works once, until <When at={outcome.reset.expiresAt} />. Whoever holds it can set the password.
                </p>
              </div>
            )}
          </td>
        </tr>
      )}
    </>
  );
}

function ChangeRoles({ member, offered, onSaved }: { member: Member; offered: Role[]; onSaved: () => void }) {
  const [roles, setRoles] = useState<Role[]>(member.roles.filter((r) => offered.includes(r)));
  const save = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await save.run(() => patch(`/v3/members/${encodeURIComponent(member.userId)}`, { roles }))) onSaved();
  };
  return (
    <form onSubmit={submit} aria-label="Change roles">
      <RoleChoice legend="Roles" offered={offered} chosen={roles} onChosen={setRoles} />
      <ErrorNote error={save.error} prefix="Roles not changed." />
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          Save roles
        </Button>
      </div>
    </form>
  );
}
