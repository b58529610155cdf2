import type { Kysely, Selectable } from 'kysely';
import { camelCased, containing, findRow, insertedIfAbsent, pageOfRows, putRow, snakeCased, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { CsatResponse, CsatResponseStore, CsatSettingsStore, CsatStores, CsatSurvey, CsatSurveyStore, SurveySendPorts } from '../../../core/helpdesk/csat/csat.ts';
import { conversationStore } from '../conversations/store.ts';
import { systemReply } from '../conversations/system-reply.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { inboxStore, workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { helpdeskDb, type HelpdeskCsatResponsesTable, type HelpdeskCsatSurveysTable } from '../tables.ts';

export function csatSettingsStore(base: Kysely<Database>): CsatSettingsStore {
  const db = helpdeskDb(base);
  return {
    async get(inboxId) {
      if (!isUuid(inboxId)) return undefined;
      return findRow(db, 'helpdesk_csat_settings', { inbox_id: inboxId }, camelCased);
    },
    async put(s) {
      await putRow(db, 'helpdesk_csat_settings', ['inbox_id'], snakeCased(s));
    },
  };
}

const toSurvey = (row: Selectable<HelpdeskCsatSurveysTable>): CsatSurvey => camelCased(row);

const toResponse = (row: Selectable<HelpdeskCsatResponsesTable>): CsatResponse => ({ ...camelCased(row), rating: Number(row.rating) });

export function csatSurveyStore(base: Kysely<Database>): CsatSurveyStore {
  const db = helpdeskDb(base);
  return {
    async claim(s) {
      // On Postgres a second claim waits for the first's transaction, then inserts nothing.
      return insertedIfAbsent(db.insertInto('helpdesk_csat_surveys').values(snakeCased(s)).onConflict((oc) => oc.column('conversation_id').doNothing()));
    },
    async setMessage(conversationId, messageId) {
      await db.updateTable('helpdesk_csat_surveys').set({ message_id: messageId }).where('conversation_id', '=', conversationId).execute();
    },
    async view(conversationId) {
      if (!isUuid(conversationId)) return undefined;
      const row = await db
        .selectFrom('helpdesk_csat_surveys as s')
        .innerJoin('helpdesk_inboxes as i', 'i.id', 's.inbox_id')
        .innerJoin('workspaces as w', 'w.id', 's.workspace_id')
        .selectAll('s')
        .select(['i.name as inbox_name', 'w.name as workspace_name'])
        .where('s.conversation_id', '=', conversationId.toLowerCase())
        .executeTakeFirst();
      if (!row) return undefined;
      const { inbox_name: inboxName, workspace_name: workspaceName, ...survey } = row;
      const answer = await db.selectFrom('helpdesk_csat_responses').selectAll().where('conversation_id', '=', row.conversation_id).executeTakeFirst();
      return { survey: toSurvey(survey), workspaceName, inboxName, response: answer ? toResponse(answer) : null };
    },
  };
}

export function csatResponseStore(base: Kysely<Database>): CsatResponseStore {
  const db = helpdeskDb(base);
  return {
    async insert(r) {
      // The primary key decides between two submissions at once: the second inserts nothing.
      return insertedIfAbsent(db.insertInto('helpdesk_csat_responses').values(snakeCased(r)).onConflict((oc) => oc.column('conversation_id').doNothing()));
    },
    async list(workspaceId, request, filters) {
      let query = db
        .selectFrom('helpdesk_csat_responses as r')
        .innerJoin('helpdesk_conversations as c', 'c.id', 'r.conversation_id')
        .where('r.workspace_id', '=', workspaceId);
      if (filters.inboxId) query = query.where('r.inbox_id', '=', filters.inboxId);
      if (filters.from) query = query.where('r.submitted_at', '>=', filters.from);
      if (filters.to) query = query.where('r.submitted_at', '<=', filters.to);
      if (request.search) query = query.where('r.comment', 'ilike', containing(request.search));
      return pageOfRows(
        query,
        request,
        (q) => q.selectAll('r').select(['c.display_id', 'c.contact_id']).orderBy('r.submitted_at', 'desc').orderBy('r.conversation_id', 'desc'),
        ({ display_id, contact_id, ...row }) => ({ ...toResponse(row), displayId: Number(display_id), contactId: contact_id }),
      );
    },
  };
}

/** The ports of the CSAT use cases, bound to one connection or transaction. */
export function csatStores(base: Kysely<Database>, ctx: PluginContext): CsatStores {
  return {
    settings: csatSettingsStore(base),
    surveys: csatSurveyStore(base),
    responses: csatResponseStore(base),
    inboxes: inboxStore(base, ctx.box),
    plans: workspacePlans(base),
    events: helpdeskEventLog(base, ctx),
  };
}

/** The ports of sending the survey of a resolved conversation: the claim and the reply, on one handle. */
export function surveySendPorts(db: Kysely<Database>, ctx: PluginContext): SurveySendPorts {
  return {
    settings: csatSettingsStore(db),
    surveys: csatSurveyStore(db),
    conversation: (workspaceId, id) => conversationStore(db).get(workspaceId, id),
    reply: systemReply(db, ctx),
  };
}
