import { baseStores, type DatabaseHandle } from '../../kernel/storage.ts';
import { helpdeskDb } from '../tables.ts';

/**
 * What opening or re-checking a `/helpdesk` session reads on the pool: the key and its member
 * (the base's token and identity stores), and the inboxes the member belongs to.
 */
export function sessionStores(base: DatabaseHandle) {
  return {
    ...baseStores(base),
    /** The inboxes of the workspace the member belongs to. */
    async memberInboxIds(workspaceId: string, userId: string): Promise<string[]> {
      const rows = await helpdeskDb(base)
        .selectFrom('helpdesk_inbox_members as m')
        .innerJoin('helpdesk_inboxes as i', 'i.id', 'm.inbox_id')
        .select('m.inbox_id')
        .where('i.workspace_id', '=', workspaceId)
        .where('m.user_id', '=', userId)
        .execute();
      return rows.map((r) => r.inbox_id);
    },
  };
}
