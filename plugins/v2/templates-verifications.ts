import { t } from 'elysia';
import { authenticatedRoutes, authErrors, CodedError, PageOf, PageQuery, presentPage, StandardError } from '../kernel/http.ts';
import type { PluginContext } from '../kernel/context.ts';
import { messagingStores } from '../kernel/storage.ts';
import { templateDeps, templateStores } from '../kernel/storage.ts';
import { checkNumber } from '../../core/connections/number-lookup.ts';
import { listTemplates } from '../../core/templates/template-list.ts';
import { createTemplate } from '../../core/templates/templates.ts';
import { pageRequest } from '../../core/shared/pagination.ts';
import { presentTemplate, presentVerification, V2Template, V2Verification } from './views.ts';

const Id = t.Object({ id: t.String() });
const Errors = { ...authErrors, 404: t.Union([CodedError, StandardError]), 422: StandardError };
const Phone = t.Object({ phone: t.String({ description: 'A phone number in international format (E.164)' }) });

/**
 * v2 templates (list, create) and verifications (is a number on the network, through a
 * connection or standalone): the same use cases as v3, v2 shapes.
 */
export function v2TemplateAndVerificationRoutes(ctx: PluginContext) {
  const deps = templateDeps(ctx);

  return authenticatedRoutes(ctx, { name: 'plugins.v2.templates', prefix: '/v2', tags: ['v2'] })
    .get(
      '/connections/:id/templates',
      async ({ actor, params, query }) => presentPage(await listTemplates(ctx.storage.read(templateStores), deps, actor, params.id, pageRequest(query)), presentTemplate),
      { params: Id, query: PageQuery, response: { ...Errors, 200: PageOf(V2Template) }, detail: { summary: 'v2: templates of the connection (official connections)' } },
    )
    .post(
      '/connections/:id/templates',
      async ({ actor, params, body, set }) => {
        const template = await createTemplate(ctx.storage.read(templateStores), deps, actor, params.id, body);
        set.status = 201;
        return presentTemplate(template);
      },
      {
        role: ['connections', 'write'],
        params: Id,
        body: t.Object({ name: t.String(), language: t.String(), category: t.String(), components: t.Array(t.Any()) }),
        response: { ...Errors, 400: StandardError, 409: StandardError, 502: StandardError, 201: V2Template },
        detail: { summary: 'v2: submit a template for review; answers it PENDING (upper-case definition casing; every problem at once)' },
      },
    )
    .post(
      '/connections/:id/verifications',
      async ({ actor, params, body }) => presentVerification(await checkNumber(ctx.storage.read(messagingStores).connections, ctx, actor, body.phone, params.id)),
      {
        role: ['messages.send', 'write'],
        params: Id,
        body: Phone,
        response: { ...Errors, 400: StandardError, 503: StandardError, 200: V2Verification },
        detail: { summary: 'v2: is this number on the network? Asked through this connection (unofficial and sandbox; the official network has no lookup: 422)' },
      },
    )
    .post('/verifications', async ({ actor, body }) => presentVerification(await checkNumber(ctx.storage.read(messagingStores).connections, ctx, actor, body.phone)), {
      role: ['messages.send', 'write'],
      body: Phone,
      response: { ...Errors, 400: StandardError, 503: StandardError, 200: V2Verification },
      detail: { summary: 'v2: is this number on the network? Asked through the first connected connection of the workspace that can tell (422 when none)' },
    });
}
