import { t } from 'elysia';
import { applyConversationSla, getConversationSla } from '../../../core/helpdesk/sla/conversation-sla.ts';
import { authenticatedRoutes, authErrors, StandardError } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { slaDeps } from './subscribers.ts';
import { conversationSlaStores } from './tracking-store.ts';
import { ConversationSlaView, presentConversationSla } from './views.ts';

const Id = t.Object({ id: t.String() });

/** The SLA of one conversation (core/helpdesk/sla/conversation-sla.ts). */
export function conversationSlaRoutes(ctx: PluginContext) {
  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.sla.conversations', prefix: '/v3/helpdesk/conversations', tags: ['Helpdesk'] })
    .get('/:id/sla', async ({ actor, params }) => presentConversationSla(await getConversationSla(ctx.storage.read(conversationSlaStores), actor, params.id)), {
      params: Id,
      response: { ...authErrors, 404: StandardError, 200: ConversationSlaView },
      detail: {
        summary: 'The conversation\'s SLA: policy, running due times, timing and breaches (whoever sees the conversation)',
        description: 'Due times are those of running rounds; a round ends at the reply (or resolve) that answers it. `breached` lists the targets missed at least once.',
      },
    })
    .patch(
      '/:id/sla',
      async ({ actor, params, body }) =>
        presentConversationSla(await ctx.storage.transaction(conversationSlaStores, (s) => applyConversationSla(s, slaDeps(ctx), actor, params.id, body.policyId))),
      {
        params: Id,
        body: t.Object({ policyId: t.Nullable(t.String({ description: 'An SLA policy of the workspace; null takes the SLA off this conversation' })) }),
        response: { ...authErrors, 404: StandardError, 200: ConversationSlaView },
        detail: {
          summary: 'Put an SLA policy on the conversation, or none (Owner, Admin, Manager; PRO plan)',
          description: 'Overrides the inbox\'s policy for this conversation, applied now: its clocks start from now; running rounds of the previous policy stop. The same policy again changes nothing.',
        },
      },
    );
}
