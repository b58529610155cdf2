import { t } from 'elysia';
import { createContact, getContact, listContacts, updateContact, type Contact } from '../../../core/helpdesk/contacts/contacts.ts';
import { deleteContact, mergeContacts } from '../../../core/helpdesk/contacts/contact-removal.ts';
import { importContacts, MAX_IMPORT_BYTES, MAX_IMPORT_ROWS } from '../../../core/helpdesk/contacts/contact-import.ts';
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, iso, readText, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import { contactImportUnits } from './import-units.ts';
import { contactRemovalStores } from './store.ts';

const ContactView = t.Object({
  id: Uuid,
  name: t.Nullable(t.String()),
  phone: t.Nullable(t.String({ description: 'E.164, such as +5511999999999' })),
  email: t.Nullable(t.String()),
  customAttributes: t.Record(t.String(), t.Unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const NotFound = { 404: StandardError };
const ImportView = t.Object({
  created: t.Integer(),
  updated: t.Integer(),
  skipped: t.Array(t.Object({ line: t.Integer({ description: "The row's number in the file, the header row being 1" }), reason: t.String() })),
});
const CSV_BODY = {
  required: true,
  content: {
    'text/csv': {
      schema: {
        type: 'string' as const,
        description: `A header row naming name, phone and email columns (any case; phone or email required); other columns become custom attributes. At most ${MAX_IMPORT_BYTES} bytes and ${MAX_IMPORT_ROWS} rows.`,
      },
    },
  },
};

const Fields = {
  name: t.Optional(t.Nullable(t.String({ description: 'At most 200 characters' }))),
  phone: t.Optional(t.Nullable(t.String({ description: 'International format; stored as E.164; unique in the workspace' }))),
  email: t.Optional(t.Nullable(t.String({ description: 'Email address' }))),
  customAttributes: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'Free key/value pairs; PATCH replaces the whole set' })),
};

/** Helpdesk contacts (spec 4.6): page envelope, `s` searches name, phone and email. */
export function contactRoutes(ctx: PluginContext) {
  return catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.contacts',
    prefix: '/v3/helpdesk/contacts',
    tags: ['Helpdesk'],
    stores: contactRemovalStores,
    view: ContactView,
    present,
    list: { role: 'helpdesk.work', run: listContacts, summary: 'Contacts; `s` searches name, phone and email' },
    create: {
      role: 'helpdesk.work',
      body: t.Object(Fields),
      run: (s, actor, body) => createContact(s, ctx, actor, body),
      errors: { 409: StandardError },
      summary: 'Create a contact (PRO plan); at least one of name, phone, email; a phone already used is 409',
    },
    get: { role: 'helpdesk.work', run: getContact, summary: 'One contact' },
    // The write check comes after the contact is found (404 first), so it stays in core.
    update: {
      body: t.Object(Fields),
      run: (s, actor, id, body) => updateContact(s, ctx, actor, id, body),
      errors: { 409: StandardError },
      summary: 'Change a contact (PRO plan); fields left out keep their value, null clears one',
    },
    remove: {
      role: ['helpdesk.configure', 'write'],
      run: (s, actor, id) => deleteContact(s, actor, id),
      errors: NotFound,
      summary: 'Delete a contact with its conversations, their messages, and its notes (Manager and above; PRO plan)',
      description: 'Each conversation records helpdesk.conversation.deleted. The connections keep their chat history.',
    },
  })
    .guard({ auth: true }, (app) =>
      app
        .post(
          '/:id/merge',
          async ({ actor, params, body, set }) => {
            const kept = await ctx.storage.transaction(contactRemovalStores, (s) => mergeContacts(s, ctx, actor, params.id, body));
            set.status = 201;
            return present(kept);
          },
          {
            role: ['helpdesk.configure', 'write'],
            params: t.Object({ id: t.String() }),
            body: t.Object({ mergeContactId: t.String({ description: 'The contact merged into the one in the path, then deleted' }) }),
            response: { ...authErrors, ...NotFound, 201: ContactView, 409: StandardError },
            detail: {
              summary: 'Merge another contact into this one (Manager and above; PRO plan)',
              description:
                "In one transaction: the other contact's conversations and notes move here, its name, phone or email fill this one's empty fields, custom attributes are joined (this contact's value wins), and it is deleted. Each moved conversation records helpdesk.conversation.updated with changedFields [contactId].",
            },
          },
        )
        .post(
          '/import',
          async ({ actor, request, set }) => {
            const csv = await readText(request, MAX_IMPORT_BYTES);
            const result = await importContacts(contactImportUnits(ctx), ctx, actor, csv);
            set.status = 201;
            return result;
          },
          {
            parse: 'none',
            role: ['helpdesk.configure', 'write'],
            response: { ...authErrors, 201: ImportView, 413: StandardError },
            detail: {
              summary: 'Import contacts from a CSV file (Manager and above; PRO plan): upsert by phone, then email',
              description:
                'Each row updates the contact with its phone, else with its email, else creates one; other columns are custom attributes (empty cells left out). A row that cannot be used is skipped with its line and reason; the rest still count. Rows are written a hundred to a transaction; a row whose phone another request created at the same moment updates that contact. 400 only when the file has no phone or email column or too many rows.',
              requestBody: CSV_BODY,
            },
          },
        ),
    );
}

function present(c: Contact) {
  return {
    id: c.id,
    name: c.name,
    phone: c.phone,
    email: c.email,
    customAttributes: c.customAttributes,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
  };
}
