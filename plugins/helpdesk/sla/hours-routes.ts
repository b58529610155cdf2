import { t } from 'elysia';
import { getInboxHours, MAX_HOLIDAYS, MAX_OUT_OF_OFFICE_MESSAGE, setBusinessHours, setOutOfOffice } from '../../../core/helpdesk/sla/business-hours-settings.ts';
import { authenticatedRoutes, authErrors, StandardError } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { inboxHoursStores } from './store.ts';
import { BusinessHoursView, OutOfOfficeView, presentBusinessHours, presentOutOfOffice, WeeklyHours } from './views.ts';
import { intlZoneRules } from '../../kernel/time-zones.ts';

const Id = t.Object({ id: t.String() });

/** Business hours and the out-of-office reply of an inbox (core/helpdesk/sla/business-hours-settings.ts). */
export function inboxHoursRoutes(ctx: PluginContext) {
  const hoursView = ({ inbox, hours }: Awaited<ReturnType<typeof getInboxHours>>) => presentBusinessHours(inbox, hours, intlZoneRules, ctx.clock.now());

  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.sla.hours', prefix: '/v3/helpdesk/inboxes', tags: ['Helpdesk'] })
    .get('/:id/business-hours', async ({ actor, params }) => hoursView(await getInboxHours(ctx.storage.read(inboxHoursStores), actor, params.id)), {
      params: Id,
      response: { ...authErrors, 404: StandardError, 200: BusinessHoursView },
      detail: {
        summary: 'The inbox\'s business hours and holidays, in its timezone (any member who sees the inbox)',
        description: 'Never configured or disabled: open around the clock (24/7). They drive business-hours SLA clocks and the out-of-office reply.',
      },
    })
    .put('/:id/business-hours', async ({ actor, params, body }) => hoursView(await ctx.storage.transaction(inboxHoursStores, (s) => setBusinessHours(s, ctx, actor, params.id, body))), {
      params: Id,
      body: t.Object({
        enabled: t.Boolean({ description: 'false: open around the clock (the hours are kept for later)' }),
        weeklyHours: t.Optional(WeeklyHours),
        holidays: t.Optional(
          t.Array(t.Object({ date: t.String({ description: 'YYYY-MM-DD, a local date of the inbox\'s timezone' }), name: t.Optional(t.Nullable(t.String())) }), {
            maxItems: MAX_HOLIDAYS,
            description: 'Dates closed all day; replaces the list',
          }),
        ),
      }),
      response: { ...authErrors, 404: StandardError, 200: BusinessHoursView },
      detail: {
        summary: 'Replace the inbox\'s business hours and holidays (Owner, Admin, Manager; PRO plan)',
        description: 'Intervals are HH:MM in the inbox\'s timezone, start before end, 24:00 for midnight; overlapping intervals are refused, touching ones merge. Enabled hours need at least one interval. SLA rounds already running keep their due times.',
      },
    })
    .get('/:id/out-of-office', async ({ actor, params }) => presentOutOfOffice((await getInboxHours(ctx.storage.read(inboxHoursStores), actor, params.id)).hours), {
      params: Id,
      response: { ...authErrors, 404: StandardError, 200: OutOfOfficeView },
      detail: { summary: 'The inbox\'s out-of-office reply (off by default; any member who sees the inbox)' },
    })
    .put('/:id/out-of-office', async ({ actor, params, body }) => presentOutOfOffice((await ctx.storage.transaction(inboxHoursStores, (s) => setOutOfOffice(s, ctx, actor, params.id, body))).hours), {
      params: Id,
      body: t.Object({
        enabled: t.Boolean(),
        message: t.Optional(t.Nullable(t.String({ description: `1 to ${MAX_OUT_OF_OFFICE_MESSAGE} characters; left out or null: the default text` }))),
      }),
      response: { ...authErrors, 404: StandardError, 200: OutOfOfficeView },
      detail: {
        summary: 'Switch the out-of-office reply on or off (Owner, Admin, Manager; PRO plan)',
        description:
          'While the inbox is closed (outside its business hours, or on a holiday), a contact\'s message gets one automatic reply per conversation and closed period, sent by the helpdesk itself (no user) through the normal reply path. It is not a reply for SLA purposes.',
      },
    });
}
