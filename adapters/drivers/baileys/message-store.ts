import { sql, type Kysely } from 'kysely';
import type { WAMessage, WAMessageKey } from 'baileys';
import { decode, encode } from './auth-state.ts';
import { chatJid, hasMedia } from './message-mapping.ts';

/**
 * Raw messages a session saw or sent (table `baileys_messages`), in the JSON the library's own
 * stores use (BufferJSON), so that after a restart, on any worker:
 * - `fetchMedia` can still download and decrypt a received media item (it needs the media key),
 * - a reply can quote the original and a reaction can address it with its exact key,
 * - the library's retry requests (`getMessage`) can be answered.
 */
export class MessageStore {
  constructor(private readonly db: Kysely<any>) {}

  async save(connectionId: string, msg: WAMessage, albumId?: string): Promise<void> {
    const id = msg.key?.id;
    if (!id) return;
    const raw = encode(msg);
    await this.db
      .insertInto('baileys_messages')
      .values({
        connection_id: connectionId,
        message_id: id,
        remote_jid: chatJid(msg.key),
        from_me: msg.key.fromMe === true,
        has_media: hasMedia(msg),
        album_id: albumId ?? null,
        raw,
      })
      .onConflict((oc) => oc.columns(['connection_id', 'message_id']).doUpdateSet({ raw, has_media: sql`excluded.has_media` }))
      .execute();
  }

  async get(connectionId: string, messageId: string): Promise<WAMessage | undefined> {
    const row = await this.db
      .selectFrom('baileys_messages')
      .select('raw')
      .where('connection_id', '=', connectionId)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    return row ? decode<WAMessage>(row.raw) : undefined;
  }

  /** The exact key of a stored message (for reactions), as the network knows it. */
  async keyOf(connectionId: string, messageId: string): Promise<WAMessageKey | undefined> {
    const msg = await this.get(connectionId, messageId);
    if (!msg?.key) return undefined;
    const { remoteJid, id, fromMe, participant } = msg.key;
    return { remoteJid, id, fromMe, ...(participant && { participant }) };
  }

  /** Items of an album seen so far (the position of the next one when the network sends none). */
  async albumCount(connectionId: string, albumId: string): Promise<number> {
    const row = await this.db
      .selectFrom('baileys_messages')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('connection_id', '=', connectionId)
      .where('album_id', '=', albumId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Forgets messages stored before `before`; returns how many. */
  async prune(before: Date): Promise<number> {
    const result = await this.db.deleteFrom('baileys_messages').where('created_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows ?? 0);
  }
}
