import { t } from 'elysia';
import type { TObject } from '@sinclair/typebox';
import {
  AGENT_BOT_TOKEN_HEADER,
  agentBotDeliveries,
  createAgentBot,
  deleteAgentBot,
  getAgentBot,
  listAgentBots,
  MAX_BOT_DESCRIPTION_LENGTH,
  MAX_BOT_INBOXES,
  MAX_BOT_NAME_LENGTH,
  redeliverAgentBotDelivery,
  rotateAgentBotSigningSecret,
  rotateAgentBotToken,
  updateAgentBot,
  type AgentBot,
  type AgentBotDeps,
  type AgentBotStores,
} from '../../../core/helpdesk/bots/agent-bots.ts';
import type { Actor } from '../../../core/identity/identity.ts';
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import { authentication } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, iso, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import { deliveryRoutes, dispatchDeps } from '../../kernel/webhooks.ts';
import { agentBotStores } from './use-case-stores.ts';

export const AgentBotView = t.Object({
  id: Uuid,
  name: t.String(),
  description: t.Nullable(t.String()),
  webhookUrl: t.String({ description: 'Receives the events of the bot\'s conversations, signed with X-Helpdesk-Signature keyed with the signing secret' }),
  inboxIds: t.Array(Uuid, { description: 'The inboxes the bot serves (an inbox has at most one bot)' }),
  accessTokenLast4: t.String({ description: 'The end of the access token, to tell tokens apart' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const AccessToken = t.String({ description: `The bot's credential on the bot API (header ${AGENT_BOT_TOKEN_HEADER}); shown once` });
const SigningSecret = t.String({ description: 'Keys X-Helpdesk-Signature (hex HMAC-SHA256 of the raw body) on the bot\'s deliveries; shown once' });

const Settings = {
  name: t.String({ description: `1 to ${MAX_BOT_NAME_LENGTH} characters` }),
  description: t.Optional(t.Nullable(t.String({ description: `Up to ${MAX_BOT_DESCRIPTION_LENGTH} characters` }))),
  webhookUrl: t.String({ description: 'Absolute http(s) URL that receives the bot\'s events; private, loopback, link-local and internal addresses are refused (400) unless OUTBOUND_ALLOW exempts them' }),
  inboxIds: t.Optional(
    t.Array(t.String(), {
      maxItems: MAX_BOT_INBOXES,
      description: 'Inboxes the bot serves: it takes their new conversations first. An inbox another bot serves is a 409. Replaces the set on PATCH; conversations it holds in an inbox it stops serving are handed over to people',
    }),
  ),
};

const Id = t.Object({ id: t.String() });
const NotFound = { 404: StandardError };

/** A rotation's options: no input but the bot, and the bot with its new credential (shown this once) as the answer. */
const rotation = <C extends TObject>(credential: C, summary: string) => ({
  params: Id,
  body: t.Optional(t.Object({}, { description: 'No fields' })),
  response: { ...authErrors, ...NotFound, 201: t.Composite([AgentBotView, credential]) },
  detail: { summary },
});

/** Agent bots (issue 7 item 4): settings, secrets, delivery history. Helpdesk configuration (Owner, Admin, Manager), PRO plan for writes. */
export function agentBotRoutes(ctx: PluginContext) {
  // A rotation: 201 with the bot and its new credential, changed in one transaction.
  const rotate =
    <R extends { bot: AgentBot }>(run: (stores: AgentBotStores, deps: AgentBotDeps, actor: Actor, id: string) => Promise<R>) =>
    async ({ actor, params, set }: { actor: Actor; params: { id: string }; set: { status?: number | string } }) => {
      set.status = 201;
      const { bot, ...credential } = await ctx.storage.transaction(agentBotStores, (s) => run(s, ctx, actor, params.id));
      return { ...present(bot), ...credential };
    };

  return catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.agent-bots',
    prefix: '/v3/helpdesk/agent-bots',
    tags: ['Helpdesk agent bots'],
    role: 'helpdesk.configure',
    stores: agentBotStores,
    view: AgentBotView,
    present,
    list: { run: listAgentBots, summary: 'Agent bots of the workspace (`s` searches the name)' },
    get: { run: getAgentBot, errors: NotFound, summary: 'One agent bot' },
    update: {
      body: t.Object({ ...Settings, name: t.Optional(Settings.name), webhookUrl: t.Optional(Settings.webhookUrl) }),
      run: (s, actor, id, body) => updateAgentBot(s, ctx, actor, id, body),
      errors: { ...NotFound, 409: StandardError },
      summary: 'Change an agent bot (PRO plan); fields left out keep their value; inboxIds replaces the set',
    },
    remove: {
      run: deleteAgentBot,
      errors: NotFound,
      summary: 'Delete an agent bot (PRO plan): the conversations it holds are handed over to people first; its delivery history goes with it',
    },
  })
    // Creating and rotating answer the bot with a secret shown once, beyond its view.
    .guard({ auth: true, role: 'helpdesk.configure' }, (app) =>
      app
        .post(
          '',
          async ({ actor, body, set }) => {
            const created = await ctx.storage.transaction(agentBotStores, (s) => createAgentBot(s, ctx, actor, body));
            set.status = 201;
            return { ...present(created.bot), accessToken: created.accessToken, signingSecret: created.signingSecret };
          },
          {
            body: t.Object(Settings),
            response: { ...authErrors, 201: t.Composite([AgentBotView, t.Object({ accessToken: AccessToken, signingSecret: SigningSecret })]), 409: StandardError },
            detail: { summary: 'Create an agent bot (Owner, Admin, Manager; PRO plan); its access token and signing secret are shown this once' },
          },
        )
        .post(
          '/:id/token/rotate',
          rotate(rotateAgentBotToken),
          rotation(t.Object({ accessToken: AccessToken }), 'A new access token for the bot (PRO plan); the old one stops working at once'),
        )
        .post(
          '/:id/signing-secret/rotate',
          rotate(rotateAgentBotSigningSecret),
          rotation(
            t.Object({ signingSecret: SigningSecret }),
            'A new signing secret for the bot\'s deliveries (PRO plan); every attempt from now on, retries included, is signed with it',
          ),
        ),
    )
    .use(
      deliveryRoutes({
        authentication: authentication(ctx),
        role: 'helpdesk.configure',
        storage: ctx.storage,
        stores: agentBotStores,
        dispatch: dispatchDeps(ctx),
        history: agentBotDeliveries,
        redeliver: redeliverAgentBotDelivery,
        historySummary: 'What was POSTed to the bot\'s webhook, newest first, with every attempt',
      }),
    );
}

export function present(bot: AgentBot) {
  return {
    id: bot.id,
    name: bot.name,
    description: bot.description,
    webhookUrl: bot.webhookUrl,
    inboxIds: bot.inboxIds,
    accessTokenLast4: bot.accessTokenLast4,
    createdAt: iso(bot.createdAt),
    updatedAt: iso(bot.updatedAt),
  };
}
