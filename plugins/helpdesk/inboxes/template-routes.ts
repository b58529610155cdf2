import { t } from 'elysia';
import type { Kysely } from 'kysely';
import { listInboxTemplates, type InboxTemplateStores } from '../../../core/helpdesk/inboxes/inbox-templates.ts';
import { fillableTemplate, templateFields } from '../../../core/templates/template-fields.ts';
import type { Template } from '../../../core/templates/templates.ts';
import { authenticatedRoutes, authErrors, StandardError, Uuid } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { templateStores, type Database } from '../../kernel/storage.ts';
import { inboxStore } from './inbox-and-contact-stores.ts';

const FieldView = t.Object({
  component: t.UnionEnum(['header', 'body', 'button'], { description: 'The send component the value goes into (sending casing)' }),
  variable: t.Nullable(t.Integer({ description: 'Header and body: the variable n of {{n}}' })),
  index: t.Nullable(t.Integer({ description: 'Buttons: the button\'s position, from 0' })),
  subType: t.Nullable(t.String({ description: 'Buttons: the sub_type to send (url, copy_code, otp)' })),
  type: t.UnionEnum(['text', 'image', 'video', 'document', 'location', 'coupon_code'], {
    description: 'The parameter to send: text, a media header\'s https link (image, video, document), latitude,longitude (location), a code to copy (coupon_code)',
  }),
  label: t.String({ description: 'What to ask for, in words' }),
  example: t.Nullable(t.String({ description: 'The definition\'s example value' })),
});

const InboxTemplateView = t.Object({
  id: Uuid,
  name: t.String(),
  language: t.String({ description: 'Such as en_US' }),
  category: t.String({ description: 'MARKETING, UTILITY or AUTHENTICATION' }),
  components: t.Array(t.Unknown(), { description: 'The definition (upper-case casing: HEADER, BODY, FOOTER, BUTTONS…), as approved' }),
  body: t.Nullable(t.String({ description: 'The BODY text with its {{n}} variables' })),
  fields: t.Array(FieldView, {
    description:
      'One per parameter a send must carry, in order: a send\'s components hold the header parameters, then the body\'s, then one button component per button field (POST …/conversations and …/messages take them as template.components)',
  }),
  fillable: t.Boolean({ description: 'False when the definition holds a component the fields do not cover (a carousel): send it through the messaging API instead' }),
});

const Id = t.Object({ id: t.String() });

function inboxTemplateStores(db: Kysely<Database>, ctx: PluginContext): InboxTemplateStores {
  return { inboxes: inboxStore(db, ctx.box), ...templateStores(db, ctx) };
}

/** The templates a member who works an inbox may send from it (core/helpdesk/inboxes/inbox-templates.ts). */
export function inboxTemplateRoutes(ctx: PluginContext) {
  const deps = { clock: ctx.clock, ids: ctx.ids, drivers: ctx.drivers };
  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.inbox-templates', prefix: '/v3/helpdesk/inboxes', tags: ['Helpdesk'] }).get(
    '/:id/templates',
    async ({ actor, params }) => {
      const { official, templates } = await listInboxTemplates(ctx.storage.read(inboxTemplateStores), deps, actor, params.id);
      return { official, data: templates.map(present) };
    },
    {
      params: Id,
      response: {
        ...authErrors,
        404: StandardError,
        200: t.Object({
          official: t.Boolean({ description: 'Whether the inbox is on an official (cloud-api) connection, the only kind that sends templates; false for unofficial connections, API inboxes and a deleted connection' }),
          data: t.Array(InboxTemplateView, { description: 'By name, then language' }),
        }),
      },
      detail: {
        summary: 'Templates that can be sent from the inbox: the APPROVED templates of its official connection (any member who works the inbox)',
        description:
          'For picking a template when the 24-hour window of an official connection is closed: read by whoever works the inbox (an Agent only in their inboxes, else 404), without the connections permission the connection\'s own template list needs. The platform is read first, as that list does. Inboxes whose connection has no templates (unofficial connections, API inboxes, no connection) answer official false and an empty list. Each template names the fields a send must fill.',
      },
    },
  );
}

function present(template: Template) {
  const body = template.components.find((c): c is { type: string; text?: unknown } => typeof c === 'object' && c !== null && (c as { type?: unknown }).type === 'BODY');
  return {
    id: template.id,
    name: template.name,
    language: template.language,
    category: template.category,
    components: template.components,
    body: typeof body?.text === 'string' ? body.text : null,
    fields: templateFields(template.components),
    fillable: fillableTemplate(template.components),
  };
}
