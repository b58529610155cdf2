import { Elysia, t } from 'elysia';
import { createContact, getContact, listContacts, updateContact, type Contact } from '../../../core/helpdesk/contacts/contacts.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { authentication } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, iso, PageOf, PageQuery, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import { contactStores } from '../inboxes/inbox-and-contact-stores.ts';

const ContactView = t.Object({
  id: Uuid,
  name: t.Nullable(t.String()),
  phone: t.Nullable(t.String({ description: 'E.164, such as +5511999999999' })),
  email: t.Nullable(t.String()),
  customAttributes: t.Record(t.String(), t.Unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Fields = {
  name: t.Optional(t.Nullable(t.String({ description: 'At most 200 characters' }))),
  phone: t.Optional(t.Nullable(t.String({ description: 'International format; stored as E.164; unique in the workspace' }))),
  email: t.Optional(t.Nullable(t.String({ description: 'Email address' }))),
  customAttributes: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'Free key/value pairs; PATCH replaces the whole set' })),
};

const Id = t.Object({ id: t.String() });

/** Helpdesk contacts (spec 4.6): page envelope, `s` searches name, phone and email. */
export function contactRoutes(ctx: PluginContext) {

  return new Elysia({ name: 'plugins.helpdesk.contacts', prefix: '/v3/helpdesk/contacts', detail: { tags: ['Helpdesk'] } })
    .use(authentication(ctx))
    .guard({ auth: true }, (app) =>
      app
        .get(
          '',
          async ({ actor, query }) => {
            const found = await listContacts(ctx.storage.read(contactStores), actor, pageRequest(query));
            return { ...found, data: found.data.map(present) };
          },
          { role: 'helpdesk.work', query: PageQuery, response: { ...authErrors, 200: PageOf(ContactView) }, detail: { summary: 'Contacts; `s` searches name, phone and email' } },
        )
        .post(
          '',
          async ({ actor, body, set }) => {
            const contact = await ctx.storage.transaction(contactStores, (s) => createContact(s, ctx, actor, body));
            set.status = 201;
            return present(contact);
          },
          {
            role: 'helpdesk.work',
            body: t.Object(Fields),
            response: { ...authErrors, 201: ContactView, 409: StandardError },
            detail: { summary: 'Create a contact (PRO plan); at least one of name, phone, email; a phone already used is 409' },
          },
        )
        .get('/:id', async ({ actor, params }) => present(await getContact(ctx.storage.read(contactStores), actor, params.id)), {
          role: 'helpdesk.work',
          params: Id,
          response: { ...authErrors, 200: ContactView },
          detail: { summary: 'One contact' },
        })
        // The write check comes after the contact is found (404 first), so it stays in core.
        .patch('/:id', async ({ actor, params, body }) => present(await ctx.storage.transaction(contactStores, (s) => updateContact(s, ctx, actor, params.id, body))), {
          params: Id,
          body: t.Object(Fields),
          response: { ...authErrors, 200: ContactView, 409: StandardError },
          detail: { summary: 'Change a contact (PRO plan); fields left out keep their value, null clears one' },
        }),
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
