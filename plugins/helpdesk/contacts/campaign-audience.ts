import type { AudienceSource } from '../../kernel/context.ts';
import { badRequest } from '../../../core/shared/errors.ts';
import { helpdeskDb } from '../tables.ts';

/**
 * Campaign audience `helpdeskContacts: { labels }` (issue 8): the workspace's contacts with a
 * phone number whose conversations carry any of these labels (names, case aside), each once, in
 * the order they were first seen; variables `name` and `phone`. Offered to the campaigns plugin
 * through `Plugin.audienceSources`, so neither plugin calls the other's code.
 */
export const helpdeskContactsAudience: AudienceSource = async (base, workspaceId, spec) => {
  const labels = (spec as { labels?: unknown } | null)?.labels;
  if (!Array.isArray(labels) || labels.length === 0 || labels.length > 50 || !labels.every((l) => typeof l === 'string' && l.trim())) {
    throw badRequest(['body.audience.helpdeskContacts.labels must hold 1 to 50 label names']);
  }
  const keys = labels.map((l: string) => l.trim().toLowerCase());
  const db = helpdeskDb(base);
  // Conversations keep their labels spelt as the workspace's label (issue 6): find those spellings.
  const known = await db.selectFrom('helpdesk_labels').select('name').where('workspace_id', '=', workspaceId).where('name_key', 'in', keys).execute();
  if (known.length === 0) return [];
  const names = known.map((l) => l.name);
  const rows = await db
    .selectFrom('helpdesk_contacts as c')
    .innerJoin('helpdesk_conversations as v', 'v.contact_id', 'c.id')
    .select(['c.id', 'c.name', 'c.phone'])
    .select((eb) => eb.fn.min('v.created_at').as('first_seen'))
    .where('c.workspace_id', '=', workspaceId)
    .where('c.phone', 'is not', null)
    .where('v.labels', '&&', eb => eb.val(names) as any)
    .groupBy(['c.id', 'c.name', 'c.phone'])
    .orderBy('first_seen')
    .orderBy('c.id')
    .execute();
  return rows.map((row) => ({ phone: row.phone!, variables: { name: row.name ?? '', phone: row.phone! } }));
};
