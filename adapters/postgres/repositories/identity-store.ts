import type { Kysely } from 'kysely';
import type { IdentityStore, Member, Membership, User, Workspace } from '../../../core/identity/identity.ts';
import type { Role } from '../../../core/identity/roles.ts';
import type { PlanName } from '../../../core/plans/plans.ts';
import { page, pageOffset, type PageRequest } from '../../../core/shared/pagination.ts';
import type { Database, WorkspaceRow } from '../schema.ts';

export function identityStore(db: Kysely<Database>): IdentityStore {
  return {
    async findUserByEmail(email) {
      const row = await db.selectFrom('users').select(['id', 'email', 'name', 'created_at']).where('email', '=', email).executeTakeFirst();
      return row && toUser(row);
    },

    async getUser(id) {
      const row = await db.selectFrom('users').select(['id', 'email', 'name', 'created_at']).where('id', '=', id).executeTakeFirst();
      return row && toUser(row);
    },

    async findCredentialsByEmail(email) {
      const row = await db.selectFrom('users').select(['id', 'email', 'name', 'created_at', 'password_hash']).where('email', '=', email).executeTakeFirst();
      return row && { user: toUser(row), passwordHash: row.password_hash };
    },

    async lockCredentials(userId) {
      const row = await db
        .selectFrom('users')
        .select(['id', 'email', 'name', 'created_at', 'password_hash'])
        .where('id', '=', userId)
        .forUpdate()
        .executeTakeFirst();
      return row && { user: toUser(row), passwordHash: row.password_hash };
    },

    async setPasswordHash(userId, passwordHash) {
      await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
      // Whoever signed in with the old password (or took the session) is out; the password page
      // starts a new session after this.
      await db.deleteFrom('web_sessions').where('user_id', '=', userId).execute();
    },

    async insertUser(user) {
      await db.insertInto('users').values({ id: user.id, email: user.email, name: user.name, password_hash: null, created_at: user.createdAt }).execute();
    },

    async insertWorkspace(w) {
      await db
        .insertInto('workspaces')
        .values({ id: w.id, name: w.name, is_personal: w.isPersonal, plan: w.plan, created_at: w.createdAt })
        .execute();
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
      await db.insertInto('memberships').values({ workspace_id: m.workspaceId, user_id: m.userId, roles: m.roles, created_at: m.createdAt }).execute();
    },

    async getMembership(workspaceId, userId) {
      const row = await db
        .selectFrom('memberships')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row && toMembership(row);
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
      return rows.map((row) => ({ ...toWorkspace(row), roles: row.roles as Role[] }));
    },

    async listMembers(workspaceId, request: PageRequest) {
      let query = db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .where('memberships.workspace_id', '=', workspaceId);
      if (request.search) {
        const pattern = `%${escapeLike(request.search)}%`;
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
      return page(rows.map(toMember), Number(total), request);
    },

    async getMember(workspaceId, userId) {
      const row = await db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select(['memberships.workspace_id', 'memberships.user_id', 'memberships.roles', 'memberships.created_at', 'users.email', 'users.name'])
        .where('memberships.workspace_id', '=', workspaceId)
        .where('memberships.user_id', '=', userId)
        .executeTakeFirst();
      return row && toMember(row);
    },

    async setRoles(workspaceId, userId, roles) {
      await db.updateTable('memberships').set({ roles }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
    },

    async deleteMembership(workspaceId, userId) {
      await db.deleteFrom('memberships').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
    },
  };
}

/** `%` and `_` typed by a user are text to find, not wildcards. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function toUser(row: { id: string; email: string; name: string; created_at: Date }): User {
  return { id: row.id, email: row.email, name: row.name, createdAt: row.created_at };
}

function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    isPersonal: row.is_personal,
    plan: row.plan as PlanName,
    createdAt: row.created_at,
  };
}

function toMembership(row: { workspace_id: string; user_id: string; roles: string[]; created_at: Date }): Membership {
  return { workspaceId: row.workspace_id, userId: row.user_id, roles: row.roles as Role[], createdAt: row.created_at };
}

function toMember(row: { workspace_id: string; user_id: string; roles: string[]; created_at: Date; email: string; name: string }): Member {
  return { ...toMembership(row), email: row.email, name: row.name };
}

