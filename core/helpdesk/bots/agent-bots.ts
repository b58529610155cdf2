import { workspaceReads } from '../../shared/workspace-records.ts';
import type { Actor } from '../../identity/identity.ts';
import { badRequest, conflict, notFound, unauthorized } from '../../shared/errors.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen, Random } from '../../shared/ports.ts';
import { base64url, hashSecret, secretMatches } from '../../tokens/secret.ts';
import { isHttpUrl } from '../../webhooks/webhook.ts';
import { subscriberDeliveries } from '../webhooks/subscriber-deliveries.ts';
import type { InboxStore } from '../inboxes/inboxes.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';
import { assertOutboundAllowed, type OutboundPolicy } from '../../shared/outbound-policy.ts';

/**
 * Agent bots (issue 7 item 4; spec 6.5 "with a bot also `fromAgentBotId`, `toAgentBotId`"): a bot
 * serves inboxes (an inbox has at most one bot), takes their new conversations first, hears their
 * events on its own webhook and answers through the bot API (agent-bot-conversations.ts).
 *
 * Two secrets, one per direction:
 * - the access token (`hdbot_…`) is the bot's credential when it calls us (header
 *   `x-agent-bot-token`); only its SHA-256 is stored, it is shown once (creation, rotation);
 * - the signing secret (`hdbotsec_…`) keys `X-Helpdesk-Signature` on what we POST to the bot's
 *   webhook; it is sealed at rest (deliveries need it back) and shown once (creation, rotation).
 * Keeping them apart means a leaked webhook log cannot be replayed as API calls, and the other way.
 *
 * Managing bots is helpdesk configuration (2.14: Owner, Admin, Manager; reads too, Agents get
 * 403) and needs the PRO plan for writes.
 */
export interface AgentBot {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  webhookUrl: string;
  /** The inboxes it serves (each served by this bot alone). */
  inboxIds: string[];
  accessTokenHash: string;
  accessTokenLast4: string;
  signingSecret: string;
  createdAt: Date;
  updatedAt: Date;
}

export const AGENT_BOT_TOKEN_PREFIX = 'hdbot';
export const AGENT_BOT_SECRET_PREFIX = 'hdbotsec';
export const AGENT_BOT_TOKEN_HEADER = 'x-agent-bot-token';
export const MAX_BOT_NAME_LENGTH = 100;
export const MAX_BOT_DESCRIPTION_LENGTH = 1000;
export const MAX_BOT_INBOXES = 100;

export interface AgentBotStore {
  /** Inserts the bot and its inbox bindings (bound at `at`); a binding taken meanwhile is a 409. */
  insert(bot: AgentBot, at: Date): Promise<void>;
  get(workspaceId: string, id: string): Promise<AgentBot | undefined>;
  /** Any workspace: the delivery engine and the bot API know only the id or the token. */
  find(id: string): Promise<AgentBot | undefined>;
  findByTokenHash(accessTokenHash: string): Promise<AgentBot | undefined>;
  list(workspaceId: string, request: PageRequest): Promise<Page<AgentBot>>;
  /** Writes the settings, secrets and bindings; an inbox kept keeps its binding time, a new one is bound at `at`. */
  update(bot: AgentBot, at: Date): Promise<void>;
  /** Deletes the bot, its bindings and its delivery history. */
  delete(id: string): Promise<void>;
  /** The bot serving the inbox, and since when (conversations created before are not its). */
  servingInbox(inboxId: string): Promise<{ bot: AgentBot; boundAt: Date } | undefined>;
  /** Which of these inboxes another bot serves. */
  servedByOthers(inboxIds: string[], exceptBotId: string | null): Promise<Array<{ inboxId: string; agentBotId: string }>>;
}

export interface AgentBotStores {
  agentBots: AgentBotStore;
  inboxes: InboxStore;
  plans: WorkspacePlans;
  /**
   * Hands the conversations the bot holds (in these inboxes, or all when null) over to people
   * (agent-bot-conversations.ts `handOverHeld`), in the caller's transaction; answers how many.
   */
  releaseConversations(bot: AgentBot, inboxIds: string[] | null, actorUserId: string): Promise<number>;
}

export interface AgentBotDeps {
  clock: Clock;
  ids: IdGen;
  random: Random;
  outbound: OutboundPolicy;
}

export interface AgentBotInput {
  name: string;
  description?: string | null;
  webhookUrl: string;
  inboxIds?: string[];
}

/** What the creation and rotations answer besides the bot: each secret exactly once. */
export interface AgentBotSecrets {
  accessToken?: string;
  signingSecret?: string;
}

export const agentBotNotFound = (id: string) => notFound(`Agent bot ${id} not found`);

export function newAccessToken(random: Random): string {
  return `${AGENT_BOT_TOKEN_PREFIX}_${base64url(random.bytes(32))}`;
}

export function newSigningSecret(random: Random): string {
  return `${AGENT_BOT_SECRET_PREFIX}_${base64url(random.bytes(32))}`;
}

export async function createAgentBot(stores: AgentBotStores, deps: AgentBotDeps, actor: Actor, input: AgentBotInput): Promise<{ bot: AgentBot } & Required<AgentBotSecrets>> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const settings = await validate(stores, actor, input, null);
  await assertOutboundAllowed(deps.outbound, 'body.webhookUrl', settings.webhookUrl);
  const now = deps.clock.now();
  const accessToken = newAccessToken(deps.random);
  const signingSecret = newSigningSecret(deps.random);
  const bot: AgentBot = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    ...settings,
    accessTokenHash: hashSecret(accessToken),
    accessTokenLast4: accessToken.slice(-4),
    signingSecret,
    createdAt: now,
    updatedAt: now,
  };
  await stores.agentBots.insert(bot, now);
  return { bot, accessToken, signingSecret };
}

const agentBotReads = workspaceReads<AgentBot>('helpdesk.configure', agentBotNotFound);

export const listAgentBots = (stores: AgentBotStores, actor: Actor, request: PageRequest) => agentBotReads.list(stores.agentBots, actor, request);

export const getAgentBot = (stores: AgentBotStores, actor: Actor, id: string) => agentBotReads.get(stores.agentBots, actor, id);


/**
 * Fields left out keep their value; `inboxIds` replaces the set. The conversations the bot holds
 * in an inbox it stops serving are handed over to people (as by the bot's own handoff, with the
 * member who changed the bot as actor).
 */
export async function updateAgentBot(stores: AgentBotStores, deps: AgentBotDeps, actor: Actor, id: string, patch: Partial<AgentBotInput>): Promise<AgentBot> {
  const bot = await getAgentBot(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const settings = await validate(
    stores,
    actor,
    {
      name: patch.name ?? bot.name,
      description: patch.description === undefined ? bot.description : patch.description,
      webhookUrl: patch.webhookUrl ?? bot.webhookUrl,
      inboxIds: patch.inboxIds ?? bot.inboxIds,
    },
    bot.id,
  );
  if (patch.webhookUrl !== undefined) await assertOutboundAllowed(deps.outbound, 'body.webhookUrl', settings.webhookUrl);
  const dropped = bot.inboxIds.filter((inboxId) => !settings.inboxIds.includes(inboxId));
  if (dropped.length > 0) await stores.releaseConversations(bot, dropped, actor.userId);
  const updated: AgentBot = { ...bot, ...settings, updatedAt: deps.clock.now() };
  await stores.agentBots.update(updated, updated.updatedAt);
  return updated;
}

/** Hands every conversation the bot holds over to people, then deletes it with its delivery history. */
export async function deleteAgentBot(stores: AgentBotStores, actor: Actor, id: string): Promise<void> {
  const bot = await getAgentBot(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  await stores.releaseConversations(bot, null, actor.userId);
  await stores.agentBots.delete(bot.id);
}

/** A new access token; the old one stops working in the same write. Shown once. */
export async function rotateAgentBotToken(stores: AgentBotStores, deps: AgentBotDeps, actor: Actor, id: string): Promise<{ bot: AgentBot; accessToken: string }> {
  const bot = await getAgentBot(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const accessToken = newAccessToken(deps.random);
  const updated: AgentBot = { ...bot, accessTokenHash: hashSecret(accessToken), accessTokenLast4: accessToken.slice(-4), updatedAt: deps.clock.now() };
  await stores.agentBots.update(updated, updated.updatedAt);
  return { bot: updated, accessToken };
}

/** A new signing secret: deliveries are signed with it from now on (retries included). Shown once. */
export async function rotateAgentBotSigningSecret(stores: AgentBotStores, deps: AgentBotDeps, actor: Actor, id: string): Promise<{ bot: AgentBot; signingSecret: string }> {
  const bot = await getAgentBot(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const signingSecret = newSigningSecret(deps.random);
  const updated: AgentBot = { ...bot, signingSecret, updatedAt: deps.clock.now() };
  await stores.agentBots.update(updated, updated.updatedAt);
  return { bot: updated, signingSecret };
}

const agentBotDeliveryLog = subscriberDeliveries(getAgentBot);

/** What was POSTed to the bot's webhook, newest first, with every attempt (the delivery engine's history). */
export const agentBotDeliveries = agentBotDeliveryLog.list;

/** A failed delivery to the bot sent again by hand: a fresh round of three attempts. */
export const redeliverAgentBotDelivery = agentBotDeliveryLog.redeliver;

/**
 * The bot calling the bot API: its access token, looked up by hash and compared in constant
 * time (as API keys are). Anything else is 401, with one message whatever was wrong.
 */
export async function authenticateAgentBot(store: Pick<AgentBotStore, 'findByTokenHash'>, token: string | null | undefined): Promise<AgentBot> {
  const refused = () => unauthorized(`Invalid or missing agent bot token (header ${AGENT_BOT_TOKEN_HEADER})`);
  if (!token || !token.startsWith(`${AGENT_BOT_TOKEN_PREFIX}_`)) throw refused();
  const bot = await store.findByTokenHash(hashSecret(token));
  if (!bot || !secretMatches(token, bot.accessTokenHash)) throw refused();
  return bot;
}

/** Every broken rule in one 400; an inbox another bot serves is a 409 (checked once the rest is valid). */
async function validate(
  stores: AgentBotStores,
  actor: Actor,
  input: AgentBotInput,
  botId: string | null,
): Promise<Pick<AgentBot, 'name' | 'description' | 'webhookUrl' | 'inboxIds'>> {
  const problems: string[] = [];
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length === 0 || name.length > MAX_BOT_NAME_LENGTH) problems.push(`body.name must be 1 to ${MAX_BOT_NAME_LENGTH} characters`);
  const description = typeof input.description === 'string' ? input.description.trim() || null : null;
  if (description !== null && description.length > MAX_BOT_DESCRIPTION_LENGTH) problems.push(`body.description must be at most ${MAX_BOT_DESCRIPTION_LENGTH} characters`);
  if (!isHttpUrl(input.webhookUrl)) problems.push('body.webhookUrl must be an absolute http(s) URL');
  const inboxIds = [...new Set(input.inboxIds ?? [])];
  if (inboxIds.length > MAX_BOT_INBOXES) problems.push(`body.inboxIds may name at most ${MAX_BOT_INBOXES} inboxes`);
  else {
    const unknown: string[] = [];
    for (const inboxId of inboxIds) if (!(await stores.inboxes.get(actor.workspaceId, inboxId))) unknown.push(inboxId);
    if (unknown.length > 0) problems.push(`body.inboxIds names no inbox of this workspace: ${unknown.join(', ')}`);
  }
  if (problems.length > 0) throw badRequest(problems);
  const taken = await stores.agentBots.servedByOthers(inboxIds, botId);
  if (taken.length > 0) {
    throw conflict(`An inbox has at most one agent bot: ${taken.map((t) => `inbox ${t.inboxId} is served by agent bot ${t.agentBotId}`).join('; ')}`);
  }
  return { name, description, webhookUrl: input.webhookUrl, inboxIds };
}
