import { t } from 'elysia';
import { addContactNote, deleteContactNote, listContactNotes, MAX_NOTE_LENGTH, type ContactNote } from '../../../core/helpdesk/contacts/contact-notes.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authenticatedRoutes, authErrors, iso, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import { contactNoteStores } from './store.ts';

const NoteView = t.Object({
  id: Uuid,
  contactId: Uuid,
  content: t.String(),
  authorUserId: t.Nullable(Uuid, { description: 'Null once the author is no longer a user' }),
  createdAt: Timestamp,
});
const NotFound = { 404: StandardError };

/** Notes on a contact for the team (the console's contact panel): every member reads and writes (PRO); the author or a Manager and above deletes. */
export function contactNoteRoutes(ctx: PluginContext) {
  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.contact-notes', prefix: '/v3/helpdesk/contacts', tags: ['Helpdesk'] })
    .get('/:id/notes', async ({ actor, params }) => (await listContactNotes(ctx.storage.read(contactNoteStores), actor, params.id)).map(present), {
      params: t.Object({ id: t.String() }),
      response: { ...authErrors, ...NotFound, 200: t.Array(NoteView, { description: 'Bare array, newest first' }) },
      detail: { summary: "A contact's notes, newest first" },
    })
    .post(
      '/:id/notes',
      async ({ actor, params, body, set }) => {
        const note = await ctx.storage.transaction(contactNoteStores, (s) => addContactNote(s, ctx, actor, params.id, body));
        set.status = 201;
        return present(note);
      },
      {
        params: t.Object({ id: t.String() }),
        body: t.Object({ content: t.String({ description: `1 to ${MAX_NOTE_LENGTH} characters` }) }),
        response: { ...authErrors, ...NotFound, 201: NoteView },
        detail: { summary: 'Add a note to a contact (PRO plan)' },
      },
    )
    .delete(
      '/:id/notes/:noteId',
      async ({ actor, params }) => {
        await ctx.storage.transaction(contactNoteStores, (s) => deleteContactNote(s, actor, params.id, params.noteId));
        return { id: params.noteId, deleted: true as const };
      },
      {
        params: t.Object({ id: t.String(), noteId: t.String() }),
        response: { ...authErrors, ...NotFound, 200: t.Object({ id: t.String(), deleted: t.Literal(true) }) },
        detail: { summary: 'Delete a note (its author, or a Manager and above; PRO plan)' },
      },
    );
}

function present(n: ContactNote) {
  return { id: n.id, contactId: n.contactId, content: n.content, authorUserId: n.authorUserId, createdAt: iso(n.createdAt) };
}
