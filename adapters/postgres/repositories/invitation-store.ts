import type { Kysely, Selectable } from 'kysely';
import type { Invitation, InvitationStore } from '../../../core/identity/invitations.ts';
import type { InvitationStatus } from '../../../core/identity/invitation-status.ts';
import type { Role } from '../../../core/identity/roles.ts';
import { page, pageOffset } from '../../../core/shared/pagination.ts';
import { conflict } from '../../../core/shared/errors.ts';
import { isUniqueViolation } from '../errors.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import { lockRow } from '../keyed-row.ts';
import type { Database, InvitationsTable } from '../schema.ts';

export function invitationStore(db: Kysely<Database>): InvitationStore {
  return {
    async insert(i) {
      await db
        .insertInto('invitations')
        .values({ ...snakeCased(i), accepted_by: null })
        .execute()
        .catch((error: unknown) => {
          // Two invitations to one email at the same moment: the second finds the first's row only after it commits.
          if (isUniqueViolation(error, 'invitations_pending_idx')) throw conflict(`An invitation to ${i.email} is being made at this moment; try again`);
          throw error;
        });
    },

    async lockPending(workspaceId, email) {
      return lockRow(db, 'invitations', { workspace_id: workspaceId, email, status: 'PENDING' }, toInvitation);
    },

    async lockByTokenHash(tokenHash) {
      const row = await db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).forUpdate().executeTakeFirst();
      return row && toInvitation(row);
    },

    async lockInWorkspace(workspaceId, id) {
      const row = await db.selectFrom('invitations').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).forUpdate().executeTakeFirst();
      return row && toInvitation(row);
    },

    async setStatus(id, status, at, acceptedBy) {
      await db
        .updateTable('invitations')
        .set({ status, updated_at: at, ...(acceptedBy && { accepted_by: acceptedBy }) })
        .where('id', '=', id)
        .execute();
    },

    async listPending(workspaceId, now, request) {
      const query = db
        .selectFrom('invitations')
        .leftJoin('users', 'users.id', 'invitations.invited_by')
        .where('invitations.workspace_id', '=', workspaceId)
        .where('invitations.status', '=', 'PENDING')
        .where('invitations.expires_at', '>', now);
      const { total } = await query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
      const rows = await query
        .selectAll('invitations')
        .select('users.name as inviter_name')
        .orderBy('invitations.created_at')
        .orderBy('invitations.id')
        .limit(request.perPage)
        .offset(pageOffset(request))
        .execute();
      return page(
        rows.map(({ inviter_name, ...row }) => ({ ...toInvitation(row), inviterName: inviter_name })),
        Number(total),
        request,
      );
    },

    async markEmailVerified(userId, at) {
      await db.updateTable('users').set({ email_verified_at: at }).where('id', '=', userId).where('email_verified_at', 'is', null).execute();
    },

    async isEmailVerified(userId) {
      const row = await db.selectFrom('users').select('email_verified_at').where('id', '=', userId).executeTakeFirst();
      return Boolean(row?.email_verified_at);
    },

    async workspacesJoinedByLink(userId) {
      const rows = await db
        .selectFrom('invitations')
        .select('workspace_id')
        .distinct()
        .where('accepted_by', '=', userId)
        .where('status', '=', 'ACCEPTED')
        .where('delivered_by', '=', 'link')
        .execute();
      return rows.map((row) => row.workspace_id);
    },

    async renameUser(userId, name) {
      await db.updateTable('users').set({ name }).where('id', '=', userId).execute();
    },
  };
}

/** `accepted_by` is the store's own record (who joined by the link), not part of the invitation. */
function toInvitation(row: Selectable<InvitationsTable>): Invitation {
  const { accepted_by: _acceptedBy, ...invitation } = row;
  return {
    ...camelCased(invitation),
    roles: row.roles as Role[],
    deliveredBy: row.delivered_by as Invitation['deliveredBy'],
    status: row.status as InvitationStatus,
  };
}
