/**
 * `bun run bench:helpdesk-list`: the agent inbox's list on a large helpdesk (issue 23 item 1).
 * Fills a fresh Postgres database (BENCH_DATABASE_URL, required: PGlite is not the target of
 * this figure) with BENCH_CONVERSATIONS conversations (default 200,000) across 50 inboxes, a
 * contact per 5 conversations and 5 messages each, then prints p50/p99 of the first page of each
 * view and sort, a search and the counts at BENCH_CONCURRENCY (20) agents, and the plan of a few.
 * The rows are written with set-based SQL (generate_series): going through the API would take hours.
 */
import { sql } from 'kysely';
import { loadConfig } from '../apps/config.ts';
import { startService } from '../apps/server/server.ts';
import { bootstrapOwner } from '../core/identity/bootstrap.ts';
import { baseStores } from '../adapters/postgres/stores.ts';
import { freshDatabase } from '../tests/support/service.ts';
import { closedLoop, percentile } from './closed-loop.ts';

const databaseUrl = process.env.BENCH_DATABASE_URL;
if (!databaseUrl) throw new Error('BENCH_DATABASE_URL (a Postgres server) is required');
const conversations = Number(process.env.BENCH_CONVERSATIONS ?? 200_000);
const requests = Number(process.env.BENCH_REQUESTS ?? 400);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 20);
const database = await freshDatabase(databaseUrl);
const service = await startService(loadConfig({ PORT: '0', DATA_DIR: 'memory://', DATABASE_URL: database.url }), { worker: false });
const db = service.runtime.ctx.db;
const owner = await db.transaction().execute((trx) => bootstrapOwner(baseStores(trx), service.runtime.ctx, { email: 'bench@example.com', workspace: 'Bench', plan: 'PRO' }));
const inboxIds: string[] = [];
for (let i = 0; i < 50; i++) {
  const res = await fetch(`${service.url}/v3/helpdesk/inboxes`, {
    method: 'POST',
    headers: { apikey: owner.token, 'x-account-id': owner.workspaceId, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `Inbox ${i}`, channelType: 'API' }),
  });
  inboxIds.push(((await res.json()) as { id: string }).id);
}

const started = performance.now();
const ws = owner.workspaceId;
const contacts = Math.ceil(conversations / 5);
await sql`insert into helpdesk_contacts (id, workspace_id, name, phone, email, custom_attributes, created_at, updated_at)
  select md5('c' || g)::uuid, ${ws}, 'Contact ' || g || ' ' || (array['Silva','Souza','Lima','Costa','Quintana'])[1 + g % 5],
    '+55119' || lpad(g::text, 8, '0'), 'person' || g || '@example.com', '{}', now(), now()
  from generate_series(1, ${contacts}) g`.execute(db);
await sql`insert into helpdesk_conversations (id, workspace_id, display_id, inbox_id, contact_id, status, priority, assignee_user_id,
    labels, custom_attributes, last_activity_at, last_incoming_at, waiting_since, created_at, updated_at)
  select md5('v' || g)::uuid, ${ws}, g, (${sql.val(inboxIds)}::uuid[])[1 + g % 50], md5('c' || (1 + g % ${contacts}))::uuid,
    (array['OPEN','OPEN','PENDING','RESOLVED','RESOLVED','SNOOZED'])[1 + g % 6],
    (array[null,null,'LOW','MEDIUM','HIGH','URGENT'])[1 + g % 6],
    case when g % 10 = 0 then ${owner.userId}::uuid end,
    case when g % 7 = 0 then array['VIP'] else '{}' end, '{}',
    now() - (g % 100000) * interval '1 minute', now() - (g % 100000) * interval '1 minute',
    case when g % 3 = 0 then now() - (g % 100000) * interval '1 minute' end,
    now() - (g % 100000) * interval '2 minute', now()
  from generate_series(1, ${conversations}) g`.execute(db);
await sql`insert into helpdesk_messages (id, conversation_id, workspace_id, direction, private, content, created_at)
  select md5('m' || g)::uuid, md5('v' || (1 + g % ${conversations}))::uuid, ${ws}, (array['incoming','outgoing'])[1 + g % 2], false,
    (array['hello','my order','is late','refund please','thank you','the invoice','parcel lost','tracking code'])[1 + g % 8] || ' ' || g,
    now() - (g % 100000) * interval '1 minute'
  from generate_series(1, ${conversations * 5}) g`.execute(db);
await sql`insert into helpdesk_labels (id, workspace_id, name, name_key, created_at, updated_at) values (gen_random_uuid(), ${ws}, 'VIP', 'vip', now(), now())`.execute(db);
await sql`analyze`.execute(db);
console.log(`filled ${conversations} conversations, ${contacts} contacts, ${conversations * 5} messages in ${((performance.now() - started) / 1000).toFixed(0)} s`);

const headers = { apikey: owner.token, 'x-account-id': ws };
const cases: Array<[string, string]> = [
  ['all, last_activity (keyset)', 'limit=25'],
  ['all, page mode', 'per_page=25'],
  ['OPEN, created', 'status=OPEN&sort=created&limit=25'],
  ['OPEN, priority', 'status=OPEN&sort=priority&limit=25'],
  ['OPEN, waiting', 'status=OPEN&sort=waiting&limit=25'],
  ['mine, OPEN', 'view=mine&status=OPEN&limit=25'],
  ['unassigned, OPEN', 'view=unassigned&status=OPEN&limit=25'],
  ['one inbox, OPEN', `inboxId=${inboxIds[7]}&status=OPEN&limit=25`],
  ['labels=VIP', 'labels=VIP&limit=25'],
  ['search: a name', 's=quintana&limit=25'],
  ['search: phone digits', 's=5511900001234&limit=25'],
  ['search: message word', 's=refund&limit=25'],
];
console.log(`${requests} requests each, concurrency ${concurrency}`);
for (const [name, query] of cases) await measure(name, `/v3/helpdesk/conversations?${query}`);
await measure('counts', '/v3/helpdesk/conversations/counts');
await service.stop();
// BENCH_KEEP=1 keeps the database for EXPLAIN ANALYZE by hand.
if (process.env.BENCH_KEEP) console.log(`kept ${database.url}`);
else await database.drop();

async function measure(name: string, path: string) {
  const call = () => fetch(`${service.url}${path}`, { headers });
  for (let i = 0; i < 10; i++) await (await call()).arrayBuffer(); // warm-up
  const { latencies, failures } = await closedLoop(requests, concurrency, call, (response) => response.status >= 400);
  console.log(`${name.padEnd(30)} p50 ${percentile(latencies, 50).padStart(8)} ms  p99 ${percentile(latencies, 99).padStart(8)} ms  failures ${failures}`);
}
