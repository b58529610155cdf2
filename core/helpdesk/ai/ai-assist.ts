import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { DomainError, unprocessable } from '../../shared/errors.ts';
import type { HelpdeskMessage } from '../conversations/conversation.ts';
import { getConversation, type ConversationStores } from '../conversations/conversations.ts';
import { assertHelpdeskWritable } from '../plan-gate.ts';
import { usableAiSettings, type AiSettingsStore, type UsableAiSettings } from './ai-settings.ts';

/**
 * AI actions on a conversation (issue 7 item 4): a suggested next reply and a summary, written by
 * the workspace's OpenAI-compatible provider (ai-settings.ts) from the conversation's recent
 * messages. Working a conversation: `helpdesk.work` write (Agents only in their inboxes, 404
 * elsewhere) and the PRO plan, as replying is. Nothing is stored or sent: the agent decides.
 *
 * Order of refusals: invisible conversation 404, role 403, plan 403, then 422 "AI not configured"
 * (spec 7.1), then 502 when the provider fails or does not answer within 30 s.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The provider's chat-completions endpoint (a port: core does no IO). Throws `AiProviderError`. */
export interface ChatCompletions {
  complete(request: { baseUrl: string; apiKey: string | null; model: string; messages: ChatMessage[]; timeoutMs: number }): Promise<string>;
}

export const AI_TIMEOUT_MS = 30_000;
/** How much of the conversation is sent: the latest messages, within a character budget. */
export const AI_CONTEXT_MESSAGES = 40;
export const AI_CONTEXT_CHARACTERS = 12_000;

/** The provider failed (an upstream failure, in the standard shape), with what went wrong (never the key). */
export class AiProviderError extends DomainError {
  constructor(message: string) {
    super('upstream_failed', message);
    this.name = 'AiProviderError';
  }
}

export interface AiAssistStores extends ConversationStores {
  aiSettings: AiSettingsStore;
}

const SUGGEST_PROMPT =
  'You are a customer support agent. Write the next reply to the customer in this conversation: ' +
  'helpful, friendly and brief, in the language the customer writes in. Answer with the text of the reply only.';
const SUMMARY_PROMPT =
  'You help a customer support team. Summarize this conversation for a colleague taking it over, in a few sentences: ' +
  'what the customer needs, what has been done or promised, and what is still open. Internal notes are for the team only.';

export async function suggestReply(stores: AiAssistStores, ai: ChatCompletions, actor: Actor, conversationId: string): Promise<{ suggestion: string }> {
  const { settings, transcript } = await prepare(stores, actor, conversationId, { withNotes: false });
  return { suggestion: await complete(ai, settings, SUGGEST_PROMPT, transcript) };
}

export async function summarizeConversation(stores: AiAssistStores, ai: ChatCompletions, actor: Actor, conversationId: string): Promise<{ summary: string }> {
  const { settings, transcript } = await prepare(stores, actor, conversationId, { withNotes: true });
  return { summary: await complete(ai, settings, SUMMARY_PROMPT, transcript) };
}

async function prepare(stores: AiAssistStores, actor: Actor, conversationId: string, options: { withNotes: boolean }): Promise<{ settings: UsableAiSettings; transcript: string }> {
  const conversation = await getConversation(stores, actor, conversationId);
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  const settings = await usableAiSettings(stores.aiSettings, actor.workspaceId);
  const transcript = conversationTranscript(await stores.messages.list(conversation.id, AI_CONTEXT_MESSAGES), options);
  if (transcript === '') throw unprocessable('The conversation has no messages to work from');
  return { settings, transcript };
}

/**
 * The conversation as the model reads it, oldest first: who said what. Activity lines are left
 * out; private notes only when asked (a suggested reply must not repeat them to the customer).
 * The oldest lines go first when the character budget is exceeded.
 */
export function conversationTranscript(messages: HelpdeskMessage[], options: { withNotes: boolean }): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.direction === 'activity' || m.content.trim() === '') continue;
    if (m.private && !options.withNotes) continue;
    const who = m.direction === 'incoming' ? 'Customer' : m.private ? 'Internal note' : m.senderAgentBotId ? 'Agent (bot)' : 'Agent';
    lines.push(`${who}: ${m.content.trim()}`);
  }
  let total = lines.reduce((sum, line) => sum + line.length + 1, 0);
  while (lines.length > 1 && total > AI_CONTEXT_CHARACTERS) total -= lines.shift()!.length + 1;
  return lines.join('\n').slice(-AI_CONTEXT_CHARACTERS);
}

async function complete(ai: ChatCompletions, settings: UsableAiSettings, prompt: string, transcript: string): Promise<string> {
  const text = await ai.complete({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    model: settings.model,
    messages: [
      { role: 'system', content: prompt },
      { role: 'user', content: transcript },
    ],
    timeoutMs: AI_TIMEOUT_MS,
  });
  const trimmed = text.trim();
  if (trimmed === '') throw new AiProviderError('The AI provider answered with no text');
  return trimmed;
}
