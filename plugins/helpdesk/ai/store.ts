import type { Kysely } from 'kysely';
import { camelCased, putRow, snakeCased, type Database } from '../../kernel/storage.ts';
import type { SecretBox } from '../../kernel/security.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { AiProvider, AiSettingsStore } from '../../../core/helpdesk/ai/ai-settings.ts';
import type { AiAssistStores } from '../../../core/helpdesk/ai/ai-assist.ts';
import { conversationStores } from '../conversations/store.ts';
import { workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { helpdeskDb } from '../tables.ts';

/** The ports of the AI settings use cases: the settings and the workspace's plan. */
export function aiSettingsStores(db: Kysely<Database>, ctx: PluginContext) {
  return { aiSettings: aiSettingsStore(db, ctx.box), plans: workspacePlans(db) };
}

/** The ports of the AI actions: the conversation and its messages, and the workspace's settings. */
export function aiAssistStores(db: Kysely<Database>, ctx: PluginContext): AiAssistStores {
  return { ...conversationStores(db, ctx), aiSettings: aiSettingsStore(db, ctx.box) };
}

/** The workspace's AI settings; the API key sealed at rest (the provider needs it back), never logged. */
export function aiSettingsStore(base: Kysely<Database>, box: SecretBox): AiSettingsStore {
  const db = helpdeskDb(base);
  return {
    async get(workspaceId) {
      const row = await db.selectFrom('helpdesk_ai_settings').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
      return row && { ...camelCased(row), provider: row.provider as AiProvider, apiKey: row.api_key === null ? null : box.open(row.api_key) };
    },
    async put(s) {
      await putRow(db, 'helpdesk_ai_settings', ['workspace_id'], { ...snakeCased(s), api_key: s.apiKey === null ? null : box.seal(s.apiKey) });
    },
  };
}
