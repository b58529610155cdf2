import { t } from 'elysia';
import { listNotifications, markAllNotificationsRead, markNotificationRead, unreadNotificationCount } from '../../../core/helpdesk/notifications/notifications.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { badRequest } from '../../../core/shared/errors.ts';
import { authenticatedRoutes, authErrors, PageOf, PageQuery, StandardError } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { RouteScope } from '../../kernel/http.ts';
import { notificationStores } from './notification-stores.ts';
import { NotificationView, presentNotification } from './views.ts';

export const NOTIFICATION_ROUTE_SCOPES: RouteScope[] = [
  { method: 'GET', path: '/v3/helpdesk/notifications', scopes: ['helpdesk:read'] },
  { method: 'GET', path: '/v3/helpdesk/notifications/unread-count', scopes: ['helpdesk:read'] },
  { method: 'POST', path: '/v3/helpdesk/notifications/:id/read', scopes: ['helpdesk:write'] },
  { method: 'POST', path: '/v3/helpdesk/notifications/read-all', scopes: ['helpdesk:write'] },
];

const NoBody = t.Optional(t.Object({}, { description: 'No fields; the body may be left out', additionalProperties: true }));

/**
 * The caller's in-app notifications (core/helpdesk/notifications/notifications.ts): each member sees only their
 * own, in the workspace of the request. Every member, every plan (it is their own list).
 */
export function notificationRoutes(ctx: PluginContext) {
  // Marking one's own notifications read is `helpdesk.work` read in core, as listing them is.
  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.notifications', prefix: '/v3/helpdesk/notifications', tags: ['Helpdesk'], role: ['helpdesk.work', 'read'] })
    .get(
      '',
      async ({ actor, query }) => {
        const unread = query.unread === 'true';
        if (query.unread !== undefined && !['true', 'false'].includes(query.unread)) throw badRequest(['query.unread must be true or false']);
        const found = await listNotifications(ctx.storage.read(notificationStores), actor, pageRequest(query), { unread });
        return { ...found, data: found.data.map(presentNotification) };
      },
      {
        query: t.Composite([PageQuery, t.Object({ unread: t.Optional(t.String({ description: 'true: only those not read yet' })) })], { additionalProperties: true }),
        response: { ...authErrors, 200: PageOf(NotificationView) },
        detail: { summary: 'Your notifications, newest first (mentions, assignments, messages on conversations assigned to you); unread=true for the unread ones' },
      },
    )
    .get('/unread-count', async ({ actor }) => ({ count: await unreadNotificationCount(ctx.storage.read(notificationStores), actor) }), {
      response: { ...authErrors, 200: t.Object({ count: t.Integer({ description: 'Your notifications not read yet' }) }) },
      detail: { summary: 'How many of your notifications are unread' },
    })
    .post('/read-all', async ({ actor, set }) => {
      set.status = 201;
      return ({ updated: await markAllNotificationsRead(ctx.storage.read(notificationStores), ctx, actor) });
    }, {
      body: NoBody,
      response: { ...authErrors, 201: t.Object({ updated: t.Integer({ description: 'How many were marked read' }) }) },
      detail: { summary: 'Mark all your notifications read' },
    })
    .post('/:id/read', async ({ actor, params, set }) => {
      set.status = 201;
      return presentNotification(await markNotificationRead(ctx.storage.read(notificationStores), ctx, actor, params.id));
    }, {
      params: t.Object({ id: t.String() }),
      body: NoBody,
      response: { ...authErrors, 404: StandardError, 201: NotificationView },
      detail: { summary: 'Mark one of your notifications read (already read: unchanged); another member\'s is 404' },
    });
}
