import { beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { useTestService } from '../support/service.ts';
import { setInboxMembers, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { messagesWithWord } from '../../plugins/helpdesk/conversations/word-frequency.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * The inbox search picks its plan per word (plugins/helpdesk/conversations/search.ts): hits
 * gathered through the GIN indexes for a rare word, the sort order walked for a word in many
 * messages (told by the statistics) or many contacts, and for a narrowed list (an Agent's, one
 * inbox's) a name kept to the contacts seen in those inboxes, whose conversations are gathered
 * first, then sorted, when they are few. Each plan must answer what the others would: the same
 * conversations, in the same order, on every page.
 *
 * 3,000 conversations, written with set-based SQL (RARE_WORD_HITS is 2,000): conversation g has
 * contact "Zed Plenty" unless g is a multiple of 5 (2,400 contacts, one per conversation), and
 * two messages with "gadget" unless g is a multiple of 3 (4,000 messages); conversation 7 alone
 * says "quokka". One activity a minute, g = 1 newest.
 */

const N = 3000;
const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'plans line', inbox: 'Plans', manualAssignment: true });
const ids: string[] = [];

beforeAll(async () => {
  const db = service.runtime.ctx.db;
  const ws = hd.owner.workspaceId;
  await sql`insert into helpdesk_contacts (id, workspace_id, name, phone, email, custom_attributes, created_at, updated_at)
    select md5('plans-c' || g)::uuid, ${ws}, case when g % 5 <> 0 then 'Zed Plenty' else 'Ann Other ' || g end, null, null, '{}', now(), now()
    from generate_series(1, ${N}) g`.execute(db);
  await sql`insert into helpdesk_conversations (id, workspace_id, display_id, inbox_id, contact_id, status, labels, custom_attributes, last_activity_at, created_at, updated_at)
    select md5('plans-v' || g)::uuid, ${ws}, 100000 + g, ${hd.inboxId}, md5('plans-c' || g)::uuid, 'OPEN', '{}', '{}',
      now() - g * interval '1 minute', now() - g * interval '1 minute', now()
    from generate_series(1, ${N}) g`.execute(db);
  await sql`insert into helpdesk_messages (id, conversation_id, workspace_id, direction, private, content, created_at)
    select md5('plans-m' || g)::uuid, md5('plans-v' || g)::uuid, ${ws}, 'incoming', false,
      case when g = 7 then 'a quokka and a gadget' when g % 3 = 0 then 'nothing to see' else 'my gadget broke' end, now() - g * interval '1 minute'
    from generate_series(1, ${N}) g`.execute(db);
  await sql`insert into helpdesk_messages (id, conversation_id, workspace_id, direction, private, content, created_at)
    select md5('plans-r' || g)::uuid, md5('plans-v' || g)::uuid, ${ws}, 'outgoing', false, 'which gadget?', now() - g * interval '1 minute' - interval '10 seconds'
    from generate_series(1, ${N}) g where g % 3 <> 0`.execute(db);
  await sql`analyze helpdesk_messages`.execute(db);
  const rows = await sql<{ id: string }>`select md5('plans-v' || g)::uuid as id from generate_series(1, ${N}) g order by g`.execute(db);
  ids.push(...rows.rows.map((r) => r.id));
}, HOOK_TIMEOUT);

/** Every conversation the search lists, following its keyset pages. */
async function everyPage(s: string, apikey = hd.owner.token, filters = ''): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await service.call('GET', `/v3/helpdesk/conversations?s=${encodeURIComponent(s)}&limit=100${filters}${cursor ? `&cursor=${cursor}` : ''}`, { apikey });
    expect(res.status).toBe(200);
    found.push(...(res.body.data as any[]).map((c) => c.id));
    cursor = res.body.nextCursor;
  } while (cursor);
  return found;
}

const where = (keep: (g: number) => boolean) => ids.filter((_, i) => keep(i + 1));

describe('search plans', () => {
  test('a word in many messages (from the statistics) walks the sort order and finds exactly its conversations, newest first', async () => {
    expect(await messagesWithWord(service.runtime.ctx.db, 'gadget')).toBeGreaterThan(2000);
    expect(await everyPage('gadget')).toEqual(where((g) => g % 3 !== 0));
    expect(await everyPage('gadg')).toEqual(where((g) => g % 3 !== 0));
  });

  test('a name of many contacts, alone and with a word of many messages', async () => {
    expect(await everyPage('plenty')).toEqual(where((g) => g % 5 !== 0));
    expect(await everyPage('plenty gadget')).toEqual(where((g) => g % 5 !== 0 && g % 3 !== 0));
  });

  test('a rare word with a common one: only the rare word’s conversations', async () => {
    expect(await everyPage('quokka')).toEqual([ids[6]!]);
    expect(await everyPage('gadget quokka')).toEqual([ids[6]!]);
    expect(await everyPage('plenty quokka')).toEqual([ids[6]!]);
    expect(await everyPage('other quokka')).toEqual([]);
    expect(await everyPage('ann quokka')).toEqual([]);
  });

  test('an Agent, or a list of one inbox, keeps a name to the contacts seen in its inboxes: the same rows in the same order as the workspace’s walk', async () => {
    const searches = ['plen', 'gadget plenty', 'plenty quokka', 'other', 'ann quokka', 'nobody'];
    for (const s of searches) {
      const walked = await everyPage(s);
      expect(await everyPage(s, hd.agent.token)).toEqual(walked);
      expect(await everyPage(s, hd.owner.token, `&inboxId=${hd.inboxId}`)).toEqual(walked);
    }
    expect(await everyPage('other', hd.agent.token)).toEqual(where((g) => g % 5 === 0));
    for (const sort of ['created', 'waiting']) expect(await everyPage('plenty', hd.agent.token, `&sort=${sort}`)).toEqual(await everyPage('plenty', hd.owner.token, `&sort=${sort}`));
  });

  test('an Agent whose inboxes none of a name’s contacts wrote to finds nothing; a contact seen there later, or merged into one, is found', async () => {
    const db = service.runtime.ctx.db;
    const ws = hd.owner.workspaceId;
    const other = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: hd.owner.token, body: { name: 'Elsewhere', channelType: 'API' } });
    expect(other.status).toBe(201);
    const elsewhere: string = other.body.id;
    const agent = await memberWithToken(service, hd.owner, 'AGENT');
    await setInboxMembers(service, hd.owner.token, elsewhere, [agent.userId]);
    const conversationIn = async (key: string, contactId: string) => {
      await sql`insert into helpdesk_conversations (id, workspace_id, display_id, inbox_id, contact_id, status, labels, custom_attributes, last_activity_at, created_at, updated_at)
        values (md5(${key})::uuid, ${ws}, 200000 + ${key.length}, ${elsewhere}, ${contactId}::uuid, 'OPEN', '{}', '{}', now() + interval '1 hour', now(), now())`.execute(db);
      return (await sql<{ id: string }>`select md5(${key})::uuid as id`.execute(db)).rows[0]!.id;
    };
    const solo = (await service.call('POST', '/v3/helpdesk/contacts', { apikey: hd.owner.token, body: { name: 'Quinn Solo', phone: '+5511955501234' } })).body;
    const solos = await conversationIn('elsewhere-solo', solo.id);
    // 2,400 contacts are called Plenty, none of whom wrote to Elsewhere.
    expect(await everyPage('plenty', agent.token)).toEqual([]);
    expect(await everyPage('solo', agent.token)).toEqual([solos]);
    expect(await everyPage('plenty', hd.owner.token, `&inboxId=${elsewhere}`)).toEqual([]);
    // A Plenty (conversation 1's contact) writes to Elsewhere: seen there from then on.
    const plentys = await conversationIn('elsewhere-plenty-1', (await sql<{ id: string }>`select md5('plans-c1')::uuid as id`.execute(db)).rows[0]!.id);
    expect(await everyPage('plenty', agent.token)).toEqual([plentys]);
    // Quinn is merged into another Plenty (conversation 2's): their conversation moves, and is found by the name.
    const kept = (await sql<{ id: string }>`select md5('plans-c2')::uuid as id`.execute(db)).rows[0]!.id;
    expect((await service.call('POST', `/v3/helpdesk/contacts/${kept}/merge`, { apikey: hd.owner.token, body: { mergeContactId: solo.id } })).status).toBe(201);
    expect((await everyPage('plenty', agent.token)).sort()).toEqual([plentys, solos].sort());
    expect(await everyPage('plenty', agent.token)).toEqual(await everyPage('plenty', hd.owner.token, `&inboxId=${elsewhere}`));
  });

  test('the capped count of a search stops at 100 whichever plan', async () => {
    for (const s of ['gadget', 'plenty', 'plenty gadget']) {
      for (const [apikey, filters] of [[hd.owner.token, ''], [hd.agent.token, ''], [hd.owner.token, `&inboxId=${hd.inboxId}`]]) {
        const res = await service.call('GET', `/v3/helpdesk/conversations?s=${s}&limit=25${filters}`, { apikey });
        expect(res.body).toMatchObject({ total: 100, totalCapped: true });
      }
    }
    const other = await service.call('GET', '/v3/helpdesk/conversations?s=other&limit=25', { apikey: hd.agent.token });
    expect(other.body).toMatchObject({ total: 100, totalCapped: true });
    const exact = await service.call('GET', '/v3/helpdesk/conversations?s=plenty%20quokka&limit=25', { apikey: hd.agent.token });
    expect(exact.body).toMatchObject({ total: 1, totalCapped: false });
  });
});
