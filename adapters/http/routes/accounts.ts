import { t } from 'elysia';
import { listAccounts, updateWorkspace } from '../../../core/identity/workspaces.ts';
import { planSummary } from '../../../core/plans/summary.ts';
import { PLAN_NAMES } from '../../../core/plans/plans.ts';
import { ROLES } from '../../../core/identity/roles.ts';
import { baseStores } from '../../postgres/stores.ts';
import { authenticatedRoutes } from '../route-group.ts';
import type { AppContext } from '../context.ts';
import { authErrors, iso, StandardError, Timestamp, Uuid } from '../schemas.ts';

const RoleName = t.UnionEnum(ROLES, { error: `must be one of ${ROLES.join(', ')}` });
const PlanName = t.UnionEnum(PLAN_NAMES);

const Account = t.Object({
  id: Uuid,
  name: t.String(),
  isPersonal: t.Boolean(),
  roles: t.Array(RoleName),
  helpdeskEnabled: t.Boolean({
    description:
      'Whether the helpdesk works for this workspace: true for every workspace while the installation loads the helpdesk plugin (`PLUGINS`), false otherwise. Reading works on every plan; writing needs PRO (`features.helpdeskWrite` of `GET /v3/summary`).',
  }),
  plan: PlanName,
});

const Summary = t.Object({
  workspaceId: Uuid,
  plan: PlanName,
  connections: t.Object({ limit: t.Integer(), used: t.Integer(), remaining: t.Integer() }),
  messages: t.Object({
    limit: t.Integer({ description: 'Credits granted each calendar month (UTC)' }),
    available: t.Integer({ description: 'Credits free to use now' }),
    reserved: t.Integer({ description: 'Credits held for work under way (campaigns)' }),
    consumed: t.Integer({ description: 'Credits used this period' }),
    periodStart: Timestamp,
    periodEnd: Timestamp,
  }),
  features: t.Object({ officialConnections: t.Boolean(), helpdeskWrite: t.Boolean() }),
});

/** Workspaces of the caller (spec 2.3, 4.2) and the plan headroom of the current one. */
export function accountRoutes(ctx: AppContext) {
  return authenticatedRoutes(ctx, { name: 'routes.accounts', tags: ['Workspaces'] })
    .get('/v3/accounts', ({ actor }) => listAccounts(baseStores(ctx.db).identity, actor, ctx.helpdesk ?? false), {
      response: { ...authErrors, 200: t.Array(Account) },
      detail: { summary: 'Workspaces the caller belongs to, with their roles' },
    })
    .patch(
      '/v3/accounts/:id',
      ({ actor, params, body }) => updateWorkspace(baseStores(ctx.db).identity, actor, params.id, body, ctx.helpdesk ?? false),
      {
        role: ['workspace.update', 'write'],
        params: t.Object({ id: Uuid }),
        body: t.Object({
          name: t.Optional(t.String({ minLength: 1, maxLength: 120, error: 'must be a string of 1 to 120 characters' })),
          helpdeskEnabled: t.Optional(
            t.Boolean({
              description:
                'Accepted only with the value the workspace reads (nothing changes); the other value is 409: the helpdesk is switched for the whole installation by `PLUGINS`.',
            }),
          ),
        }),
        response: { ...authErrors, 200: Account, 409: StandardError },
        detail: {
          summary: 'Update the current workspace (Owner only); the id must be the workspace the request acts in',
          description:
            'Renames the workspace. `helpdeskEnabled` is not a per-workspace switch: it reads true for every workspace while the installation loads the helpdesk plugin. ' +
            'Sending the value it reads changes nothing; sending the other is 409 and nothing in the request is applied.',
        },
      },
    )
    .get(
      '/v3/summary',
      async ({ actor }) => {
        const summary = await planSummary(baseStores(ctx.db), ctx, actor);
        return {
          ...summary,
          messages: { ...summary.messages, periodStart: iso(summary.messages.periodStart), periodEnd: iso(summary.messages.periodEnd) },
        };
      },
      { response: { ...authErrors, 200: Summary }, detail: { summary: 'Plan headroom: connections and message credits left' } },
    );
}

export { RoleName };
