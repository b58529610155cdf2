import type { Generated, Kysely, Selectable } from 'kysely';
import { camelCased, type Database } from '../../kernel/storage.ts';
import type { Availability, Presence } from '../../../core/helpdesk/assignment/presence.ts';

/** migrations/0004_presence.ts */
export interface HelpdeskPresenceTable {
  workspace_id: string;
  user_id: string;
  availability: Generated<Availability>;
  last_seen_at: Date | null;
  /** The status last sent to the workspace in `presence.update`. */
  announced: Generated<Availability>;
}

/** A member's presence with the status last announced for them. */
export interface PresenceRow extends Presence {
  workspaceId: string;
  userId: string;
  announced: Availability;
}

export interface PresenceStore {
  /** Records a connection or heartbeat (contact times only move forward). */
  touch(workspaceId: string, userId: string, at: Date): Promise<PresenceRow>;
  /** Sets the member's chosen availability. */
  choose(workspaceId: string, userId: string, availability: Availability): Promise<PresenceRow>;
  /** The workspace's members and the presence of those who have one. */
  workspace(workspaceId: string): Promise<{ memberIds: string[]; presences: Map<string, PresenceRow> }>;
  /** Every member, of any workspace, announced online or busy: those who may have decayed. */
  announcedLive(): Promise<PresenceRow[]>;
  /**
   * Moves `announced` from `row.announced` to `to`, only if the row is still as read (same
   * announcement, availability and contact time). True when this caller made the move: with
   * several processes racing, exactly one announces each change.
   */
  announce(row: PresenceRow, to: Availability): Promise<boolean>;
}

type PresenceDatabase = Database & { helpdesk_presence: HelpdeskPresenceTable };

const toRow = (r: Selectable<HelpdeskPresenceTable>): PresenceRow => camelCased(r);

export function presenceStore(base: Kysely<Database>): PresenceStore {
  const db = base as unknown as Kysely<PresenceDatabase>;
  return {
    async touch(workspaceId, userId, at) {
      const row = await db
        .insertInto('helpdesk_presence')
        .values({ workspace_id: workspaceId, user_id: userId, last_seen_at: at })
        .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doUpdateSet((eb) => ({ last_seen_at: eb.fn('greatest', ['helpdesk_presence.last_seen_at', 'excluded.last_seen_at']) })))
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRow(row);
    },
    async choose(workspaceId, userId, availability) {
      const row = await db
        .insertInto('helpdesk_presence')
        .values({ workspace_id: workspaceId, user_id: userId, availability })
        .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doUpdateSet({ availability }))
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRow(row);
    },
    async workspace(workspaceId) {
      const members = await db.selectFrom('memberships').select('user_id').where('workspace_id', '=', workspaceId).execute();
      const rows = await db.selectFrom('helpdesk_presence').selectAll().where('workspace_id', '=', workspaceId).execute();
      return { memberIds: members.map((m) => m.user_id), presences: new Map(rows.map((r) => [r.user_id, toRow(r)])) };
    },
    async announcedLive() {
      const rows = await db.selectFrom('helpdesk_presence').selectAll().where('announced', '<>', 'offline').execute();
      return rows.map(toRow);
    },
    async announce(row, to) {
      const moved = await db
        .updateTable('helpdesk_presence')
        .set({ announced: to })
        .where('workspace_id', '=', row.workspaceId)
        .where('user_id', '=', row.userId)
        .where('announced', '=', row.announced)
        .where('availability', '=', row.availability)
        .where('last_seen_at', row.lastSeenAt === null ? 'is' : '=', row.lastSeenAt)
        .returning('user_id')
        .executeTakeFirst();
      return moved !== undefined;
    },
  };
}
