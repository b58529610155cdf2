import type { Kysely, Selectable } from 'kysely';
import type { ContactNoteStore, ContactNoteStores } from '../../../core/helpdesk/contacts/contact-notes.ts';
import type { ContactRecords, ContactRemovalStores } from '../../../core/helpdesk/contacts/contact-removal.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { camelCased, type Database } from '../../kernel/storage.ts';
import { toConversation } from '../conversations/store.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { contactStores } from '../inboxes/inbox-and-contact-stores.ts';
import { helpdeskDb, type HelpdeskContactNotesTable } from '../tables.ts';

const toNote = (row: Selectable<HelpdeskContactNotesTable>) => camelCased(row);

export function contactNoteStore(base: Kysely<Database>): ContactNoteStore {
  const db = helpdeskDb(base);
  return {
    async list(contactId) {
      const rows = await db.selectFrom('helpdesk_contact_notes').selectAll().where('contact_id', '=', contactId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      return rows.map(toNote);
    },
    async get(contactId, id) {
      if (!isUuid(id)) return undefined;
      const row = await db.selectFrom('helpdesk_contact_notes').selectAll().where('contact_id', '=', contactId).where('id', '=', id).executeTakeFirst();
      return row && toNote(row);
    },
    async insert(n) {
      await db
        .insertInto('helpdesk_contact_notes')
        .values({ id: n.id, workspace_id: n.workspaceId, contact_id: n.contactId, content: n.content, author_user_id: n.authorUserId, created_at: n.createdAt })
        .execute();
    },
    async delete(id) {
      await db.deleteFrom('helpdesk_contact_notes').where('id', '=', id).execute();
    },
  };
}

export function contactRecords(base: Kysely<Database>): ContactRecords {
  const db = helpdeskDb(base);
  return {
    async conversationsOf(contactId) {
      const rows = await db.selectFrom('helpdesk_conversations').selectAll().where('contact_id', '=', contactId).orderBy('created_at').orderBy('id').forUpdate().execute();
      return rows.map(toConversation);
    },
    async moveAll(fromId, toId) {
      await db.updateTable('helpdesk_conversations').set({ contact_id: toId }).where('contact_id', '=', fromId).execute();
      await db.updateTable('helpdesk_contact_notes').set({ contact_id: toId }).where('contact_id', '=', fromId).execute();
      // An inbox where the kept contact has its own identity keeps it; the other's goes with its contact.
      await db
        .updateTable('helpdesk_api_contacts')
        .set({ contact_id: toId })
        .where('contact_id', '=', fromId)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('helpdesk_api_contacts as mine').select('mine.inbox_id').where('mine.contact_id', '=', toId).whereRef('mine.inbox_id', '=', 'helpdesk_api_contacts.inbox_id'))))
        .execute();
    },
  };
}

export function contactNoteStores(base: Kysely<Database>): ContactNoteStores {
  return { ...contactStores(base), notes: contactNoteStore(base) };
}

export function contactRemovalStores(base: Kysely<Database>, ctx: PluginContext): ContactRemovalStores {
  return { ...contactStores(base), records: contactRecords(base), events: helpdeskEventLog(base, ctx) };
}
