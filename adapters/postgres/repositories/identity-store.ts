import { containing } from '../like-pattern.ts';
import type { Kysely } from 'kysely';
import type { IdentityStore, User, Workspace } from '../../../core/identity/identity.ts';
import type { Role } from '../../../core/identity/roles.ts';
import type { PlanName } from '../../../core/plans/plans.ts';
import { page, pageOffset, type PageRequest } from '../../../core/shared/pagination.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import { findRow } from '../keyed-row.ts';
import type { Database, WorkspaceRow } from '../schema.ts';

export function identityStore(db: Kysely<Database>): IdentityStore {
  return {
    async findUserByEmail(email) {
      const row = await db.selectFrom('users').select(['id', 'email', 'name', 'created_at']).where('email', '=', email).executeTakeFirst();
      return row && toUser(row);
    },

    async anyUser() {
      return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
    },

    async getUser(id) {
      const row = await db.selectFrom('users').select(['id', 'email', 'name', 'created_at']).where('id', '=', id).executeTakeFirst();
      return row && toUser(row);
    },

    async findCredentialsByEmail(email) {
      const row = await db.selectFrom('users').select(['id', 'email', 'name', 'created_at', 'password_hash']).where('email', '=', email).executeTakeFirst();
      return row && toCredentials(row);
    },

    async lockCredentials(userId) {
      const row = await db
        .selectFrom('users')
        .select(['id', 'email', 'name', 'created_at', 'password_hash'])
        .where('id', '=', userId)
        .forUpdate()
        .executeTakeFirst();
      return row && toCredentials(row);
    },

    async setPasswordHash(userId, passwordHash) {
      await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
      // Whoever signed in with the old password (or took the session) is out; the password page
      // starts a new session after this.
      await db.deleteFrom('web_sessions').where('user_id', '=', userId).execute();
    },

    async insertUser(user) {
      await db.insertInto('users').values({ ...snakeCased(user), password_hash: null }).execute();
    },

    async insertWorkspace(w) {
      await db.insertInto('workspaces').values(snakeCased(w)).execute();
    },

    async updateWorkspace(id, patch) {
      const values = {
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.plan !== undefined && { plan: patch.plan }),
      };
      if (Object.keys(values).length === 0) return this.getWorkspace(id);
      const row = await db.updateTable('workspaces').set(values).where('id', '=', id).returningAll().executeTakeFirst();
      return row && toWorkspace(row);
    },

    async getWorkspace(id) {
      const row = await db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toWorkspace(row);
    },

    async lockWorkspace(id) {
      const row = await db.selectFrom('workspaces').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      return row && toWorkspace(row);
    },

    async insertMembership(m) {
      await db.insertInto('memberships').values(snakeCased(m)).execute();
    },

    async getMembership(workspaceId, userId) {
      return findRow(db, 'memberships', { workspace_id: workspaceId, user_id: userId }, toMembership);
    },

    async listWorkspacesOf(userId) {
      const rows = await db
        .selectFrom('memberships')
        .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
        .selectAll('workspaces')
        .select('memberships.roles')
        .where('memberships.user_id', '=', userId)
        .orderBy('workspaces.is_personal', 'desc')
        .orderBy('workspaces.created_at')
        .orderBy('workspaces.id')
        .execute();
      return rows.map(({ roles, ...row }) => ({ ...toWorkspace(row), roles: roles as Role[] }));
    },

    async listMembers(workspaceId, request: PageRequest) {
      let query = db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .where('memberships.workspace_id', '=', workspaceId);
      if (request.search) {
        const pattern = containing(request.search);
        query = query.where((eb) => eb.or([eb('users.email', 'ilike', pattern), eb('users.name', 'ilike', pattern)]));
      }
      const { total } = await query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
      const rows = await query
        .select(['memberships.workspace_id', 'memberships.user_id', 'memberships.roles', 'memberships.created_at', 'users.email', 'users.name'])
        .orderBy('memberships.created_at')
        .orderBy('memberships.user_id')
        .limit(request.perPage)
        .offset(pageOffset(request))
        .execute();
      return page(rows.map(toMembership), Number(total), request);
    },

    async getMember(workspaceId, userId) {
      const row = await db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select(['memberships.workspace_id', 'memberships.user_id', 'memberships.roles', 'memberships.created_at', 'users.email', 'users.name'])
        .where('memberships.workspace_id', '=', workspaceId)
        .where('memberships.user_id', '=', userId)
        .executeTakeFirst();
      return row && toMembership(row);
    },

    async setRoles(workspaceId, userId, roles) {
      await db.updateTable('memberships').set({ roles }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
    },

    async deleteMembership(workspaceId, userId) {
      await db.deleteFrom('memberships').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
    },
  };
}

function toUser(row: { id: string; email: string; name: string; created_at: Date }): User {
  return camelCased(row);
}

function toCredentials({ password_hash, ...user }: { id: string; email: string; name: string; created_at: Date; password_hash: string | null }) {
  return { user: toUser(user), passwordHash: password_hash };
}

function toWorkspace(row: WorkspaceRow): Workspace {
  return { ...camelCased(row), plan: row.plan as PlanName };
}

/** A membership row, with what the query joined to it (a member's email and name) carried along. */
function toMembership<Row extends { workspace_id: string; user_id: string; roles: string[]; created_at: Date }>(row: Row) {
  return { ...camelCased(row), roles: row.roles as Role[] };
}

