import { t } from 'elysia';
import {
  DEFAULT_SURVEY_MESSAGE,
  getCsatSettings,
  listCsatResponses,
  MAX_COMMENT_LENGTH,
  MAX_SURVEY_MESSAGE_LENGTH,
  setCsatSettings,
  type ListedCsatResponse,
} from '../../../core/helpdesk/csat/csat.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { authenticatedRoutes, authErrors, iso, PageOf, PageQuery, presentPage, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { RouteScope } from '../../kernel/http.ts';
import { csatStores } from './store.ts';

/**
 * OAuth scopes: the setting is helpdesk configuration (`helpdesk:read` "settings" / `helpdesk:write`);
 * the answers hold customers' words, so reading them is `helpdesk:read` rather than `stats:read`.
 */
export const CSAT_ROUTE_SCOPES: RouteScope[] = [
  { method: 'GET', path: '/v3/helpdesk/inboxes/:id/csat', scopes: ['helpdesk:read'] },
  { method: 'PUT', path: '/v3/helpdesk/inboxes/:id/csat', scopes: ['helpdesk:write'] },
  { method: 'GET', path: '/v3/helpdesk/csat-responses', scopes: ['helpdesk:read'] },
];

const CsatSettingsView = t.Object({
  inboxId: Uuid,
  enabled: t.Boolean({ description: 'When true, resolving a conversation of the inbox sends the contact the survey link once' }),
  message: t.Nullable(t.String({ description: `The text before the link; null is the default: "${DEFAULT_SURVEY_MESSAGE}"` })),
});

const CsatResponseView = t.Object({
  conversationId: Uuid,
  displayId: t.Integer(),
  inboxId: Uuid,
  contactId: Uuid,
  rating: t.Integer({ minimum: 1, maximum: 5 }),
  comment: t.Nullable(t.String({ description: `Up to ${MAX_COMMENT_LENGTH} characters` })),
  assigneeUserId: t.Nullable(Uuid),
  teamId: t.Nullable(Uuid),
  submittedAt: Timestamp,
});

const Id = t.Object({ id: t.String() });
const ListQuery = t.Composite(
  [
    PageQuery,
    t.Object({
      inboxId: t.Optional(t.String({ description: 'Only answers about conversations of this inbox' })),
      from: t.Optional(t.String({ description: 'Submitted at or after: a UTC day YYYY-MM-DD (from its start) or an ISO 8601 UTC timestamp; inclusive' })),
      to: t.Optional(t.String({ description: 'Submitted at or before: a UTC day YYYY-MM-DD (to its end) or an ISO 8601 UTC timestamp; inclusive' })),
    }),
  ],
  { additionalProperties: true },
);

/** CSAT configuration per inbox and the answers, for managers. */
export function csatRoutes(ctx: PluginContext) {

  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.csat', prefix: '/v3/helpdesk', tags: ['Helpdesk'] })
    .get('/inboxes/:id/csat', async ({ actor, params }) => getCsatSettings(ctx.storage.read(csatStores), actor, params.id), {
      role: ['helpdesk.configure', 'read'],
      params: Id,
      response: { ...authErrors, 404: StandardError, 200: CsatSettingsView },
      detail: { summary: 'The inbox\'s CSAT survey setting (off by default); Owners, Admins and Managers' },
    })
    .put('/inboxes/:id/csat', async ({ actor, params, body }) => ctx.storage.transaction(csatStores, (s) => setCsatSettings(s, ctx, actor, params.id, body)), {
      role: ['helpdesk.configure', 'write'],
      params: Id,
      body: t.Object({
        enabled: t.Boolean(),
        message: t.Optional(t.Nullable(t.String({ description: `1 to ${MAX_SURVEY_MESSAGE_LENGTH} characters sent before the link; left out or null: the default text` }))),
      }),
      response: { ...authErrors, 404: StandardError, 200: CsatSettingsView },
      detail: {
        summary: 'Turn the CSAT survey on or off for the inbox (PRO plan)',
        description:
          'When on, a conversation of the inbox that is resolved sends its contact, once per conversation, the message and the link `/public/helpdesk/csat/{conversationId}` (no token, no expiry; answered once) as a reply from the helpdesk itself.',
      },
    })
    .get(
      '/csat-responses',
      async ({ actor, query }) => presentPage(await listCsatResponses(ctx.storage.read(csatStores), actor, pageRequest(query), query), present),
      {
        role: ['helpdesk.reports', 'read'],
        query: ListQuery,
        response: { ...authErrors, 200: PageOf(CsatResponseView) },
        detail: { summary: 'Survey answers, newest first (helpdesk reports: Owners, Admins, Managers); filters inboxId, from, to; `s` searches comments' },
      },
    );
}

function present(r: ListedCsatResponse) {
  return {
    conversationId: r.conversationId,
    displayId: r.displayId,
    inboxId: r.inboxId,
    contactId: r.contactId,
    rating: r.rating,
    comment: r.comment,
    assigneeUserId: r.assigneeUserId,
    teamId: r.teamId,
    submittedAt: iso(r.submittedAt),
  };
}
