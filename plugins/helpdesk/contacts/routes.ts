import { t } from 'elysia';
import { createContact, getContact, listContacts, updateContact, type Contact } from '../../../core/helpdesk/contacts/contacts.ts';
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { iso, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
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

/** Helpdesk contacts (spec 4.6): page envelope, `s` searches name, phone and email. */
export function contactRoutes(ctx: PluginContext) {
  return catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.contacts',
    prefix: '/v3/helpdesk/contacts',
    tags: ['Helpdesk'],
    stores: contactStores,
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
  });
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
