import type { Kysely, Selectable } from 'kysely';
import { camelCased, containing, findInWorkspace, pageOfRows, snakeCased, uniqueViolationAs, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import { duplicateShortCode, shortCodeKey, type CannedResponse, type CannedResponseStore, type CannedResponseStores } from '../../../core/helpdesk/library/canned-responses.ts';
import type { MacroAction } from '../../../core/helpdesk/library/macro-actions.ts';
import type { Macro, MacroStore, MacroStores } from '../../../core/helpdesk/library/macros.ts';
import { helpdeskDb, type HelpdeskCannedResponsesTable, type HelpdeskMacrosTable } from '../tables.ts';
import { workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { helpdeskMessageStores } from '../conversations/store.ts';

/** The stores of what agents reuse: canned responses and macros. */

const toCannedResponse = (row: Selectable<HelpdeskCannedResponsesTable>): CannedResponse => {
  const { short_code_key: _key, ...response } = row;
  return camelCased(response);
};

export function cannedResponseStore(base: Kysely<Database>): CannedResponseStore {
  const db = helpdeskDb(base);
  const rethrow = uniqueViolationAs('helpdesk_canned_responses_short_code_key', duplicateShortCode);
  return {
    async list(workspaceId, request) {
      let query = db.selectFrom('helpdesk_canned_responses').where('workspace_id', '=', workspaceId);
      if (request.search) {
        const pattern = containing(request.search);
        query = query.where((eb) => eb.or([eb('short_code', 'ilike', pattern), eb('content', 'ilike', pattern)]));
      }
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('short_code_key').orderBy('id'), toCannedResponse);
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_canned_responses', workspaceId, id, toCannedResponse);
    },
    async insert(c) {
      await db
        .insertInto('helpdesk_canned_responses')
        .values({ ...snakeCased(c), short_code_key: shortCodeKey(c.shortCode) })
        .execute()
        .catch(rethrow);
    },
    async update(c) {
      await db
        .updateTable('helpdesk_canned_responses')
        .set({ short_code: c.shortCode, short_code_key: shortCodeKey(c.shortCode), content: c.content, updated_at: c.updatedAt })
        .where('id', '=', c.id)
        .execute()
        .catch(rethrow);
    },
    async delete(id) {
      await db.deleteFrom('helpdesk_canned_responses').where('id', '=', id).execute();
    },
  };
}

export function cannedResponseStores(db: Kysely<Database>): CannedResponseStores {
  return { cannedResponses: cannedResponseStore(db), plans: workspacePlans(db) };
}

const toMacro = (row: Selectable<HelpdeskMacrosTable>): Macro => ({
  ...camelCased(row),
  actions: (typeof row.actions === 'string' ? JSON.parse(row.actions) : row.actions) as MacroAction[],
});

export function macroStore(base: Kysely<Database>): MacroStore {
  const db = helpdeskDb(base);
  return {
    async list(workspaceId, userId, request) {
      let query = db
        .selectFrom('helpdesk_macros')
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb.or([eb('visibility', '=', 'workspace'), eb('created_by', '=', userId)]));
      if (request.search) query = query.where('name', 'ilike', containing(request.search));
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('name').orderBy('id'), toMacro);
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_macros', workspaceId, id, toMacro);
    },
    async insert(m) {
      await db
        .insertInto('helpdesk_macros')
        .values({ ...snakeCased(m), actions: JSON.stringify(m.actions) })
        .execute();
    },
    async update(m) {
      await db.updateTable('helpdesk_macros').set({ name: m.name, visibility: m.visibility, actions: JSON.stringify(m.actions), updated_at: m.updatedAt }).where('id', '=', m.id).execute();
    },
    async delete(id) {
      await db.deleteFrom('helpdesk_macros').where('id', '=', id).execute();
    },
  };
}

export function macroStores(base: Kysely<Database>): MacroStores {
  const db = helpdeskDb(base);
  return {
    macros: macroStore(base),
    plans: workspacePlans(base),
    async workspaceMembers(workspaceId, userIds) {
      const ids = userIds.filter(isUuid);
      if (ids.length === 0) return [];
      const rows = await db.selectFrom('memberships').select('user_id').where('workspace_id', '=', workspaceId).where('user_id', 'in', ids).execute();
      return rows.map((r) => r.user_id);
    },
    async workspaceTeams(workspaceId, teamIds) {
      const ids = teamIds.filter(isUuid);
      if (ids.length === 0) return [];
      const rows = await db.selectFrom('helpdesk_teams').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
      return rows.map((r) => r.id);
    },
  };
}

/** Running a macro on a conversation: the conversation's ports and the macros, in one transaction. */
export function macroRunStores(base: Kysely<Database>, ctx: PluginContext) {
  return { ...helpdeskMessageStores(base, ctx), macros: macroStore(base) };
}
