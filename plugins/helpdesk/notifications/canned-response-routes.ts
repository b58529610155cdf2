import { Elysia, t } from 'elysia';
import {
  createCannedResponse,
  deleteCannedResponse,
  getCannedResponse,
  listCannedResponses,
  SHORT_CODE_MAX_LENGTH,
  updateCannedResponse,
} from '../../../core/helpdesk/library/canned-responses.ts';
import { MAX_CONTENT_LENGTH } from '../../../core/helpdesk/conversations/helpdesk-messages.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { authentication } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { RouteScope } from '../../kernel/http.ts';
import { authErrors, PageOf, PageQuery, StandardError } from '../../kernel/http.ts';
import { cannedResponseStores } from './library-stores.ts';
import { CannedResponseView, presentCannedResponse } from './views.ts';

export const CANNED_RESPONSE_ROUTE_SCOPES: RouteScope[] = [
  { method: 'GET', path: '/v3/helpdesk/canned-responses', scopes: ['helpdesk:read'] },
  { method: 'GET', path: '/v3/helpdesk/canned-responses/:id', scopes: ['helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/canned-responses', scopes: ['helpdesk:write'] },
  { method: 'PATCH', path: '/v3/helpdesk/canned-responses/:id', scopes: ['helpdesk:write'] },
  { method: 'DELETE', path: '/v3/helpdesk/canned-responses/:id', scopes: ['helpdesk:write'] },
];

const Id = t.Object({ id: t.String() });
const ShortCode = t.String({ description: `1 to ${SHORT_CODE_MAX_LENGTH} letters, digits, _ or - (a leading / is dropped); unique in the workspace case-insensitively` });
const Content = t.String({ description: `1 to ${MAX_CONTENT_LENGTH} characters (trimmed)` });
const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) });

/** The workspace's canned responses (core/helpdesk/library/canned-responses.ts): every member reads, Managers and above write (PRO plan). */
export function cannedResponseRoutes(ctx: PluginContext) {
  return new Elysia({ name: 'plugins.helpdesk.canned-responses', prefix: '/v3/helpdesk/canned-responses', detail: { tags: ['Helpdesk'] } })
    .use(authentication(ctx))
    .guard({ auth: true }, (app) =>
      app
        .get(
          '',
          async ({ actor, query }) => {
            const found = await listCannedResponses(ctx.storage.read(cannedResponseStores), actor, pageRequest(query));
            return { ...found, data: found.data.map(presentCannedResponse) };
          },
          { query: PageQuery, response: { ...authErrors, 200: PageOf(CannedResponseView) }, detail: { summary: 'Canned responses, by short code; `s` searches short code and content' } },
        )
        .post(
          '',
          async ({ actor, body, set }) => {
            const created = await ctx.storage.transaction(cannedResponseStores, (s) => createCannedResponse(s, ctx, actor, body));
            set.status = 201;
            return presentCannedResponse(created);
          },
          {
            role: ['helpdesk.configure', 'write'],
            body: t.Object({ shortCode: ShortCode, content: Content }),
            response: { ...authErrors, 201: CannedResponseView, 409: StandardError },
            detail: { summary: 'Create a canned response (Manager and above, PRO plan); a short code already used (in any case) is 409' },
          },
        )
        .get('/:id', async ({ actor, params }) => presentCannedResponse(await getCannedResponse(ctx.storage.read(cannedResponseStores), actor, params.id)), {
          params: Id,
          response: { ...authErrors, 200: CannedResponseView },
          detail: { summary: 'One canned response' },
        })
        .patch('/:id', async ({ actor, params, body }) => presentCannedResponse(await ctx.storage.transaction(cannedResponseStores, (s) => updateCannedResponse(s, ctx, actor, params.id, body))), {
          role: ['helpdesk.configure', 'write'],
          params: Id,
          body: t.Object({ shortCode: t.Optional(ShortCode), content: t.Optional(Content) }),
          response: { ...authErrors, 200: CannedResponseView, 409: StandardError },
          detail: { summary: 'Change a canned response (Manager and above, PRO plan); fields left out keep their value' },
        })
        .delete(
          '/:id',
          async ({ actor, params }) => {
            await ctx.storage.transaction(cannedResponseStores, (s) => deleteCannedResponse(s, actor, params.id));
            return { id: params.id, deleted: true as const };
          },
          { role: ['helpdesk.configure', 'write'], params: Id, response: { ...authErrors, 200: Deleted }, detail: { summary: 'Delete a canned response (Manager and above, PRO plan)' } },
        ),
    );
}
