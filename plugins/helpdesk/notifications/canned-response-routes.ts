import { t } from 'elysia';
import {
  createCannedResponse,
  deleteCannedResponse,
  getCannedResponse,
  listCannedResponses,
  SHORT_CODE_MAX_LENGTH,
  updateCannedResponse,
} from '../../../core/helpdesk/library/canned-responses.ts';
import { MAX_CONTENT_LENGTH } from '../../../core/helpdesk/conversations/helpdesk-messages.ts';
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { catalogueRouteScopes, StandardError, type RouteScope } from '../../kernel/http.ts';
import { cannedResponseStores } from './library-stores.ts';
import { CannedResponseView, presentCannedResponse } from './views.ts';

export const CANNED_RESPONSE_ROUTE_SCOPES: RouteScope[] = catalogueRouteScopes('/v3/helpdesk/canned-responses', { read: ['helpdesk:read'], write: ['helpdesk:write'] });

const ShortCode = t.String({ description: `1 to ${SHORT_CODE_MAX_LENGTH} letters, digits, _ or - (a leading / is dropped); unique in the workspace case-insensitively` });
const Content = t.String({ description: `1 to ${MAX_CONTENT_LENGTH} characters (trimmed)` });

/** The workspace's canned responses (core/helpdesk/library/canned-responses.ts): every member reads, Managers and above write (PRO plan). */
export function cannedResponseRoutes(ctx: PluginContext) {
  return catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.canned-responses',
    prefix: '/v3/helpdesk/canned-responses',
    tags: ['Helpdesk'],
    stores: cannedResponseStores,
    view: CannedResponseView,
    present: presentCannedResponse,
    list: { run: listCannedResponses, summary: 'Canned responses, by short code; `s` searches short code and content' },
    create: {
      role: ['helpdesk.configure', 'write'],
      body: t.Object({ shortCode: ShortCode, content: Content }),
      run: (s, actor, body) => createCannedResponse(s, ctx, actor, body),
      errors: { 409: StandardError },
      summary: 'Create a canned response (Manager and above, PRO plan); a short code already used (in any case) is 409',
    },
    get: { run: getCannedResponse, summary: 'One canned response' },
    update: {
      role: ['helpdesk.configure', 'write'],
      body: t.Object({ shortCode: t.Optional(ShortCode), content: t.Optional(Content) }),
      run: (s, actor, id, body) => updateCannedResponse(s, ctx, actor, id, body),
      errors: { 409: StandardError },
      summary: 'Change a canned response (Manager and above, PRO plan); fields left out keep their value',
    },
    remove: { role: ['helpdesk.configure', 'write'], run: deleteCannedResponse, summary: 'Delete a canned response (Manager and above, PRO plan)' },
  });
}
