/**
 * Members (`#/members`): who belongs to the workspace and with which roles, the invitations not
 * yet answered, and — for those allowed — inviting, changing roles, removing, signing someone out
 * everywhere and issuing a password reset link. Nobody acts on a member at or above their own
 * role (spec 2.14); the service says why when it refuses, and that message is shown.
 */
import { useState } from 'preact/hooks';
import { canGrant, outranks, ROLES, type Role } from '../../../../core/identity/roles.ts';
import { del, get, itemsOf, post } from '../api.ts';
import { Button, Card, ConfirmButton, EmptyState, ErrorNote, Loading, Notice, PageHeader, SecretBox, Table, TextField, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import type { Route } from '../router.ts';
import { useSession } from '../session.ts';
import { MemberRow, type Member } from './members-row.tsx';
import { RoleChoice, roleNames } from './members-roles.tsx';

interface Invitation {
  invitationId: string;
  email: string;
  roles: Role[];
  status: string;
  deliveredBy: 'mail' | 'link';
  expiresAt: string;
  inviterName?: string | null;
  createdAt?: string;
  /** Only in the answer of the invitation, when no mail is configured. */
  invitationUrl?: string;
}

export function MembersPage(_: { route: Route }) {
  const session = useSession();
  const writes = session.may('members', 'write');
  const members = useLoad(async () => itemsOf<Member>(await get('/v3/members', { per_page: 100 })), []);
  const invitations = useLoad(async () => itemsOf<Invitation>(await get('/v3/members/invitations', { per_page: 100 })), []);

  return (
    <>
      <PageHeader
        title="Members"
        description={writes ? 'People of this workspace and their roles. You act only on members below your own role.' : 'People of this workspace and their roles. Your role can see them but not change them.'}
      />
      {writes && <InviteMember onInvited={invitations.reload} />}
      <Card title="Members">
        <ErrorNote error={members.error} />
        {!members.data ? (
          !members.error && <Loading />
        ) : (
          <Table caption="Members" head={writes ? ['Name', 'Email', 'Roles', 'Joined', 'Actions'] : ['Name', 'Email', 'Roles', 'Joined']}>
            {members.data.map((m) => (
              <MemberRow member={m} onChanged={members.reload} />
            ))}
          </Table>
        )}
      </Card>
      <Card title="Pending invitations">
        <ErrorNote error={invitations.error} />
        {!invitations.data ? (
          !invitations.error && <Loading rows={1} />
        ) : invitations.data.length === 0 ? (
          <EmptyState title="No pending invitations">{writes && 'Invite someone above; the invitation waits here until they answer it (7 days).'}</EmptyState>
        ) : (
          <Table caption="Pending invitations" head={writes ? ['Email', 'Roles', 'Invited by', 'Expires', 'Actions'] : ['Email', 'Roles', 'Invited by', 'Expires']}>
            {invitations.data.map((i) => (
              <InvitationRow invitation={i} onCancelled={invitations.reload} />
            ))}
          </Table>
        )}
      </Card>
    </>
  );
}

function InviteMember({ onInvited }: { onInvited: () => void }) {
  const { workspace } = useSession();
  const grantable = ROLES.filter((r) => canGrant(workspace.roles, r));
  const [email, setEmail] = useState('');
  const [roles, setRoles] = useState<Role[]>(grantable.includes('AGENT') ? ['AGENT'] : []);
  const [sent, setSent] = useState<Invitation>();
  const invite = useAction();

  const submit = async (e: Event) => {
    e.preventDefault();
    const invitation = await invite.run(() => post<Invitation>('/v3/members', { email, roles }));
    if (invitation) {
      setSent(invitation);
      setEmail('');
      onInvited();
    }
  };

  return (
    <Card title="Invite someone">
      <form class="stack" onSubmit={submit} aria-label="Invite someone">
        <TextField label="Email" type="email" required value={email} onValue={setEmail} autoComplete="off" />
        <RoleChoice legend="Roles" offered={grantable} chosen={roles} onChosen={setRoles} />
        <div class="form-actions">
          <Button type="submit" pending={invite.pending}>
            Send invitation
          </Button>
        </div>
      </form>
      <ErrorNote error={invite.error} prefix="No invitation was made." />
      {sent && <InvitationSent invitation={sent} />}
    </Card>
  );
}

/** With mail configured the person gets a mail; without it, the inviter passes the link on. */
function InvitationSent({ invitation }: { invitation: Invitation }) {
  return invitation.invitationUrl ? (
    <div class="stack" id="invitation-link">
      <p class="warning">
        No mail is configured, so nothing was sent: give this link to {invitation.email} yourself. It is shown only now, and works once until{' '}
        <When at={invitation.expiresAt} />.
      </p>
      <SecretBox label="Invitation link" value={invitation.invitationUrl} />
    </div>
  ) : (
    <Notice>
      Invitation mailed to {invitation.email} (valid until <When at={invitation.expiresAt} />
      ).
    </Notice>
  );
}

function InvitationRow({ invitation, onCancelled }: { invitation: Invitation; onCancelled: () => void }) {
  const { workspace, may } = useSession();
  const cancel = useAction();
  const mayCancel = may('members', 'write') && outranks(workspace.roles, invitation.roles);
  const revoke = async () => {
    if (await cancel.run(() => del(`/v3/members/invitations/${encodeURIComponent(invitation.invitationId)}`))) onCancelled();
  };
  return (
    <tr aria-label={`Invitation ${invitation.email}`}>
      <td>{invitation.email}</td>
      <td>{roleNames(invitation.roles)}</td>
      <td>{invitation.inviterName ?? <span class="muted">—</span>}</td>
      <td>
        <When at={invitation.expiresAt} />
      </td>
      {may('members', 'write') && (
        <td>
          {mayCancel && (
            <ConfirmButton confirm="Cancel it?" onConfirm={revoke} pending={cancel.pending}>
              Cancel invitation
            </ConfirmButton>
          )}
          <ErrorNote error={cancel.error} />
        </td>
      )}
    </tr>
  );
}
