/**
 * `bun run bench:helpdesk`: a large helpdesk on Postgres (issue 23). The service runs in its
 * own processes (`bun run server` and `bun run worker` on a fresh database of
 * BENCH_DATABASE_URL, required); this process fills the database (bench/helpdesk-seed.ts:
 * BENCH_CONVERSATIONS conversations, default 1,000,000, a contact per five, five messages each on
 * average, 50 inboxes, BENCH_AGENTS members, default 500) and then only generates load:
 *
 *   1. The agent inbox through the HTTP API, 20 desk members (a Manager and 19 Agents of five
 *      inboxes each, each with an API token, BENCH_CONCURRENCY): the first page of each view and
 *      sort, a label, searches, the counts and a long conversation's last 50 messages,
 *      BENCH_REQUESTS each (default 400), measured twice: at work, each member calling at their
 *      own pace (BENCH_AGENT_RATE calls a second each, default 1, scheduled as a Poisson process,
 *      an open loop), and saturated, each member calling again as soon as answered (a closed
 *      loop: the figure is then the queue on the cores, and the rate is the desk's capacity).
 *      p50/p95/p99 per operation.
 *   2. Every member connected to `/helpdesk` at once, and contacts writing in through the
 *      sandbox lines at BENCH_LIVE_RATE messages a second (default 20) for BENCH_LIVE_MESSAGES
 *      (default 600): posted → `helpdesk.message.created` on each listening socket (bench/helpdesk-live.ts).
 *
 * BENCH_KEEP=1 leaves the database behind (its URL printed) for EXPLAIN ANALYZE by hand.
 */
import { createHash } from 'node:crypto';
import { closedLoop, percentile } from './closed-loop.ts';
import { pacedLoop } from './paced-loop.ts';
import { startServiceProcesses } from './service-processes.ts';
import { COMMON_WORD, CONNECTION_INBOXES, contactPhone, INBOXES, inboxesOf, LONG_CONVERSATION_STEP, RARE_WORD, seedHelpdesk, type Scale, type SeededAgent } from './helpdesk-seed.ts';
import { measureLive } from './helpdesk-live.ts';

if (!process.env.BENCH_DATABASE_URL) throw new Error('BENCH_DATABASE_URL (a Postgres server) is required: the figures are of Postgres');
const scale: Scale = {
  conversations: Number(process.env.BENCH_CONVERSATIONS ?? 1_000_000),
  agents: Number(process.env.BENCH_AGENTS ?? 500),
  deskAgents: Number(process.env.BENCH_CONCURRENCY ?? 20),
};
const requests = Number(process.env.BENCH_REQUESTS ?? 400);
const agentRate = Number(process.env.BENCH_AGENT_RATE ?? 1);

const service = await startServiceProcesses();
try {
  const { api, url } = service;
  const { workspaceId } = service;
  const connectionIds: string[] = [];
  const inboxIds: string[] = [];
  for (let i = 0; i < INBOXES; i++) {
    if (i < CONNECTION_INBOXES) {
      const connection = await api('POST', '/v3/connections', { name: `line ${i}` });
      await api('POST', `/v3/connections/${connection.id}/connect`);
      connectionIds.push(connection.id);
      inboxIds.push((await api('POST', '/v3/helpdesk/inboxes', { name: `Line ${i}`, channelType: 'CONNECTION', connectionId: connection.id })).id);
    } else inboxIds.push((await api('POST', '/v3/helpdesk/inboxes', { name: `Inbox ${i}`, channelType: 'API' })).id);
  }

  const started = performance.now();
  const { agents, seconds } = await seedHelpdesk(service.databaseUrl!, workspaceId, inboxIds, scale);
  const total = ((performance.now() - started) / 1000).toFixed(0);
  const parts = Object.entries(seconds).map(([name, s]) => `${name} ${s.toFixed(0)} s`);
  console.log(`filled ${scale.conversations} conversations, ${Math.ceil(scale.conversations / 5)} contacts, about ${5 * scale.conversations} messages, ${agents.length} members in ${total} s (${parts.join(', ')})`);

  await measureInbox(url, agents.slice(0, scale.deskAgents), inboxIds);
  await measureLive({
    url,
    ownerToken: service.token,
    connectionIds,
    agents,
    scale,
    messages: Number(process.env.BENCH_LIVE_MESSAGES ?? 600),
    perSecond: Number(process.env.BENCH_LIVE_RATE ?? 20),
  });
} finally {
  if (process.env.BENCH_KEEP) console.log(`kept ${service.databaseUrl}`);
  await service.stop({ keepDatabase: Boolean(process.env.BENCH_KEEP) });
}

/** The agent inbox as the desk uses it: each operation `requests` times, the desk members calling side by side. */
async function measureInbox(url: string, desk: SeededAgent[], inboxIds: string[]): Promise<void> {
  const contacts = Math.ceil(scale.conversations / 5);
  const operations: Array<[string, (agent: SeededAgent, i: number) => string]> = [
    ['mine, OPEN', () => 'view=mine&status=OPEN&limit=25'],
    ['unassigned, OPEN', () => 'view=unassigned&status=OPEN&limit=25'],
    ['all, OPEN', () => 'status=OPEN&limit=25'],
    ['one inbox, OPEN', (agent, i) => `inboxId=${inboxIds[pick(inboxesOf(agent.index, scale), i)]}&status=OPEN&limit=25`],
    ['all, page mode (total)', () => 'status=OPEN&per_page=25'],
    ['all, OPEN, by created', () => 'status=OPEN&sort=created&limit=25'],
    ['all, OPEN, by priority', () => 'status=OPEN&sort=priority&limit=25'],
    ['all, OPEN, waiting longest', () => 'status=OPEN&sort=waiting&limit=25'],
    ['labels=VIP', () => 'labels=VIP&limit=25'],
    [`search: rare word (${RARE_WORD})`, () => `s=${RARE_WORD}&limit=25`],
    [`search: common word (${COMMON_WORD})`, () => `s=${COMMON_WORD}&limit=25`],
    ['search: a name (quintana)', () => 's=quintana&limit=25'],
    ['search: a phone number', (_, i) => `s=${contactPhone(1 + ((i * 7919) % contacts)).slice(1)}&limit=25`],
  ];
  console.log(`${requests} requests each, ${desk.length} members side by side (a Manager and ${desk.length - 1} Agents of five inboxes)`);
  console.log(`at work: each member ${agentRate} call/s (open loop); saturated: each calls again once answered (closed loop), with the desk's rate`);
  for (const [name, query] of operations) await measure(url, desk, name, (agent, i) => `/v3/helpdesk/conversations?${query(agent, i)}`);
  await measure(url, desk, 'counts', () => '/v3/helpdesk/conversations/counts');
  await measure(url, desk, 'last 50 messages', (agent, i) => `/v3/helpdesk/conversations/${conversationId(longConversationIn(pick(inboxesOf(agent.index, scale), i), i))}/messages?limit=50`);
}

async function measure(url: string, desk: SeededAgent[], name: string, path: (agent: SeededAgent, i: number) => string): Promise<void> {
  const call = (i: number) => {
    const agent = desk[i % desk.length]!;
    return fetch(`${url}${path(agent, i)}`, { headers: { apikey: agent.token } });
  };
  for (let i = 0; i < desk.length; i++) await (await call(i)).arrayBuffer(); // warm-up
  const failed = (response: Response) => response.status >= 400;
  const paced = await pacedLoop(requests, desk.length, agentRate, call, failed);
  const saturated = await closedLoop(requests, desk.length, call, failed);
  const p = (latencies: number[], n: number) => percentile(latencies, n, 1).padStart(7);
  console.log(
    `${name.padEnd(34)} at work p50 ${p(paced.latencies, 50)} p95 ${p(paced.latencies, 95)} p99 ${p(paced.latencies, 99)} ms` +
      ` | saturated p50 ${p(saturated.latencies, 50)} p99 ${p(saturated.latencies, 99)} ms, ${(requests / saturated.seconds).toFixed(0).padStart(4)}/s` +
      `  failures ${paced.failures + saturated.failures}`,
  );
}

/** One of `values`, changing every round of the desk. */
function pick<T>(values: T[], i: number): T {
  return values[Math.floor(i / scale.deskAgents) % values.length]!;
}

/** A seeded conversation with over 100 messages in inbox `inbox`, varying with `i`. */
function longConversationIn(inbox: number, i: number): number {
  const long = Math.floor(scale.conversations / LONG_CONVERSATION_STEP);
  for (let k = (i * 131) % long; ; k = (k + 1) % long) {
    const g = 1 + LONG_CONVERSATION_STEP * k;
    if (g % INBOXES === inbox) return g;
  }
}

/** The id the seed gives conversation `g` (`md5('v' || g)::uuid`). */
function conversationId(g: number): string {
  const hex = createHash('md5').update(`v${g}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
