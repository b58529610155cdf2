import { Elysia, t } from 'elysia';
import { createSlaPolicy, deleteSlaPolicy, getSlaPolicy, listSlaPolicies, MAX_POLICY_INBOXES, updateSlaPolicy } from '../../../core/helpdesk/sla/policies.ts';
import { MAX_TARGET_MINUTES } from '../../../core/helpdesk/sla/sla.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { authentication } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, PageOf, PageQuery, StandardError } from '../../kernel/http.ts';
import { slaPolicyStores } from './store.ts';
import { presentPolicy, SlaPolicyView } from './views.ts';

const Id = t.Object({ id: t.String() });
const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) });
const Minutes = (what: string) =>
  t.Optional(t.Nullable(t.Number({ description: `${what}: whole minutes from 1 to ${MAX_TARGET_MINUTES} (business minutes unless onlyBusinessHours is false); null: no such target` })));
const Fields = {
  description: t.Optional(t.Nullable(t.String({ description: 'Up to 1000 characters' }))),
  firstResponseMinutes: Minutes('First reply to the contact by a person or a bot'),
  nextResponseMinutes: Minutes('Each later reply after the contact wrote again'),
  resolutionMinutes: Minutes('Resolution, from when the conversation opened or was reopened'),
  onlyBusinessHours: t.Optional(t.Boolean({ description: 'Default true: the clock runs only in the inbox\'s business hours (an inbox without business hours is open 24/7)' })),
  inboxIds: t.Optional(t.Array(t.String(), { maxItems: MAX_POLICY_INBOXES, description: 'Inboxes whose new conversations get this policy; replaces the list. An inbox has at most one policy (409)' })),
};

/** SLA policies (core/helpdesk/sla/policies.ts): Owners, Admins and Managers; changes on the PRO plan. */
export function slaPolicyRoutes(ctx: PluginContext) {

  return new Elysia({ name: 'plugins.helpdesk.sla.policies', prefix: '/v3/helpdesk/sla-policies', detail: { tags: ['Helpdesk'] } })
    .use(authentication(ctx))
    .guard({ auth: true, role: 'helpdesk.configure' }, (app) =>
      app
        .get(
          '',
          async ({ actor, query }) => {
            const found = await listSlaPolicies(ctx.storage.read(slaPolicyStores), actor, pageRequest(query));
            return { ...found, data: found.data.map(presentPolicy) };
          },
          { query: PageQuery, response: { ...authErrors, 200: PageOf(SlaPolicyView) }, detail: { summary: 'SLA policies of the workspace, by name; `s` searches the name (Owner, Admin, Manager)' } },
        )
        .post(
          '',
          async ({ actor, body, set }) => {
            const policy = await ctx.storage.transaction(slaPolicyStores, (s) => createSlaPolicy(s, ctx, actor, body));
            set.status = 201;
            return presentPolicy(policy);
          },
          {
            body: t.Object({ name: t.String({ description: '1 to 120 characters, unique in the workspace (any case)' }), ...Fields }),
            response: { ...authErrors, 201: SlaPolicyView, 409: StandardError },
            detail: {
              summary: 'Create an SLA policy (Owner, Admin, Manager; PRO plan)',
              description:
                'At least one target. New conversations of the listed inboxes get the policy when they open; `PATCH /v3/helpdesk/conversations/{id}/sla` puts a policy on one conversation. A missed target records `helpdesk.sla.missed` (helpdesk webhooks; never the websocket).',
            },
          },
        )
        .get('/:id', async ({ actor, params }) => presentPolicy(await getSlaPolicy(ctx.storage.read(slaPolicyStores), actor, params.id)), {
          params: Id,
          response: { ...authErrors, 404: StandardError, 200: SlaPolicyView },
          detail: { summary: 'One SLA policy' },
        })
        .patch('/:id', async ({ actor, params, body }) => presentPolicy(await ctx.storage.transaction(slaPolicyStores, (s) => updateSlaPolicy(s, ctx, actor, params.id, body))), {
          params: Id,
          body: t.Object({ name: t.Optional(t.String({ description: '1 to 120 characters, unique in the workspace' })), ...Fields }),
          response: { ...authErrors, 404: StandardError, 200: SlaPolicyView, 409: StandardError },
          detail: {
            summary: 'Change an SLA policy (PRO plan); fields left out keep their value',
            description: 'New targets apply to rounds that start afterwards; running rounds keep their due times. A change of inboxes applies to conversations that open afterwards.',
          },
        })
        .delete(
          '/:id',
          async ({ actor, params }) => {
            await ctx.storage.transaction(slaPolicyStores, (s) => deleteSlaPolicy(s, actor, params.id));
            return { id: params.id, deleted: true as const };
          },
          {
            params: Id,
            response: { ...authErrors, 404: StandardError, 200: Deleted },
            detail: { summary: 'Delete an SLA policy (PRO plan): its conversations lose it and their running rounds stop; recorded breaches stay' },
          },
        ),
    );
}
