import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { badRequest, unprocessable } from '../../shared/errors.ts';
import type { Clock } from '../../shared/ports.ts';
import { isHttpUrl } from '../../webhooks/webhook.ts';
import { assertHelpdeskWritable, type WorkspacePlans } from '../plan-gate.ts';
import { assertOutboundAllowed, type OutboundPolicy } from '../../shared/outbound-policy.ts';
import type { SettingsStore } from '../../shared/workspace-records.ts';

/**
 * The workspace's AI configuration (spec 2.14 "Helpdesk: AI configuration: Owner yes, Admin yes,
 * Manager read, Agent read"; 7.1 422 "AI not configured"): one OpenAI-compatible chat-completions
 * provider (OpenAI itself, Azure-style gateways, a local Ollama or vLLM…) that the AI actions of
 * conversations use (ai-assist.ts).
 *
 * The API key is sealed at rest and never shown again: reads say `apiKeySet`. A PUT replaces the
 * settings, except that a PUT without `apiKey` keeps the stored key (clients cannot send back
 * what they never see); `apiKey: null` removes it. A key is optional: local providers need none.
 */
export const AI_PROVIDERS = ['openai-compatible'] as const;
export type AiProvider = (typeof AI_PROVIDERS)[number];

export const MAX_AI_MODEL_LENGTH = 200;
export const MAX_AI_BASE_URL_LENGTH = 2000;
export const MAX_AI_KEY_LENGTH = 4096;

export interface AiSettings {
  workspaceId: string;
  enabled: boolean;
  provider: AiProvider;
  /** The API root, e.g. `https://api.openai.com/v1` (the service POSTs to `<baseUrl>/chat/completions`). */
  baseUrl: string | null;
  model: string | null;
  apiKey: string | null;
  updatedAt: Date;
}

/** What every member may read: never the key. */
export interface AiSettingsView {
  enabled: boolean;
  provider: AiProvider;
  baseUrl: string | null;
  model: string | null;
  apiKeySet: boolean;
  /** Null until the settings were first saved. */
  updatedAt: Date | null;
}

export interface AiSettingsInput {
  enabled: boolean;
  provider?: string;
  baseUrl?: string | null;
  model?: string | null;
  /** Left out: the stored key stays; null: removed. */
  apiKey?: string | null;
}

/** By workspace id. */
export type AiSettingsStore = SettingsStore<AiSettings>;

export interface AiSettingsStores {
  aiSettings: AiSettingsStore;
  plans: WorkspacePlans;
}

/** Settings the AI actions can use: switched on, with a provider URL and a model. */
export interface UsableAiSettings extends AiSettings {
  baseUrl: string;
  model: string;
}

/** Spec 7.1: "422 Valid request but current resource state blocks it (… AI not configured)". */
export const aiNotConfigured = () => unprocessable('AI not configured');

export function usable(settings: AiSettings | undefined): settings is UsableAiSettings {
  return settings !== undefined && settings.enabled && settings.baseUrl !== null && settings.model !== null;
}

/** The settings an AI action may use, or 422 "AI not configured" (none saved, switched off, incomplete). */
export async function usableAiSettings(store: AiSettingsStore, workspaceId: string): Promise<UsableAiSettings> {
  const settings = await store.get(workspaceId);
  if (!usable(settings)) throw aiNotConfigured();
  return settings;
}

export function aiSettingsView(settings: AiSettings | undefined): AiSettingsView {
  return {
    enabled: settings?.enabled ?? false,
    provider: settings?.provider ?? 'openai-compatible',
    baseUrl: settings?.baseUrl ?? null,
    model: settings?.model ?? null,
    apiKeySet: (settings?.apiKey ?? null) !== null,
    updatedAt: settings?.updatedAt ?? null,
  };
}

/** `GET /v3/helpdesk/ai-settings`: every member reads (Managers and Agents read only); any plan. */
export async function getAiSettings(stores: AiSettingsStores, actor: Actor): Promise<AiSettingsView> {
  authorize(actor.roles, 'helpdesk.ai', 'read');
  return aiSettingsView(await stores.aiSettings.get(actor.workspaceId));
}

/** `PUT /v3/helpdesk/ai-settings`: Owner and Admin, PRO plan. Every broken rule in one 400. */
export async function putAiSettings(stores: AiSettingsStores, deps: { clock: Clock; outbound: OutboundPolicy }, actor: Actor, input: AiSettingsInput): Promise<AiSettingsView> {
  authorize(actor.roles, 'helpdesk.ai', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  const current = await stores.aiSettings.get(actor.workspaceId);
  const problems: string[] = [];
  if (typeof input.enabled !== 'boolean') problems.push('body.enabled must be true or false');
  const provider = input.provider ?? 'openai-compatible';
  if (!(AI_PROVIDERS as readonly string[]).includes(provider)) problems.push(`body.provider must be one of ${AI_PROVIDERS.join(', ')}`);
  const baseUrl = typeof input.baseUrl === 'string' ? input.baseUrl.trim().replace(/\/+$/, '') || null : null;
  if (baseUrl !== null && (!isHttpUrl(baseUrl) || baseUrl.length > MAX_AI_BASE_URL_LENGTH)) problems.push(`body.baseUrl must be an absolute http(s) URL of at most ${MAX_AI_BASE_URL_LENGTH} characters`);
  const model = typeof input.model === 'string' ? input.model.trim() || null : null;
  if (model !== null && model.length > MAX_AI_MODEL_LENGTH) problems.push(`body.model must be at most ${MAX_AI_MODEL_LENGTH} characters`);
  if (input.enabled === true && baseUrl === null) problems.push('body.baseUrl is required when enabled');
  if (input.enabled === true && model === null) problems.push('body.model is required when enabled');
  if (typeof input.apiKey === 'string' && (input.apiKey.trim().length === 0 || input.apiKey.length > MAX_AI_KEY_LENGTH)) {
    problems.push(`body.apiKey must be 1 to ${MAX_AI_KEY_LENGTH} characters, or null to remove it`);
  }
  if (problems.length > 0) throw badRequest(problems);
  if (baseUrl !== null) await assertOutboundAllowed(deps.outbound, 'body.baseUrl', baseUrl);
  const settings: AiSettings = {
    workspaceId: actor.workspaceId,
    enabled: input.enabled,
    provider: provider as AiProvider,
    baseUrl,
    model,
    apiKey: input.apiKey === undefined ? (current?.apiKey ?? null) : input.apiKey === null ? null : input.apiKey.trim(),
    updatedAt: deps.clock.now(),
  };
  await stores.aiSettings.put(settings);
  return aiSettingsView(settings);
}
