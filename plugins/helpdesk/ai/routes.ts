import { t, type TSchema } from 'elysia';
import type { Actor } from '../../../core/identity/identity.ts';
import { AI_PROVIDERS, getAiSettings, MAX_AI_BASE_URL_LENGTH, MAX_AI_MODEL_LENGTH, putAiSettings, type AiSettingsView } from '../../../core/helpdesk/ai/ai-settings.ts';
import { AI_TIMEOUT_MS, summarizeConversation, suggestReply, type AiAssistStores, type ChatCompletions } from '../../../core/helpdesk/ai/ai-assist.ts';
import { authenticatedRoutes, authErrors, iso, OneOf, StandardError, Timestamp } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { chatCompletions } from './chat-completions.ts';
import { aiAssistStores, aiSettingsStores } from './store.ts';

const AiSettingsBody = t.Object({
  enabled: t.Boolean({ description: 'AI actions answer 422 "AI not configured" while false' }),
  provider: t.Optional(OneOf(AI_PROVIDERS, { description: 'The only provider kind: an OpenAI-compatible chat-completions API (default)' })),
  baseUrl: t.Optional(
    t.Nullable(t.String({ description: `API root, e.g. https://api.openai.com/v1 (the service POSTs to <baseUrl>/chat/completions); required when enabled; up to ${MAX_AI_BASE_URL_LENGTH} characters; private, loopback and internal addresses (a local Ollama) need OUTBOUND_ALLOW` })),
  ),
  model: t.Optional(t.Nullable(t.String({ description: `Model name as the provider knows it; required when enabled; up to ${MAX_AI_MODEL_LENGTH} characters` }))),
  apiKey: t.Optional(t.Nullable(t.String({ description: 'Sent as a bearer token to the provider; sealed at rest, never returned. Left out: the stored key stays; null: removed' }))),
});

const AiSettingsResponse = t.Object({
  enabled: t.Boolean(),
  provider: t.UnionEnum([...AI_PROVIDERS]),
  baseUrl: t.Nullable(t.String()),
  model: t.Nullable(t.String()),
  apiKeySet: t.Boolean({ description: 'Whether a key is stored (the key itself is never returned)' }),
  updatedAt: t.Nullable(Timestamp),
});

const Id = t.Object({ id: t.String() });
const actionErrors = { ...authErrors, 422: StandardError, 502: StandardError };
const NoBody = t.Optional(t.Object({}, { description: 'No fields', additionalProperties: true }));

/** An AI action's options: no input but the conversation, its answer, and the errors every action shares. */
const assistOptions = <A extends TSchema>(answer: A, summary: string) => ({
  params: Id,
  body: NoBody,
  response: { ...actionErrors, 201: answer },
  detail: { summary: `${summary} (PRO plan); 422 "AI not configured"; 502 when the provider fails or does not answer within ${AI_TIMEOUT_MS / 1000} s` },
});

/** The workspace's AI settings (spec 2.14 row "Helpdesk: AI configuration") and the AI actions on conversations. */
export function aiRoutes(ctx: PluginContext) {
  const ai = chatCompletions(ctx.outbound);
  /** An AI action on one conversation: 201 with what the provider wrote (nothing is sent or stored). */
  const assist =
    <R>(run: (stores: AiAssistStores, ai: ChatCompletions, actor: Actor, conversationId: string) => Promise<R>) =>
    async ({ actor, params, set }: { actor: Actor; params: { id: string }; set: { status?: number | string } }) => {
      set.status = 201;
      return run(ctx.storage.read(aiAssistStores), ai, actor, params.id);
    };

  // The AI actions keep their role check in core: an Agent outside the conversation's inbox gets
  // 404 first (and `helpdesk.work` is every role's anyway).
  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.ai', prefix: '/v3/helpdesk', tags: ['Helpdesk AI'] })
    .get('/ai-settings', async ({ actor }) => present(await getAiSettings(ctx.storage.read(aiSettingsStores), actor)), {
      response: { ...authErrors, 200: AiSettingsResponse },
      detail: { summary: 'The workspace\'s AI provider (every member reads; the key is never returned, apiKeySet says whether one is stored)' },
    })
    .put('/ai-settings', async ({ actor, body }) => present(await ctx.storage.transaction(aiSettingsStores, (s) => putAiSettings(s, ctx, actor, body))), {
      role: ['helpdesk.ai', 'write'],
      body: AiSettingsBody,
      response: { ...authErrors, 200: AiSettingsResponse },
      detail: { summary: 'Replace the AI settings (Owner, Admin; PRO plan); a PUT without apiKey keeps the stored key' },
    })
    .post(
      '/conversations/:id/ai/suggest-reply',
      assist(suggestReply),
      assistOptions(t.Object({ suggestion: t.String({ description: 'A reply the agent may edit and send; nothing is sent' }) }), "Suggest the next reply from the conversation's recent messages"),
    )
    .post(
      '/conversations/:id/ai/summarize',
      assist(summarizeConversation),
      assistOptions(t.Object({ summary: t.String({ description: 'A few sentences for a colleague taking over (private notes included)' }) }), "Summarize the conversation's recent messages"),
    );
}

function present(view: AiSettingsView) {
  return { ...view, updatedAt: iso(view.updatedAt) };
}
