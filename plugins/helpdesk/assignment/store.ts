import { sql, type Kysely } from 'kysely';
import { camelCased, putRow, snakeCased, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { AssignmentSettingsStore, AssignmentSettingsStores } from '../../../core/helpdesk/assignment/assignment-settings.ts';
import type { AutoAssignDeps, AutoAssignmentStore, AutoAssignStores } from '../../../core/helpdesk/assignment/auto-assignment.ts';
import type { OwnPresenceStore } from '../../../core/helpdesk/assignment/availability.ts';
import { DEFAULT_PRESENCE_TTL_SECONDS, type Presence } from '../../../core/helpdesk/assignment/presence.ts';
import type { Role } from '../../../core/identity/roles.ts';
import { conversationStores, lockConversation } from '../conversations/store.ts';
import type { HelpdeskPresenceTable } from '../realtime/presence-store.ts';
import type { HelpdeskTables } from '../tables.ts';
import { inboxStore, workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';

type AssignmentDatabase = Database & HelpdeskTables & { helpdesk_presence: HelpdeskPresenceTable };
const assignmentDb = (base: Kysely<Database>) => base as unknown as Kysely<AssignmentDatabase>;

const presence = (row: { availability: Presence['availability'] | null; last_seen_at: Date | null }): Presence | undefined =>
  row.availability === null ? undefined : { availability: row.availability, lastSeenAt: row.last_seen_at };

/** The ports of core/helpdesk/assignment/auto-assignment.ts over the plugin's tables (migrations/0010_assignment.ts). */
export function autoAssignmentStore(base: Kysely<Database>): AutoAssignmentStore {
  const db = assignmentDb(base);
  return {
    lockConversation: (conversationId) => lockConversation(base, conversationId),
    async lockInbox(workspaceId, inboxId) {
      // Created on first use; a concurrent creator makes this wait for its commit, then do nothing.
      await db.insertInto('helpdesk_assignment_settings').values({ inbox_id: inboxId, workspace_id: workspaceId, updated_at: null }).onConflict((oc) => oc.column('inbox_id').doNothing()).execute();
      const row = await db.selectFrom('helpdesk_assignment_settings').select('enabled').where('inbox_id', '=', inboxId).forUpdate().executeTakeFirstOrThrow();
      return { enabled: row.enabled };
    },
    async pool(workspaceId, inboxId, teamId) {
      if (teamId === null) {
        const rows = await db
          .selectFrom('helpdesk_inbox_members as im')
          .innerJoin('memberships as ms', (join) => join.onRef('ms.user_id', '=', 'im.user_id').on('ms.workspace_id', '=', workspaceId))
          .leftJoin('helpdesk_presence as p', (join) => join.onRef('p.user_id', '=', 'im.user_id').on('p.workspace_id', '=', workspaceId))
          .select(['im.user_id', 'ms.roles', 'p.availability', 'p.last_seen_at'])
          .where('im.inbox_id', '=', inboxId)
          .execute();
        return rows.map((r) => ({ userId: r.user_id, roles: r.roles as Role[], inboxMember: true, presence: presence(r) }));
      }
      const rows = await db
        .selectFrom('helpdesk_team_members as tm')
        .innerJoin('helpdesk_teams as t', 't.id', 'tm.team_id')
        .innerJoin('memberships as ms', (join) => join.onRef('ms.user_id', '=', 'tm.user_id').onRef('ms.workspace_id', '=', 't.workspace_id'))
        .leftJoin('helpdesk_inbox_members as im', (join) => join.onRef('im.user_id', '=', 'tm.user_id').on('im.inbox_id', '=', inboxId))
        .leftJoin('helpdesk_presence as p', (join) => join.onRef('p.user_id', '=', 'tm.user_id').on('p.workspace_id', '=', workspaceId))
        .select(['tm.user_id', 'ms.roles', 'im.inbox_id', 'p.availability', 'p.last_seen_at'])
        .where('tm.team_id', '=', teamId)
        .where('t.workspace_id', '=', workspaceId)
        .execute();
      return rows.map((r) => ({ userId: r.user_id, roles: r.roles as Role[], inboxMember: r.inbox_id !== null, presence: presence(r) }));
    },
    async owner(workspaceId) {
      const row = await db
        .selectFrom('memberships')
        .select('user_id')
        .where('workspace_id', '=', workspaceId)
        .where(sql<boolean>`'OWNER' = any(roles)`)
        .orderBy('created_at')
        .orderBy('user_id')
        .limit(1)
        .executeTakeFirst();
      return row?.user_id;
    },
    async rotation(inboxId, teamId) {
      const row = await db
        .selectFrom('helpdesk_assignment_rotations')
        .select('last_user_id')
        .where('inbox_id', '=', inboxId)
        .where('team_id', teamId === null ? 'is' : '=', teamId)
        .executeTakeFirst();
      return { lastUserId: row?.last_user_id ?? null };
    },
    async saveRotation(workspaceId, inboxId, teamId, rotation, at) {
      // Under the inbox's lock (lockInbox): no other writer of this pool's row meanwhile.
      const updated = await db
        .updateTable('helpdesk_assignment_rotations')
        .set({ last_user_id: rotation.lastUserId, updated_at: at })
        .where('inbox_id', '=', inboxId)
        .where('team_id', teamId === null ? 'is' : '=', teamId)
        .returning('id')
        .executeTakeFirst();
      if (updated) return;
      await db.insertInto('helpdesk_assignment_rotations').values({ workspace_id: workspaceId, inbox_id: inboxId, team_id: teamId, last_user_id: rotation.lastUserId, updated_at: at }).execute();
    },
    async recordDecision(d) {
      await putRow(db, 'helpdesk_assignment_decisions', ['conversation_id'], snakeCased(d));
    },
    async decidedOnArrival(conversationId) {
      const row = await db.selectFrom('helpdesk_assignment_decisions').select('conversation_id').where('conversation_id', '=', conversationId).executeTakeFirst();
      return row !== undefined;
    },
  };
}

export function assignmentSettingsStore(base: Kysely<Database>): AssignmentSettingsStore {
  const db = assignmentDb(base);
  return {
    async get(inboxId) {
      const row = await db.selectFrom('helpdesk_assignment_settings').select(['inbox_id', 'enabled', 'updated_at']).where('inbox_id', '=', inboxId).executeTakeFirst();
      return row && camelCased(row);
    },
    async put(workspaceId, s) {
      await db
        .insertInto('helpdesk_assignment_settings')
        .values({ inbox_id: s.inboxId, workspace_id: workspaceId, enabled: s.enabled, updated_at: s.updatedAt })
        .onConflict((oc) => oc.column('inbox_id').doUpdateSet({ enabled: s.enabled, updated_at: s.updatedAt }))
        .execute();
    },
  };
}

export function ownPresenceStore(base: Kysely<Database>): OwnPresenceStore {
  const db = assignmentDb(base);
  return {
    async presenceOf(workspaceId, userId) {
      const row = await db.selectFrom('helpdesk_presence').select(['availability', 'last_seen_at']).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
      return row && presence(row);
    },
  };
}

/**
 * The ports of `autoAssign` bound to one transaction: the conversation use cases' stores (the
 * assignment goes through their update path and event log) and the assignment tables.
 */
export function assignmentStores(trx: Kysely<Database>, ctx: PluginContext): AutoAssignStores {
  return { ...conversationStores(trx, ctx), assignment: autoAssignmentStore(trx) };
}

/** The clock and the presence TTL the realtime presence uses (HELPDESK_PRESENCE_TTL_SECONDS). */
export function assignmentDeps(ctx: PluginContext): AutoAssignDeps {
  return { clock: ctx.clock, presenceTtlMs: (ctx.config.helpdeskPresenceTtlSeconds ?? DEFAULT_PRESENCE_TTL_SECONDS) * 1000 };
}

export function assignmentSettingsStores(base: Kysely<Database>, ctx: PluginContext): AssignmentSettingsStores {
  return { inboxes: inboxStore(base, ctx.box), plans: workspacePlans(base), settings: assignmentSettingsStore(base) };
}
