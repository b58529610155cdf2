import type { Kysely, Selectable } from 'kysely';
import { camelCased, containing, findInWorkspace, isUniqueViolation, pageOfRows, snakeCased, uniqueViolationAs, type Database } from '../../kernel/storage.ts';
import type { SecretBox } from '../../kernel/security.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { PlanName } from '../../../core/plans/plans.ts';
import { conflict } from '../../../core/shared/errors.ts';
import type { InboxStore, InboxStores, Inbox } from '../../../core/helpdesk/inboxes/inboxes.ts';
import { duplicatePhone, type Contact, type ContactStore, type ContactStores } from '../../../core/helpdesk/contacts/contacts.ts';
import type { WorkspacePlans } from '../../../core/helpdesk/plan-gate.ts';
import { helpdeskDb, type HelpdeskContactsTable, type HelpdeskInboxesTable } from '../tables.ts';
import { replaceMembers } from '../member-list-store.ts';

export function workspacePlans(base: Kysely<Database>): WorkspacePlans {
  return {
    async planOf(workspaceId) {
      const row = await base.selectFrom('workspaces').select('plan').where('id', '=', workspaceId).executeTakeFirst();
      return row?.plan as PlanName | undefined;
    },
  };
}

export function inboxStore(base: Kysely<Database>, box: SecretBox): InboxStore {
  const db = helpdeskDb(base);
  const toInbox = (row: Selectable<HelpdeskInboxesTable>): Inbox => ({
    ...camelCased(row),
    inboundSecret: row.inbound_secret === null ? null : box.open(row.inbound_secret),
  });
  return {
    async insert(i) {
      try {
        await db
          .insertInto('helpdesk_inboxes')
          .values({ ...snakeCased(i), inbound_secret: i.inboundSecret === null ? null : box.seal(i.inboundSecret) })
          .execute();
      } catch (error) {
        if (isUniqueViolation(error, 'helpdesk_inboxes_connection_key')) throw conflict('Another inbox of the workspace is already bound to this connection');
        throw error;
      }
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_inboxes', workspaceId, id, toInbox);
    },
    async list(workspaceId, request, onlyFor) {
      let query = db.selectFrom('helpdesk_inboxes').where('workspace_id', '=', workspaceId);
      if (onlyFor !== undefined) {
        query = query.where('id', 'in', db.selectFrom('helpdesk_inbox_members').select('inbox_id').where('user_id', '=', onlyFor));
      }
      if (request.search) query = query.where('name', 'ilike', containing(request.search));
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('created_at').orderBy('id'), toInbox);
    },
    async update(i) {
      await db
        .updateTable('helpdesk_inboxes')
        .set({ name: i.name, timezone: i.timezone, webhook_url: i.webhookUrl, hmac_mandatory: i.hmacMandatory, updated_at: i.updatedAt })
        .where('id', '=', i.id)
        .execute();
    },
    async delete(id) {
      await db.deleteFrom('helpdesk_inboxes').where('id', '=', id).execute();
    },
    async connectionTaken(workspaceId, connectionId, exceptInboxId) {
      let query = db.selectFrom('helpdesk_inboxes').select('id').where('workspace_id', '=', workspaceId).where('connection_id', '=', connectionId);
      if (exceptInboxId) query = query.where('id', '<>', exceptInboxId);
      return (await query.executeTakeFirst()) !== undefined;
    },
    async isMember(inboxId, userId) {
      const row = await db.selectFrom('helpdesk_inbox_members').select('user_id').where('inbox_id', '=', inboxId).where('user_id', '=', userId).executeTakeFirst();
      return row !== undefined;
    },
    async members(inboxId) {
      const rows = await db
        .selectFrom('helpdesk_inbox_members as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select(['u.id', 'u.name', 'u.email'])
        .where('m.inbox_id', '=', inboxId)
        .orderBy('u.email')
        .execute();
      return rows.map((r) => ({ userId: r.id, name: r.name, email: r.email }));
    },
    async setMembers(inboxId, userIds) {
      await replaceMembers(base, 'inbox', inboxId, userIds);
    },
  };
}

export function contactStore(base: Kysely<Database>): ContactStore {
  const db = helpdeskDb(base);
  // The search document and the inboxes seen (migrations 0016, 0020) are the database's, not the contact's.
  const toContact = ({ search_document: _, inbox_ids: _seen, ...row }: Selectable<HelpdeskContactsTable>): Contact => ({
    ...camelCased(row),
    customAttributes: (typeof row.custom_attributes === 'string' ? JSON.parse(row.custom_attributes) : row.custom_attributes) as Record<string, unknown>,
  });
  const rethrow = uniqueViolationAs('helpdesk_contacts_phone_key', duplicatePhone);
  return {
    async insert(c) {
      await db
        .insertInto('helpdesk_contacts')
        .values({ ...snakeCased(c), custom_attributes: JSON.stringify(c.customAttributes) })
        .execute()
        .catch(rethrow);
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_contacts', workspaceId, id, toContact);
    },
    async list(workspaceId, request) {
      let query = db.selectFrom('helpdesk_contacts').where('workspace_id', '=', workspaceId);
      if (request.search) {
        const text = containing(request.search);
        const digits = request.search.replace(/\D/g, '');
        query = query.where((eb) =>
          eb.or([
            eb('name', 'ilike', text),
            eb('email', 'ilike', text),
            eb('phone', 'like', text),
            ...(digits.length > 0 ? [eb('phone', 'like', containing(digits))] : []),
          ]),
        );
      }
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('created_at').orderBy('id'), toContact);
    },
    async update(c) {
      await db
        .updateTable('helpdesk_contacts')
        .set({ name: c.name, phone: c.phone, email: c.email, custom_attributes: JSON.stringify(c.customAttributes), updated_at: c.updatedAt })
        .where('id', '=', c.id)
        .execute()
        .catch(rethrow);
    },
    async findByPhone(workspaceId, phone) {
      const row = await db.selectFrom('helpdesk_contacts').selectAll().where('workspace_id', '=', workspaceId).where('phone', '=', phone).executeTakeFirst();
      return row && toContact(row);
    },
    async findByEmail(workspaceId, email) {
      const row = await db
        .selectFrom('helpdesk_contacts')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('email', '=', email)
        .orderBy('created_at')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      return row && toContact(row);
    },
    async delete(id) {
      // Conversations (with messages and files), notes and API identities cascade.
      await db.deleteFrom('helpdesk_contacts').where('id', '=', id).execute();
    },
  };
}

/** The ports the inbox use cases need, bound to one connection or transaction. */
export function inboxStores(base: Kysely<Database>, ctx: Pick<PluginContext, 'box'>): InboxStores {
  return {
    inboxes: inboxStore(base, ctx.box),
    plans: workspacePlans(base),
    async connectionInWorkspace(workspaceId, connectionId) {
      if (!isUuid(connectionId)) return false;
      const row = await base.selectFrom('connections').select('id').where('workspace_id', '=', workspaceId).where('id', '=', connectionId).executeTakeFirst();
      return row !== undefined;
    },
    async workspaceMembers(workspaceId, userIds) {
      const ids = userIds.filter(isUuid);
      if (ids.length === 0) return [];
      const rows = await base.selectFrom('memberships').select('user_id').where('workspace_id', '=', workspaceId).where('user_id', 'in', ids).execute();
      return rows.map((r) => r.user_id);
    },
  };
}

export function contactStores(base: Kysely<Database>): ContactStores {
  return { contacts: contactStore(base), plans: workspacePlans(base) };
}

/** IANA zone names the runtime knows (plus `UTC`, which `supportedValuesOf` may leave out). */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
