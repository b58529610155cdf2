import pg from 'pg';
import { hashSecret, newApiTokenSecret } from '../core/tokens/secret.ts';

/**
 * The large helpdesk `bench:helpdesk` measures, written straight into the service's Postgres
 * database with set-based SQL (generate_series): through the API it would take hours.
 *
 * - Members: `agents` people. Agent 1 is a Manager (every inbox); agents 2…`deskAgents` are the
 *   desk (Agents of five inboxes each: one of the CONNECTION inboxes, four of the API inboxes),
 *   the ones the HTTP part acts as and whom conversations are assigned to; the rest are Agents of
 *   one CONNECTION inbox and one API inbox. Each has an API token.
 * - `conversations` across the inboxes, one contact per five conversations: 20 % OPEN, 5 %
 *   PENDING, 5 % SNOOZED, 70 % RESOLVED; a third unassigned, the rest assigned to a desk member
 *   of their inbox; one activity every 30 s back in time (a year at 1,000,000).
 * - Five messages per conversation on average: four each, and one conversation in 97 has 100
 *   more (the "last 50 messages" of a long conversation). The text is six words drawn from
 *   a support vocabulary, skewed so `order` is in about a third of messages; `zanzibar` is in one
 *   message in 200,000.
 *
 * Secondary indexes are dropped while the rows go in and built again after (their definitions
 * read back from the catalogue, so they are exactly the migrations'); foreign-key triggers are
 * off for the session (`session_replication_role = replica`): the rows are consistent by construction,
 * and the inbox counters (migration 0017) are filled after the conversations.
 */
export interface Scale {
  conversations: number;
  agents: number;
  deskAgents: number;
}

export interface SeededAgent {
  /** 1-based, as in `inboxesOf`. */
  index: number;
  userId: string;
  token: string;
  manager: boolean;
}

/** The 50 inboxes: the first `connectionInboxes` are CONNECTION inboxes (sandbox lines), the rest API. */
export const INBOXES = 50;
export const CONNECTION_INBOXES = 10;

/** Indexes (0-based, into the inbox list) of the inboxes agent `a` belongs to; a Manager sees every inbox. */
export function inboxesOf(a: number, scale: Scale): number[] {
  if (a === 1) return Array.from({ length: INBOXES }, (_, i) => i);
  const api = (k: number) => CONNECTION_INBOXES + (k % (INBOXES - CONNECTION_INBOXES));
  if (a <= scale.deskAgents) return [a % CONNECTION_INBOXES, api(2 * a), api(2 * a + 1), api(2 * a + 2), api(2 * a + 3)];
  return [a % CONNECTION_INBOXES, api(a)];
}

export const RARE_WORD = 'zanzibar';
export const COMMON_WORD = 'order';
const WORDS = (
  'order my the is please hello thanks parcel delivery refund late invoice payment card tracking code ' +
  'address change cancel account password login help problem question today tomorrow week store ' +
  'product size color return exchange receipt price discount coupon shipping express courier box ' +
  'damaged missing wrong item number phone email message reply waiting urgent support agent manager ' +
  'bank transfer pix boleto installment subscription plan upgrade downgrade renewal contract signature ' +
  'document photo picture video link website app update version error crash slow fast good bad great ' +
  'morning afternoon evening night monday friday weekend holiday january february march april'
).split(' ');
const FIRST_NAMES = 'Ana Beatriz Caio Daniela Eduardo Fernanda Gabriel Helena Igor Julia Lucas Mariana Nicolas Olivia Pedro Rafaela Samuel Tatiana Vitor Yasmin'.split(' ');
const LAST_NAMES = 'Silva Souza Lima Costa Pereira Oliveira Santos Rodrigues Almeida Nascimento Carvalho Gomes Martins Araujo Ribeiro Barbosa Rocha Dias Moreira Cardoso Teixeira Correia Mendes Freitas Castro Pinto Fernandes Vieira Monteiro Moura Campos Cunha Batista Lopes Ramos Reis Duarte Nunes Quintana Siqueira'.split(' ');

/** The name and phone of seeded contact `n` (1-based), as the SQL below writes them. */
export const contactName = (n: number) => `${FIRST_NAMES[n % FIRST_NAMES.length]} ${LAST_NAMES[Math.floor(n / FIRST_NAMES.length) % LAST_NAMES.length]}`;
export const contactPhone = (n: number) => `+55119${String(n).padStart(8, '0')}`;
/** Seeded conversation `g` (1-based): its id and inbox index. */
export const conversationInbox = (g: number) => g % INBOXES;
/** A conversation with a long history (over 100 messages) lies on `1 + 97 k`. */
export const LONG_CONVERSATION_STEP = 97;

export async function seedHelpdesk(databaseUrl: string, workspaceId: string, inboxIds: string[], scale: Scale): Promise<{ agents: SeededAgent[]; seconds: Record<string, number> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const seconds: Record<string, number> = {};
  const step = async (name: string, text: string, values: unknown[] = []) => {
    const t0 = performance.now();
    await client.query(text, values);
    seconds[name] = (seconds[name] ?? 0) + (performance.now() - t0) / 1000;
  };
  try {
    await client.query(`set session_replication_role = replica`);
    await client.query(`set maintenance_work_mem = '512MB'`);
    const agents = await seedMembers(client, workspaceId, inboxIds, scale);
    const tables = ['helpdesk_contacts', 'helpdesk_conversations', 'helpdesk_messages'];
    const { rows: indexes } = await client.query<{ name: string; definition: string }>(
      `select i.indexname as name, i.indexdef as definition from pg_indexes i
       where i.tablename = any($1) and i.schemaname = current_schema()
         and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
      [tables],
    );
    for (const index of indexes) await client.query(`drop index ${index.name}`);

    const n = scale.conversations;
    const contacts = Math.ceil(n / 5);
    const base = new Date();
    const activity = (g: string) => `$2::timestamptz - (${n} - ${g}) * interval '30 seconds'`;
    await step(
      'contacts',
      `insert into helpdesk_contacts (id, workspace_id, name, phone, email, custom_attributes, created_at, updated_at)
       select md5('c' || g)::uuid, $1, ($3::text[])[1 + g % ${FIRST_NAMES.length}] || ' ' || ($4::text[])[1 + (g / ${FIRST_NAMES.length}) % ${LAST_NAMES.length}],
         '+55119' || lpad(g::text, 8, '0'), 'person' || g || '@example.com', '{}', $2, $2
       from generate_series(1, ${contacts}) g`,
      [workspaceId, base, FIRST_NAMES, LAST_NAMES],
    );
    const desk = agents.filter((a) => a.index > 1 && a.index <= scale.deskAgents).map((a) => a.userId);
    await step(
      'conversations',
      `with holders as (
         select inbox_id, array_agg(user_id order by user_id) as ids from helpdesk_inbox_members where user_id = any($4::uuid[]) group by inbox_id
       ), inbox as (select id, n - 1 as k from unnest($3::uuid[]) with ordinality as u(id, n))
       insert into helpdesk_conversations (id, workspace_id, display_id, inbox_id, contact_id, status, priority, assignee_user_id,
         labels, custom_attributes, ai_agent_enabled, assignee_last_seen_at, last_activity_at, last_incoming_at, waiting_since, created_at, updated_at)
       select md5('v' || g)::uuid, $1, g, inbox.id, md5('c' || (1 + g % ${contacts}))::uuid, s.status,
         (array[null, null, null, 'LOW', 'MEDIUM', 'HIGH', 'URGENT'])[1 + g % 7],
         case when g % 3 = 1 or holders.ids is null then null else holders.ids[1 + (g / ${INBOXES}) % cardinality(holders.ids)] end,
         case when g % 11 = 0 then array['VIP'] else '{}' end, '{}', false,
         case when g % 4 = 0 then ${activity('g')} end,
         ${activity('g')}, ${activity('g')} - (g % 2) * interval '5 minutes',
         case when s.status = 'OPEN' and g % 2 = 0 then ${activity('g')} - interval '5 minutes' end,
         ${activity('g')} - interval '1 day', ${activity('g')}
       from generate_series(1, ${n}) g
       join inbox on inbox.k = g % ${INBOXES}
       left join holders on holders.inbox_id = inbox.id
       cross join lateral (select abs(hashint4(g)) % 20 as h) r
       cross join lateral (select case when r.h < 4 then 'OPEN' when r.h = 4 then 'PENDING' when r.h = 5 then 'SNOOZED' else 'RESOLVED' end as status) s`,
      [workspaceId, base, inboxIds, desk],
    );
    await step('conversations', `update helpdesk_conversations set snoozed_until = $1::timestamptz + interval '1 day' where status = 'SNOOZED'`, [base]);
    // The trigger that keeps the inbox badges is off with the foreign keys: the counters are
    // filled as migration 0018 fills them.
    await step(
      'conversations',
      `insert into helpdesk_inbox_tallies (inbox_id, holder, open, unread)
       select inbox_id, helpdesk_tally_holder(assignee_user_id, assignee_agent_bot_id), count(*), sum(helpdesk_tally_unread(last_incoming_at, assignee_last_seen_at))
       from helpdesk_conversations where status = 'OPEN' group by 1, 2`,
    );
    // So is the one that notes the inboxes each contact wrote to (migration 0020).
    await step(
      'conversations',
      `update helpdesk_contacts ct set inbox_ids = seen.inbox_ids
       from (select contact_id, array_agg(distinct inbox_id) as inbox_ids from helpdesk_conversations group by contact_id) seen
       where seen.contact_id = ct.id`,
    );
    await step('conversations', `insert into helpdesk_display_counters (workspace_id, last_display_id) values ($1, ${n}) on conflict (workspace_id) do update set last_display_id = ${n}`, [workspaceId]);
    await step('conversations', `insert into helpdesk_labels (id, workspace_id, name, name_key, created_at, updated_at) values (gen_random_uuid(), $1, 'VIP', 'vip', now(), now()) on conflict do nothing`, [workspaceId]);

    const text = `(select string_agg(($3::text[])[1 + floor(${WORDS.length} * power(random(), 3))::int], ' ') from generate_series(1, 6) w where m > 0)
      || case when m % 200000 = 0 then ' ${RARE_WORD}' else '' end`;
    await client.query(`select setseed(0.23)`);
    // Four messages each, a minute apart, ending at the conversation's last activity.
    await step(
      'messages',
      `insert into helpdesk_messages (id, conversation_id, workspace_id, direction, private, content, created_at)
       select md5('m' || m)::uuid, md5('v' || c)::uuid, $1, case when ((m - 1) / ${n}) % 2 = 0 then 'incoming' else 'outgoing' end, false, ${text},
         $2::timestamptz - (${n} - c) * interval '30 seconds' - (3 - (m - 1) / ${n}) * interval '1 minute'
       from generate_series(1, ${4 * n}) m, lateral (select 1 + (m - 1) % ${n} as c) conversation`,
      [workspaceId, base, WORDS],
    );
    // One conversation in 97 has 100 more, an hour apart, before those.
    const long = Math.floor(n / LONG_CONVERSATION_STEP);
    await step(
      'messages',
      `insert into helpdesk_messages (id, conversation_id, workspace_id, direction, private, content, created_at)
       select md5('m' || m)::uuid, md5('v' || c)::uuid, $1, case when ((m - ${4 * n} - 1) / ${long}) % 2 = 0 then 'incoming' else 'outgoing' end, false, ${text},
         $2::timestamptz - (${n} - c) * interval '30 seconds' - (4 + (m - ${4 * n} - 1) / ${long}) * interval '1 hour'
       from generate_series(${4 * n + 1}, ${4 * n + 100 * long}) m, lateral (select 1 + ${LONG_CONVERSATION_STEP} * ((m - 1) % ${long}) as c) conversation`,
      [workspaceId, base, WORDS],
    );
    await client.query(`set max_parallel_maintenance_workers = 2`);
    for (const index of indexes) await step('indexes', index.definition);
    await step('analyze', 'vacuum analyze');
    return { agents, seconds };
  } finally {
    await client.end();
  }
}

/** The members, their tokens and their inboxes. */
async function seedMembers(client: pg.Client, workspaceId: string, inboxIds: string[], scale: Scale): Promise<SeededAgent[]> {
  const random = { bytes: (length: number) => crypto.getRandomValues(new Uint8Array(length)) };
  const agents: SeededAgent[] = [];
  for (let a = 1; a <= scale.agents; a++) agents.push({ index: a, userId: crypto.randomUUID(), token: newApiTokenSecret(random), manager: a === 1 });
  const column = <T>(pick: (a: SeededAgent) => T) => agents.map(pick);
  await client.query(
    `insert into users (id, email, name, password_hash) select id, 'agent' || n || '@bench.example', 'Agent ' || n, null from unnest($1::uuid[]) with ordinality u(id, n)`,
    [column((a) => a.userId)],
  );
  await client.query(
    `insert into memberships (workspace_id, user_id, roles) select $1, id, case when manager then array['MANAGER'] else array['AGENT'] end from unnest($2::uuid[], $3::boolean[]) u(id, manager)`,
    [workspaceId, column((a) => a.userId), column((a) => a.manager)],
  );
  await client.query(
    `insert into api_tokens (id, workspace_id, user_id, name, secret_hash, token_last4)
     select gen_random_uuid(), $1, id, 'bench', hash, right(secret, 4) from unnest($2::uuid[], $3::text[], $4::text[]) u(id, hash, secret)`,
    [workspaceId, column((a) => a.userId), column((a) => hashSecret(a.token)), column((a) => a.token)],
  );
  const pairs = agents.filter((a) => !a.manager).flatMap((a) => inboxesOf(a.index, scale).map((i) => [inboxIds[i]!, a.userId] as const));
  await client.query(`insert into helpdesk_inbox_members (inbox_id, user_id, created_at) select i, u, now() from unnest($1::uuid[], $2::uuid[]) p(i, u)`, [
    pairs.map((p) => p[0]),
    pairs.map((p) => p[1]),
  ]);
  return agents;
}
