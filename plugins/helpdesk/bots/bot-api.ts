import { Elysia, t } from 'elysia';
import type { OpenAPIV3 } from 'openapi-types';
import { AGENT_BOT_TOKEN_HEADER, authenticateAgentBot, type AgentBot } from '../../../core/helpdesk/bots/agent-bots.ts';
import { botConversation, botHandoff, botMessages, botReply } from '../../../core/helpdesk/bots/agent-bot-conversations.ts';
import type { ConversationDeps } from '../../../core/helpdesk/conversations/conversations.ts';
import { MAX_CONTENT_LENGTH, MAX_MESSAGE_LIMIT } from '../../../core/helpdesk/conversations/helpdesk-messages.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { rateLimiter, TooManyRequests } from '../../kernel/http.ts';
import { authErrors, StandardError } from '../../kernel/http.ts';
import { messagingDeps, messagingStores } from '../../kernel/storage.ts';
import { ConversationView, HelpdeskMessageView, present, presentMessage } from '../conversations/views.ts';
import { agentBotStore } from './agent-bot-store.ts';
import { agentBotConversationStores } from './use-case-stores.ts';

export const AGENT_BOT_API_PREFIX = '/v3/helpdesk/agent-bot';

/**
 * Failed authentications per client IP and minute before 429: a bot's token cannot be guessed
 * by trying (successful calls are not counted, so a busy bot is never slowed down).
 */
export const BOT_AUTH_FAILURES_PER_MINUTE = 20;

const TOKEN_PARAMETER: OpenAPIV3.ParameterObject = {
  name: AGENT_BOT_TOKEN_HEADER,
  in: 'header',
  required: true,
  schema: { type: 'string' },
  description: 'The bot\'s access token (shown when the bot was created or its token rotated). No apikey on these routes.',
};
const Id = t.Object({ id: t.String() });
// 403 only when the workspace lost the PRO plan (coded HELPDESK_PLAN_REQUIRED).
const errors = { ...authErrors, 429: StandardError };

/**
 * The bot API: what an agent bot calls with its own token (header `x-agent-bot-token`), only on
 * conversations it holds (any other is 404). Not reachable with an apikey or OAuth token: a
 * person acts through the agent routes.
 */
export function agentBotApiRoutes(ctx: PluginContext) {
  const deps: ConversationDeps = { clock: ctx.clock, ids: ctx.ids };
  const sendDeps = messagingDeps(ctx);
  const limiter = rateLimiter({ limit: BOT_AUTH_FAILURES_PER_MINUTE, windowMs: 60_000, clock: ctx.clock });
  const bots = new WeakMap<Request, AgentBot>();

  const botAuth = new Elysia({ name: 'plugins.helpdesk.agent-bot.auth' }).macro({
    agentBot: {
      // At `transform`, before the body is validated: without the token nothing about the route is learnt.
      async transform({ request, server }) {
        const ip = server?.requestIP(request)?.address ?? 'unknown';
        if (!limiter.hit(ip)) throw new TooManyRequests(60);
        bots.set(request, await authenticateAgentBot(ctx.storage.read(agentBotStore), request.headers.get(AGENT_BOT_TOKEN_HEADER)));
        limiter.release(ip);
      },
      resolve({ request }): { bot: AgentBot } {
        const bot = bots.get(request);
        if (!bot) throw new Error('agent bot authentication did not run before resolve');
        return { bot };
      },
    },
  });

  return new Elysia({ name: 'plugins.helpdesk.agent-bot', prefix: `${AGENT_BOT_API_PREFIX}/conversations`, detail: { tags: ['Helpdesk agent bot API'] } })
    .use(botAuth)
    .guard({ agentBot: true }, (app) =>
      app
        .get('/:id', async ({ bot, params }) => present(await botConversation(ctx.storage.read(agentBotConversationStores), bot, params.id)), {
          params: Id,
          response: { ...errors, 200: ConversationView },
          detail: { summary: 'A conversation the bot holds', parameters: [TOKEN_PARAMETER] },
        })
        .get('/:id/messages', async ({ bot, params, query }) => (await botMessages(ctx.storage.read(agentBotConversationStores), bot, params.id, query)).map(presentMessage), {
          params: Id,
          query: t.Object(
            {
              limit: t.Optional(t.String({ description: `Integer from 1 to ${MAX_MESSAGE_LIMIT}; default 20` })),
              cursor: t.Optional(t.String({ description: 'Id of the oldest message already held; answers the messages before it' })),
            },
            { additionalProperties: true },
          ),
          response: { ...errors, 200: t.Array(HelpdeskMessageView, { description: 'Bare array, oldest first' }) },
          detail: { summary: 'Messages of a conversation the bot holds, oldest first', parameters: [TOKEN_PARAMETER] },
        })
        .post(
          '/:id/messages',
          async ({ bot, params, body, set }) => {
            const message = await ctx.storage.transaction(agentBotConversationStores, (s, trx) => botReply(s, { stores: messagingStores(trx, ctx), deps: sendDeps }, deps, bot, params.id, body));
            set.status = 201;
            return presentMessage(message);
          },
          {
            params: Id,
            body: t.Object({
              content: t.String({ description: `1 to ${MAX_CONTENT_LENGTH} characters` }),
              private: t.Optional(t.Boolean({ description: 'A private note for the people who take over: stored, never sent' })),
            }),
            response: { ...errors, 201: HelpdeskMessageView, 422: StandardError },
            detail: {
              summary: 'Reply as the bot (PENDING at once, sent like an agent\'s reply; senderUserId null, senderAgentBotId the bot), or leave a private note',
              parameters: [TOKEN_PARAMETER],
            },
          },
        )
        .post('/:id/handoff', async ({ bot, params, set }) => {
          set.status = 201;
          return present(await ctx.storage.transaction(agentBotConversationStores, (s) => botHandoff(s, deps, bot, params.id)));
        }, {
          params: Id,
          body: t.Optional(t.Object({}, { description: 'No fields', additionalProperties: true })),
          response: { ...errors, 201: ConversationView },
          detail: {
            summary: 'Hand the conversation over to people: the bot lets go and automatic assignment picks a person (spec 3.7; nobody when no eligible agent is online)',
            parameters: [TOKEN_PARAMETER],
          },
        }),
    );
}
