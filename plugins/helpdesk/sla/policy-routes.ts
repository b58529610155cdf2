import { t } from 'elysia';
import { createSlaPolicy, deleteSlaPolicy, getSlaPolicy, listSlaPolicies, MAX_POLICY_INBOXES, updateSlaPolicy } from '../../../core/helpdesk/sla/policies.ts';
import { MAX_TARGET_MINUTES } from '../../../core/helpdesk/sla/sla.ts';
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { StandardError } from '../../kernel/http.ts';
import { slaPolicyStores } from './store.ts';
import { presentPolicy, SlaPolicyView } from './views.ts';

const NotFound = { 404: StandardError };
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
  return catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.sla.policies',
    prefix: '/v3/helpdesk/sla-policies',
    tags: ['Helpdesk'],
    role: 'helpdesk.configure',
    stores: slaPolicyStores,
    view: SlaPolicyView,
    present: presentPolicy,
    list: { run: listSlaPolicies, summary: 'SLA policies of the workspace, by name; `s` searches the name (Owner, Admin, Manager)' },
    create: {
      body: t.Object({ name: t.String({ description: '1 to 120 characters, unique in the workspace (any case)' }), ...Fields }),
      run: (s, actor, body) => createSlaPolicy(s, ctx, actor, body),
      errors: { 409: StandardError },
      summary: 'Create an SLA policy (Owner, Admin, Manager; PRO plan)',
      description:
        'At least one target. New conversations of the listed inboxes get the policy when they open; `PATCH /v3/helpdesk/conversations/{id}/sla` puts a policy on one conversation. A missed target records `helpdesk.sla.missed` (helpdesk webhooks; never the websocket).',
    },
    get: { run: getSlaPolicy, errors: NotFound, summary: 'One SLA policy' },
    update: {
      body: t.Object({ name: t.Optional(t.String({ description: '1 to 120 characters, unique in the workspace' })), ...Fields }),
      run: (s, actor, id, body) => updateSlaPolicy(s, ctx, actor, id, body),
      errors: { ...NotFound, 409: StandardError },
      summary: 'Change an SLA policy (PRO plan); fields left out keep their value',
      description: 'New targets apply to rounds that start afterwards; running rounds keep their due times. A change of inboxes applies to conversations that open afterwards.',
    },
    remove: {
      run: deleteSlaPolicy,
      errors: NotFound,
      summary: 'Delete an SLA policy (PRO plan): its conversations lose it and their running rounds stop; recorded breaches stay',
    },
  });
}
