import { t } from 'elysia';
import { getAssignmentSettings, setAssignmentSettings, type AssignmentSettings } from '../../../core/helpdesk/assignment/assignment-settings.ts';
import { assertMayChooseAvailability, ownAvailability } from '../../../core/helpdesk/assignment/availability.ts';
import { AVAILABILITIES } from '../../../core/helpdesk/assignment/presence.ts';
import { authenticatedRoutes, authErrors, iso, OneOf, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { setHelpdeskAvailability } from '../realtime/presence.ts';
import { workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { assignmentDeps, assignmentSettingsStores, ownPresenceStore } from './store.ts';

const AvailabilityView = t.Object({
  userId: Uuid,
  availability: t.UnionEnum([...AVAILABILITIES], { description: 'The value the member chose (online until they choose)' }),
  status: t.UnionEnum([...AVAILABILITIES], {
    description: 'What the workspace sees and round-robin uses: the chosen value while a helpdesk websocket of the member is live (connected, heartbeating), offline otherwise',
  }),
});

const AssignmentView = t.Object({
  inboxId: Uuid,
  enabled: t.Boolean({ description: 'New conversations of the inbox are assigned by round-robin (spec 3.7); default true' }),
  updatedAt: t.Nullable(Timestamp),
});

const Id = t.Object({ id: t.String() });

/** Availability of the member (spec 3.7, 4.6) and the per-inbox switch of automatic assignment. */
export function assignmentRoutes(ctx: PluginContext) {
  const deps = assignmentDeps(ctx);
  const own = (actor: Parameters<typeof ownAvailability>[2]) => ownAvailability(ctx.storage.read(ownPresenceStore), deps, actor);

  // The inbox switch keeps its role check in core: an Agent gets 404 for an inbox they are not a
  // member of before the 403 of helpdesk.configure.
  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.assignment', prefix: '/v3/helpdesk', tags: ['Helpdesk'] })
    .get('/profile/availability', ({ actor }) => own(actor), {
      response: { ...authErrors, 200: AvailabilityView },
      detail: { summary: 'Your availability: the value you chose and the status others see' },
    })
    .patch(
      '/profile/availability',
      async ({ actor, body }) => {
        await assertMayChooseAvailability(ctx.storage.read(workspacePlans), actor);
        // Announces `presence.update` to the workspace when what others see changes.
        await setHelpdeskAvailability(ctx, actor, body.availability);
        return own(actor);
      },
      {
        role: ['helpdesk.work', 'write'],
        body: t.Object({ availability: OneOf(AVAILABILITIES, { description: 'online: takes part in round-robin; busy and offline: skipped' }) }),
        response: { ...authErrors, 200: AvailabilityView },
        detail: {
          summary: 'Set your own availability (any member; PRO plan)',
          description:
            'Body `{ availability }` (the spec does not name the field). Round-robin hands new conversations only to members whose status is online, unless they are the only member of the inbox. The status stays offline until your helpdesk websocket connects, and decays to offline without heartbeats.',
        },
      },
    )
    .get('/inboxes/:id/assignment', async ({ actor, params }) => present(await getAssignmentSettings(ctx.storage.read(assignmentSettingsStores), actor, params.id)), {
      params: Id,
      response: { ...authErrors, 404: StandardError, 200: AssignmentView },
      detail: { summary: 'Whether new conversations of the inbox are assigned automatically' },
    })
    .put(
      '/inboxes/:id/assignment',
      async ({ actor, params, body }) => present(await ctx.storage.transaction(assignmentSettingsStores, (s) => setAssignmentSettings(s, ctx, actor, params.id, body))),
      {
        params: Id,
        body: t.Object({ enabled: t.Boolean({ description: 'true: round-robin assigns new conversations; false: they stay unassigned' }) }),
        response: { ...authErrors, 404: StandardError, 200: AssignmentView },
        detail: { summary: 'Switch automatic assignment of the inbox on or off (Owner, Admin, Manager; PRO plan)' },
      },
    );
}

function present(s: AssignmentSettings) {
  return { inboxId: s.inboxId, enabled: s.enabled, updatedAt: iso(s.updatedAt) };
}
