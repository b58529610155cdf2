import { beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { useTestService } from '../support/service.ts';
import { connectedConnection, connectionInbox, conversationOfContact, injectContactMessage, messagesUntil, setInboxMembers, useHelpdeskWorkspace, withoutAutoAssignment } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * The agent inbox's list (issue 23 item 1): search over contact name, phone digits, e-mail and
 * message text; views; filters; sorts; keyset pages; open and unread counts. An Agent's search
 * never reaches an inbox they do not belong to (spec 2.14).
 */

const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'inbox line', inbox: 'Front desk', manualAssignment: true });
const { owner, agent } = hd;

/** Conversations by name: A, B, D in the Agent's inbox; C in an inbox the Agent is not in. */
const c: Record<'A' | 'B' | 'C' | 'D', any> = {} as any;
let hiddenInboxId: string;
let hiddenConnectionId: string;

const list = (query: string, apikey = owner.token) => service.call('GET', `/v3/helpdesk/conversations?${query}`, { apikey });
const ids = async (query: string, apikey = owner.token) => {
  const res = await list(query, apikey);
  expect(res.status).toBe(200);
  return (res.body.data as any[]).map((x) => x.id);
};
const names = async (query: string, apikey = owner.token) => {
  const found = await ids(query, apikey);
  return (Object.keys(c) as Array<keyof typeof c>).filter((k) => found.includes(c[k].id)).sort();
};
const write = async (connectionId: string, from: string, pushName: string, text: string) => {
  expect((await injectContactMessage(service, owner.token, connectionId, { from, text, pushName })).status).toBe(201);
  return conversationOfContact(service, owner.token, from);
};
const patch = (id: string, body: unknown) => service.call('PATCH', `/v3/helpdesk/conversations/${id}`, { apikey: owner.token, body });

beforeAll(async () => {
  hiddenConnectionId = await connectedConnection(service, owner.token, 'back office line');
  hiddenInboxId = await connectionInbox(service, owner.token, 'Back office', hiddenConnectionId);
  await withoutAutoAssignment(service, owner.token, hiddenInboxId);
  c.A = await write(hd.connectionId, '5511970000001', 'Beatriz Quintana', 'My parcel is missing');
  c.B = await write(hd.connectionId, '5511970000002', 'Carlos Mendes', 'A question about my invoice');
  c.C = await write(hiddenConnectionId, '447700900003', 'Dora Quintana', 'Secret zebra business');
  c.D = await write(hd.connectionId, '5511970000004', 'Eva Lima', 'Hello there');
  const email = await service.call('PATCH', `/v3/helpdesk/contacts/${c.B.contactId}`, { apikey: owner.token, body: { email: 'carlos.mendes@example.org' } });
  expect(email.status).toBe(200);
  // D is answered (no longer waiting); A is the Agent's, urgent, labelled; B is low priority.
  expect((await service.call('POST', `/v3/helpdesk/conversations/${c.D.id}/messages`, { apikey: owner.token, body: { content: 'Hi Eva' } })).status).toBe(201);
  expect((await patch(c.A.id, { assigneeUserId: agent.userId, priority: 'URGENT' })).status).toBe(200);
  expect((await patch(c.B.id, { priority: 'LOW' })).status).toBe(200);
  expect((await service.call('POST', `/v3/helpdesk/conversations/${c.A.id}/labels`, { apikey: owner.token, body: { labels: ['VIP', 'Billing'] } })).status).toBe(201);
  expect((await service.call('POST', `/v3/helpdesk/conversations/${c.B.id}/labels`, { apikey: owner.token, body: { labels: ['VIP'] } })).status).toBe(201);
}, HOOK_TIMEOUT);

describe('search (s)', () => {
  test('by contact name, message text (prefixes), phone digits with or without country code, e-mail', async () => {
    expect(await names('s=quintana')).toEqual(['A', 'C']);
    expect(await names('s=QUINT')).toEqual(['A', 'C']);
    expect(await names('s=parc')).toEqual(['A']);
    expect(await names('s=invoice')).toEqual(['B']);
    expect(await names(`s=${encodeURIComponent('+55 (11) 97000-0002')}`)).toEqual(['B']);
    expect(await names('s=11970000002')).toEqual(['B']);
    expect(await names('s=4477009')).toEqual(['C']);
    expect(await names(`s=${encodeURIComponent('carlos.mendes@example.org')}`)).toEqual(['B']);
    expect(await names('s=example')).toEqual(['B']);
    expect(await names('s=beatriz%20parcel')).toEqual(['A']);
    expect(await names('s=beatriz%20invoice')).toEqual([]);
    expect((await list('s=xyzzy-nonsense')).body.total).toBe(0);
    expect((await list('s=%40%40')).body.total).toBe(0);
  });

  test("an Agent's search never returns another inbox's conversation", async () => {
    expect(await names('s=quintana', agent.token)).toEqual(['A']);
    expect(await names('s=zebra', agent.token)).toEqual([]);
    expect(await names('s=zebra')).toEqual(['C']);
    expect(await names('s=447700900003', agent.token)).toEqual([]);
    expect(await names('view=all&per_page=100', agent.token)).toEqual(['A', 'B', 'D']);
  });
});

describe('views and filters', () => {
  test('view mine, unassigned, all; assigneeUserId=none is unassigned', async () => {
    expect(await names('view=mine', agent.token)).toEqual(['A']);
    expect(await names('view=mine')).toEqual([]);
    expect(await names('view=unassigned&per_page=100')).toEqual(['B', 'C', 'D']);
    expect(await names('assigneeUserId=none&per_page=100')).toEqual(['B', 'C', 'D']);
    expect(await names('assigneeUserId=null&per_page=100')).toEqual(['B', 'C', 'D']);
    expect(await names('view=all&per_page=100')).toEqual(['A', 'B', 'C', 'D']);
    expect(await names(`view=unassigned&inboxId=${hiddenInboxId}`)).toEqual(['C']);
    expect(await names(`assigneeUserId=${agent.userId}`)).toEqual(['A']);
    expectStandardError(await list('view=everything'), 400, 'Bad Request');
  });

  test('labels (all of them, case-insensitive), priority lists, status lists, date ranges', async () => {
    expect(await names('labels=vip')).toEqual(['A', 'B']);
    expect(await names('labels=VIP,billing')).toEqual(['A']);
    expect(await names('priority=URGENT')).toEqual(['A']);
    expect(await names('priority=URGENT,LOW')).toEqual(['A', 'B']);
    expect(await names('status=OPEN,PENDING&per_page=100')).toEqual(['A', 'B', 'C', 'D']);
    expect((await list('status=RESOLVED')).body.total).toBe(0);
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const past = '2000-01-01';
    expect((await list(`createdFrom=${future}`)).body.total).toBe(0);
    expect(await names(`createdFrom=${past}&createdTo=${future}&per_page=100`)).toEqual(['A', 'B', 'C', 'D']);
    expect(await names(`createdFrom=${encodeURIComponent(c.C.createdAt)}&per_page=100`)).toEqual(['C', 'D']);
    expect((await list(`lastActivityTo=${past}`)).body.total).toBe(0);
    expect((await list(`lastActivityFrom=${past}`)).body.total).toBe(4);
  });

  test('unknown or malformed values are 400 with every broken rule, never ignored', async () => {
    for (const query of ['labels=no-such-label', 'priority=SOON', 'status=CLOSED', 'createdFrom=yesterday', 'lastActivityTo=2024-13-45', 'sort=alphabetical', 'limit=0', 'limit=101', 'cursor=junk', 'page=2&limit=5']) {
      expectStandardError(await list(query), 400, 'Bad Request');
    }
    const many = await list('priority=SOON&status=CLOSED&sort=alphabetical');
    expect(many.body.message).toHaveLength(3);
  });
});

describe('sorts', () => {
  test('priority: URGENT first, then LOW, then none', async () => {
    const order = await ids('sort=priority&per_page=100');
    expect(order.slice(0, 2)).toEqual([c.A.id, c.B.id]);
  });

  test('created and last_activity: newest first', async () => {
    expect(await ids('sort=created&per_page=100')).toEqual([c.D.id, c.C.id, c.B.id, c.A.id]);
    const rows = (await list('sort=last_activity&per_page=100')).body.data as any[];
    const times = rows.map((r) => Date.parse(r.lastActivityAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(rows.map((r) => r.id)).toEqual((await list('per_page=100')).body.data.map((r: any) => r.id));
  });

  test('waiting: longest waiting first; a contact answered comes last; a new contact message starts the wait again', async () => {
    expect(await ids('sort=waiting&per_page=100')).toEqual([c.A.id, c.B.id, c.C.id, c.D.id]);
    expect((await service.call('POST', `/v3/helpdesk/conversations/${c.A.id}/messages`, { apikey: agent.token, body: { content: 'On it' } })).status).toBe(201);
    expect((await service.call('POST', `/v3/helpdesk/conversations/${c.B.id}/messages`, { apikey: agent.token, body: { content: 'note', private: true } })).status).toBe(201);
    expect(await ids('sort=waiting&per_page=100')).toEqual([c.B.id, c.C.id, c.A.id, c.D.id]);
    await injectContactMessage(service, owner.token, hd.connectionId, { from: '5511970000004', text: 'Still there?', pushName: 'Eva Lima' });
    await messagesUntil(service, owner.token, c.D.id, 3);
    expect(await ids('sort=waiting&per_page=100')).toEqual([c.B.id, c.C.id, c.D.id, c.A.id]);
  });
});

/** Every page of a sort, following nextCursor; `between` runs after each page. */
async function walk(query: string, between: (page: number) => Promise<void> = async () => {}, apikey = owner.token): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = '';
  for (let page = 1; cursor !== null; page++) {
    const res = await list(`${query}&limit=3${cursor ? `&cursor=${cursor}` : ''}`, apikey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ perPage: 3, currentPage: page });
    expect(res.body.data.length).toBeLessThanOrEqual(3);
    seen.push(...res.body.data.map((x: any) => x.id));
    cursor = res.body.nextCursor;
    await between(page);
  }
  return seen;
}

describe('keyset pages', () => {
  beforeAll(async () => {
    for (let i = 10; i < 18; i++) await write(hd.connectionId, `55119800000${i}`, `Filler ${i}`, `filler message ${i}`);
  }, HOOK_TIMEOUT);

  test('each sort: the pages cover every conversation once', async () => {
    const all = (await list('per_page=100')).body.data.map((x: any) => x.id).sort();
    expect(all).toHaveLength(12);
    for (const sort of ['last_activity', 'created', 'priority', 'waiting']) {
      const seen = await walk(`sort=${sort}`);
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual(all);
    }
  });

  test('new conversations arriving between pages neither repeat nor push out those already listed', async () => {
    const before = (await list('per_page=100')).body.data.map((x: any) => x.id).sort();
    let n = 20;
    const seen = await walk('sort=last_activity', async (page) => {
      if (page <= 2) await write(hd.connectionId, `55119800000${n++}`, `Late ${n}`, 'arrived while paging');
    });
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
  });

  test('a cursor belongs to its sort; page mode answers nextCursor too', async () => {
    const first = await list('sort=created&limit=2');
    expect(typeof first.body.nextCursor).toBe('string');
    // Keyset mode counts up to 100 matches (along the page's walk); below that, exactly, on
    // every page, for the workspace's walk and for an Agent's merge of one walk per inbox.
    expect(first.body.totalCapped).toBe(false);
    expect(first.body.total).toBe((await list('per_page=1')).body.total);
    expect((await list(`sort=created&limit=2&cursor=${first.body.nextCursor}`)).body).toMatchObject({ total: first.body.total, totalCapped: false });
    const theirs = (await list('per_page=1', agent.token)).body.total;
    expect(theirs).toBeGreaterThan(1);
    const agentFirst = await list('sort=created&limit=1', agent.token);
    expect(agentFirst.body).toMatchObject({ total: theirs, totalCapped: false });
    expect((await list(`sort=created&limit=1&cursor=${agentFirst.body.nextCursor}`, agent.token)).body).toMatchObject({ total: theirs, totalCapped: false });
    expectStandardError(await list(`sort=priority&cursor=${first.body.nextCursor}`), 400, 'Bad Request');
    const paged = await list('per_page=2&page=1');
    expect(paged.body).toMatchObject({ currentPage: 1, perPage: 2 });
    expect(typeof paged.body.nextCursor).toBe('string');
    const next = await list(`limit=2&cursor=${paged.body.nextCursor}`);
    expect(next.body.data.map((x: any) => x.id)).toEqual((await list('per_page=2&page=2')).body.data.map((x: any) => x.id));
    expect(next.body.currentPage).toBe(2);
  });
});

describe('counts', () => {
  test('open and unread per view and per inbox; an Agent counts only their inboxes', async () => {
    const counts = await service.call('GET', '/v3/helpdesk/conversations/counts', { apikey: owner.token });
    expect(counts.status).toBe(200);
    const open = (await list('status=OPEN&per_page=100')).body.total;
    expect(counts.body.views.all.open).toBe(open);
    expect(counts.body.inboxes.map((i: any) => i.inboxId)).toEqual([hd.inboxId, hiddenInboxId]);
    expect(counts.body.inboxes.find((i: any) => i.inboxId === hiddenInboxId)).toEqual({ inboxId: hiddenInboxId, open: 1, unread: 1 });
    expect(counts.body.views.all.unread).toBe(open);

    const mine = await service.call('GET', '/v3/helpdesk/conversations/counts', { apikey: agent.token });
    expect(mine.body.inboxes.map((i: any) => i.inboxId)).toEqual([hd.inboxId]);
    expect(mine.body.views.mine).toEqual({ open: 1, unread: 1 });
    expect(mine.body.views.all.open).toBe(open - 1);
    expect(mine.body.views.unassigned.open).toBe(open - 2);

    // The assignee reads A: it is no longer unread; the contact writes again: unread again.
    expect((await service.call('POST', `/v3/helpdesk/conversations/${c.A.id}/read`, { apikey: agent.token })).status).toBe(201);
    expect((await service.call('GET', '/v3/helpdesk/conversations/counts', { apikey: agent.token })).body.views.mine).toEqual({ open: 1, unread: 0 });
    await injectContactMessage(service, owner.token, hd.connectionId, { from: '5511970000001', text: 'Any news?', pushName: 'Beatriz Quintana' });
    await messagesUntil(service, owner.token, c.A.id, 3);
    expect((await service.call('GET', '/v3/helpdesk/conversations/counts', { apikey: agent.token })).body.views.mine).toEqual({ open: 1, unread: 1 });
  });
  test('the counters a trigger keeps agree with a count of the conversations after assignments, status changes and reads', async () => {
    const status = (id: string, to: string) => service.call('POST', `/v3/helpdesk/conversations/${id}/status`, { apikey: owner.token, body: { status: to } });
    expect((await patch(c.B.id, { assigneeUserId: agent.userId })).status).toBe(200);
    expect((await status(c.D.id, 'RESOLVED')).status).toBe(201);
    expect((await service.call('POST', `/v3/helpdesk/conversations/${c.B.id}/read`, { apikey: agent.token })).status).toBe(201);
    expect((await patch(c.A.id, { assigneeUserId: null })).status).toBe(200);
    expect((await status(c.D.id, 'OPEN')).status).toBe(201);
    expect((await patch(c.B.id, { assigneeUserId: null })).status).toBe(200);
    const db = service.runtime.ctx.db;
    const kept = await sql<{ inbox_id: string; holder: string; open: number; unread: number }>`
      select inbox_id, holder, open, unread from helpdesk_inbox_tallies where open <> 0 or unread <> 0 order by 1, 2`.execute(db);
    const counted = await sql<{ inbox_id: string; holder: string; open: number; unread: number }>`
      select inbox_id, helpdesk_tally_holder(assignee_user_id, assignee_agent_bot_id) as holder, count(*)::int as open,
        sum(helpdesk_tally_unread(last_incoming_at, assignee_last_seen_at))::int as unread
      from helpdesk_conversations where status = 'OPEN' group by 1, 2 order by 1, 2`.execute(db);
    expect(kept.rows.map((r) => ({ ...r, open: Number(r.open), unread: Number(r.unread) }))).toEqual(counted.rows.map((r) => ({ ...r, open: Number(r.open), unread: Number(r.unread) })));
    const counts = (await service.call('GET', '/v3/helpdesk/conversations/counts', { apikey: owner.token })).body;
    expect(counts.views.all.open).toBe((await list('status=OPEN&per_page=100')).body.total);
    expect(counts.views.unassigned.open).toBe((await list('view=unassigned&status=OPEN&per_page=100')).body.total);
    // A list whose filters the counters count by takes its total from them: it is the rows listed.
    const counterQueries = ['status=OPEN', 'view=mine&status=OPEN', 'view=unassigned&status=OPEN', 'assigneeUserId=none&status=OPEN', `inboxId=${hd.inboxId}&status=OPEN`, `inboxId=${hiddenInboxId}&status=OPEN`, `assigneeUserId=${agent.userId}&status=OPEN`, `view=mine&assigneeUserId=${agent.userId}&status=OPEN`];
    for (const apikey of [owner.token, agent.token]) {
      for (const query of counterQueries) {
        for (const mode of ['per_page=100', 'limit=100']) {
          const res = await list(`${query}&${mode}`, apikey);
          expect({ query, total: res.body.total }).toEqual({ query, total: res.body.data.length });
        }
      }
    }
    expect((await list(`view=unassigned&assigneeUserId=${agent.userId}&status=OPEN`)).body.total).toBe(0);
  });
});

describe('what a list row shows', () => {
  const row = async (id: string, apikey = owner.token) => ((await list('limit=100', apikey)).body.data as any[]).find((x) => x.id === id);

  test('the contact, the latest message that is not an activity line (cut to 200 characters), unread', async () => {
    expect((await service.call('POST', `/v3/helpdesk/conversations/${c.D.id}/messages`, { apikey: owner.token, body: { content: 'Hi Eva' } })).status).toBe(201);
    const d = await row(c.D.id);
    expect(d.contact).toEqual({ id: c.D.contactId, name: 'Eva Lima', phone: '+5511970000004', email: null });
    // D's latest is the reply "Hi Eva"; a status change (an activity line) does not replace it.
    expect(d.lastMessage).toMatchObject({ content: 'Hi Eva', direction: 'outgoing', private: false });
    expect(Number.isNaN(Date.parse(d.lastMessage.createdAt))).toBe(false);
    expect((await service.call('POST', `/v3/helpdesk/conversations/${c.D.id}/status`, { apikey: owner.token, body: { status: 'PENDING' } })).status).toBe(201);
    expect((await row(c.D.id)).lastMessage.content).toBe('Hi Eva');
    expect((await service.call('POST', `/v3/helpdesk/conversations/${c.D.id}/status`, { apikey: owner.token, body: { status: 'OPEN' } })).status).toBe(201);

    const long = `${'x'.repeat(199)}yz and more`;
    expect((await service.call('POST', `/v3/helpdesk/conversations/${c.D.id}/messages`, { apikey: owner.token, body: { content: long, private: true } })).status).toBe(201);
    expect((await row(c.D.id)).lastMessage).toMatchObject({ content: long.slice(0, 200), direction: 'outgoing', private: true });

    // Unread follows the counts: B was never read; read by the owner (unassigned), it is not.
    expect((await row(c.B.id)).unread).toBe(true);
    expect((await row(c.B.id)).contact.email).toBe('carlos.mendes@example.org');
    expect((await service.call('POST', `/v3/helpdesk/conversations/${c.B.id}/read`, { apikey: owner.token })).status).toBe(201);
    expect((await row(c.B.id)).unread).toBe(false);
    // The single GET stays the conversation alone.
    const one = await service.call('GET', `/v3/helpdesk/conversations/${c.B.id}`, { apikey: owner.token });
    expect(one.body.contact).toBeUndefined();
    expect(one.body.lastMessage).toBeUndefined();
  });

  test('contactId: only that contact\'s conversations, an Agent only in their inboxes', async () => {
    expect(await names(`contactId=${c.A.contactId}`)).toEqual(['A']);
    expect(await names(`contactId=${c.C.contactId}`)).toEqual(['C']);
    expect(await names(`contactId=${c.C.contactId}`, agent.token)).toEqual([]);
    expect(await names('contactId=not-a-uuid')).toEqual([]);
    // The total of an OPEN list narrowed to one contact is that contact's, not the inbox counters'.
    const open = await list(`contactId=${c.A.contactId}&status=OPEN`);
    expect(open.body.total).toBe(open.body.data.length);
  });

  test('keyset pages carry the row summary too, in the same order', async () => {
    const first = await list('limit=2&sort=created');
    const second = await list(`limit=2&sort=created&cursor=${first.body.nextCursor}`);
    for (const item of [...first.body.data, ...second.body.data]) expect(typeof item.contact.id).toBe('string');
    const created = [...first.body.data, ...second.body.data].map((x: any) => x.createdAt);
    expect(created).toEqual([...created].sort().reverse());
  });
});

describe('an Agent of several inboxes', () => {
  /** The conversations of `inboxes` in a sort's order, straight from the table: what every plan must answer. */
  const ORDER: Record<string, string> = {
    last_activity: 'last_activity_at desc, id desc',
    created: 'created_at desc, id desc',
    priority: 'priority_rank desc, last_activity_at desc, id desc',
    waiting: 'waiting_since asc nulls last, id asc',
  };
  async function inOrder(sort: string, inboxes: string[], status?: string): Promise<string[]> {
    const rows = await sql<{ id: string }>`select id from helpdesk_conversations where inbox_id in (${sql.join(inboxes)}) ${status ? sql`and status = ${status}` : sql``} order by ${sql.raw(ORDER[sort]!)}`.execute(service.runtime.ctx.db);
    return rows.rows.map((r) => r.id);
  }

  test("an Agent's inboxes (each walked, then merged) and one inbox list their conversations in the sort's order, by keyset and by page, whether they hold a small share of the workspace or not", async () => {
    const line = await connectedConnection(service, owner.token, 'second desk line');
    const second = await connectionInbox(service, owner.token, 'Second desk', line);
    await withoutAutoAssignment(service, owner.token, second);
    await setInboxMembers(service, owner.token, second, [agent.userId]);
    try {
      const written = [];
      for (let i = 30; i < 35; i++) written.push(await write(line, `55119800000${i}`, `Second ${i}`, `second desk ${i}`));
      expect((await patch(written[1].id, { priority: 'HIGH' })).status).toBe(200);
      expect((await service.call('POST', `/v3/helpdesk/conversations/${written[2].id}/status`, { apikey: owner.token, body: { status: 'RESOLVED' } })).status).toBe(201);
      const theirs = [hd.inboxId, second];
      const check = async () => {
        for (const sort of ['last_activity', 'created', 'priority', 'waiting']) {
          const agents = await inOrder(sort, theirs);
          expect(agents.length).toBeGreaterThan(5);
          expect(await walk(`sort=${sort}`, undefined, agent.token)).toEqual(agents);
          expect(await walk(`sort=${sort}&status=OPEN`, undefined, agent.token)).toEqual(await inOrder(sort, theirs, 'OPEN'));
          expect(await walk(`sort=${sort}&inboxId=${second}`)).toEqual(await inOrder(sort, [second]));
          expect(await walk(`sort=${sort}&inboxId=${hiddenInboxId}`, undefined, agent.token)).toEqual([]);
          const paged = [];
          for (let page = 1; page <= Math.ceil(agents.length / 2); page++) paged.push(...(await ids(`sort=${sort}&per_page=2&page=${page}`, agent.token)));
          expect(paged).toEqual(agents);
        }
      };
      await check();
      // Then the other inbox holds 20 times as many OPEN conversations: the Agent's are walked inbox by inbox.
      const db = service.runtime.ctx.db;
      const ws = owner.workspaceId;
      await sql`insert into helpdesk_contacts (id, workspace_id, name, custom_attributes, created_at, updated_at)
        select md5('walk-c' || g)::uuid, ${ws}, 'Walker ' || g, '{}', now(), now() from generate_series(1, 500) g`.execute(db);
      await sql`insert into helpdesk_conversations (id, workspace_id, display_id, inbox_id, contact_id, status, labels, custom_attributes, last_activity_at, created_at, updated_at)
        select md5('walk-v' || g)::uuid, ${ws}, 200000 + g, ${hiddenInboxId}, md5('walk-c' || g)::uuid, 'OPEN', '{}', '{}', now() - g * interval '1 second', now() - g * interval '1 second', now()
        from generate_series(1, 500) g`.execute(db);
      await check();
    } finally {
      await setInboxMembers(service, owner.token, second, []);
    }
  });
});
