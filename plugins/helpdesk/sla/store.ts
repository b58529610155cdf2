import type { Kysely, Selectable } from 'kysely';
import type { PluginContext } from '../../kernel/context.ts';
import { camelCased, containing, findInWorkspace, findRow, isUniqueViolation, pageOfLoadedRows, putRow, snakeCased, type Database } from '../../kernel/storage.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import { conflict } from '../../../core/shared/errors.ts';
import { calendarOf, type InboxHours, type InboxHoursStore, type InboxHoursStores } from '../../../core/helpdesk/sla/business-hours-settings.ts';
import type { BusinessCalendar } from '../../../core/helpdesk/sla/business-hours.ts';
import type { SlaPolicy } from '../../../core/helpdesk/sla/sla.ts';
import type { SlaPolicyStore, SlaPolicyStores } from '../../../core/helpdesk/sla/policies.ts';
import { helpdeskDb, type HelpdeskBusinessHoursTable, type HelpdeskSlaPoliciesTable } from '../tables.ts';
import { inboxStore, workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { withLinkedInboxes } from '../inboxes/linked-inbox-store.ts';

const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

const toHours = (row: Selectable<HelpdeskBusinessHoursTable>): InboxHours => ({
  inboxId: row.inbox_id,
  workspaceId: row.workspace_id,
  enabled: row.enabled,
  week: json<InboxHours['week']>(row.weekly_hours),
  holidays: json<InboxHours['holidays']>(row.holidays),
  outOfOffice: { enabled: row.out_of_office_enabled, message: row.out_of_office_message },
  updatedAt: row.updated_at,
});

/** Business hours and out-of-office settings per inbox (migrations/0012_sla.ts). */
export function inboxHoursStore(base: Kysely<Database>): InboxHoursStore {
  const db = helpdeskDb(base);
  return {
    async get(inboxId) {
      if (!isUuid(inboxId)) return undefined;
      return findRow(db, 'helpdesk_business_hours', { inbox_id: inboxId }, toHours);
    },
    async put(h) {
      await putRow(db, 'helpdesk_business_hours', ['inbox_id'], {
        inbox_id: h.inboxId,
        workspace_id: h.workspaceId,
        enabled: h.enabled,
        weekly_hours: JSON.stringify(h.week),
        holidays: JSON.stringify(h.holidays),
        out_of_office_enabled: h.outOfOffice.enabled,
        out_of_office_message: h.outOfOffice.message,
        updated_at: h.updatedAt ?? new Date(0),
      });
    },
  };
}

/** The inbox's calendar for the SLA clock and the out-of-office reply: its hours in its timezone; null when open 24/7. */
export async function inboxCalendar(base: Kysely<Database>, inboxId: string): Promise<BusinessCalendar | null> {
  const inbox = await helpdeskDb(base).selectFrom('helpdesk_inboxes').select('timezone').where('id', '=', inboxId).executeTakeFirst();
  if (!inbox) return null;
  return calendarOf(await inboxHoursStore(base).get(inboxId), inbox.timezone);
}

export function inboxHoursStores(base: Kysely<Database>, ctx: PluginContext): InboxHoursStores {
  return { inboxes: inboxStore(base, ctx.box), plans: workspacePlans(base), hours: inboxHoursStore(base) };
}

const toPolicy = (row: Selectable<HelpdeskSlaPoliciesTable>, inboxIds: string[]): SlaPolicy => ({ ...camelCased(row), inboxIds });

/** SLA policies with their inboxes. */
export function slaPolicyStore(base: Kysely<Database>): SlaPolicyStore & { forInbox(inboxId: string): Promise<SlaPolicy | undefined> } {
  const db = helpdeskDb(base);
  const withInboxes = (rows: Selectable<HelpdeskSlaPoliciesTable>[]): Promise<SlaPolicy[]> =>
    withLinkedInboxes(rows, (ids) => db.selectFrom('helpdesk_sla_policy_inboxes').select(['policy_id as owner', 'inbox_id']).where('policy_id', 'in', ids).orderBy('inbox_id').execute(), toPolicy);
  return {
    async list(workspaceId, request) {
      let query = db.selectFrom('helpdesk_sla_policies').where('workspace_id', '=', workspaceId);
      if (request.search) query = query.where('name', 'ilike', containing(request.search));
      return pageOfLoadedRows(query, request, (q) => q.selectAll().orderBy('name').orderBy('id'), withInboxes);
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_sla_policies', workspaceId, id, async (row) => (await withInboxes([row]))[0]);
    },
    async forInbox(inboxId) {
      const row = await db
        .selectFrom('helpdesk_sla_policy_inboxes as pi')
        .innerJoin('helpdesk_sla_policies as p', 'p.id', 'pi.policy_id')
        .selectAll('p')
        .where('pi.inbox_id', '=', inboxId)
        .executeTakeFirst();
      return row && (await withInboxes([row]))[0];
    },
    async nameTaken(workspaceId, name, exceptId) {
      let query = db.selectFrom('helpdesk_sla_policies').select('id').where('workspace_id', '=', workspaceId).where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()));
      if (exceptId) query = query.where('id', '<>', exceptId);
      return (await query.executeTakeFirst()) !== undefined;
    },
    async inboxesHeldElsewhere(inboxIds, exceptPolicyId) {
      const ids = inboxIds.filter(isUuid);
      if (ids.length === 0) return [];
      let query = db.selectFrom('helpdesk_sla_policy_inboxes').select('inbox_id').where('inbox_id', 'in', ids);
      if (exceptPolicyId) query = query.where('policy_id', '<>', exceptPolicyId);
      return (await query.execute()).map((r) => r.inbox_id);
    },
    async save(p, created) {
      const { inboxIds: _inboxes, ...policy } = p;
      const { id, workspace_id, created_at, ...values } = snakeCased(policy);
      try {
        if (created) await db.insertInto('helpdesk_sla_policies').values({ id, workspace_id, created_at, ...values }).execute();
        else await db.updateTable('helpdesk_sla_policies').set(values).where('id', '=', p.id).execute();
      } catch (error) {
        // Two policies named alike at once: the index decides.
        if (isUniqueViolation(error, 'helpdesk_sla_policies_name_key')) throw conflict(`Another SLA policy is named ${p.name}`);
        throw error;
      }
      await db.deleteFrom('helpdesk_sla_policy_inboxes').where('policy_id', '=', p.id).execute();
      if (p.inboxIds.length === 0) return;
      // An inbox another policy took meanwhile (checked before, raced since) is not taken over.
      const inserted = await db
        .insertInto('helpdesk_sla_policy_inboxes')
        .values(p.inboxIds.map((inboxId) => ({ inbox_id: inboxId, policy_id: p.id, workspace_id: p.workspaceId })))
        .onConflict((oc) => oc.column('inbox_id').doNothing())
        .returning('inbox_id')
        .execute();
      if (inserted.length !== p.inboxIds.length) throw conflict('An inbox of the list already has another SLA policy (an inbox has one)');
    },
    async delete(id) {
      // Its conversations lose it and their rounds stop (their jobs then find nothing running).
      await db
        .updateTable('helpdesk_conversation_timing')
        .set({ policy_id: null, first_response_due_at: null, next_response_due_at: null, resolution_due_at: null })
        .where('policy_id', '=', id)
        .execute();
      await db.deleteFrom('helpdesk_sla_policies').where('id', '=', id).execute();
    },
  };
}

export function slaPolicyStores(base: Kysely<Database>, ctx: PluginContext): SlaPolicyStores {
  return { policies: slaPolicyStore(base), inboxes: inboxStore(base, ctx.box), plans: workspacePlans(base) };
}
