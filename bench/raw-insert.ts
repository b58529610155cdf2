import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { SQL } from 'bun';
import type { ServiceProcesses } from './service-processes.ts';

/**
 * The database's own speed, measured in the benchmark's run so that its throughput figures can be
 * stated as a ratio to it (issue 24): a figure from a slower machine still means something, and a
 * target such as "≥ 0.17 × the raw insert rate" holds or fails on any machine.
 *
 * The raw insert is the cheapest durable write the service could ever make: a single-row INSERT,
 * autocommit, into a normal table (logged, default synchronous_commit: the durability of the
 * service's own tables), like a pgbench script of one insert. On Postgres, CLIENTS clients (a
 * connection each, reserved from Bun's SQL client and called as the service calls it) insert into
 * a scratch table in the service's own database for BENCH_RAW_SECONDS; the table is dropped
 * after. Bun's client rather than `pg`: beside pgbench with the same insert on this machine, a
 * loop on `pg` reached about 60–75 % of pgbench's rate, one on Bun's client about 65–90 %.
 *
 * On the embedded database the service's PGlite lives inside its process, so the same loop runs
 * on a fresh PGlite in a temporary directory in the benchmark's process, with one client: PGlite
 * serves a single connection.
 */
export interface RawInsertRate {
  perSecond: number;
  /** One line saying what was measured and how, for the benchmark's output. */
  summary: string;
  /** `(0.14 × raw insert)`, `(0.085 × raw insert)`: a throughput figure as a share of the raw insert rate. */
  ratio(perSecond: number): string;
}

/** Concurrent clients on Postgres: the load the pgbench reference used. */
const CLIENTS = 32;
const TABLE = 'bench_raw_insert';
const CREATE = `create table ${TABLE} (id bigint generated always as identity primary key, client int not null, body text not null, created_at timestamptz not null default now())`;
const INSERT = `insert into ${TABLE} (client, body) values ($1, $2)`;
const BODY = 'a raw single-row insert, about as long as a short message';

/**
 * Measures the raw insert rate of the database `service` runs on. `when` says where in the run it
 * was measured (the benchmark's load is never running at the same time), for the summary.
 */
export async function measureRawInsertRate(service: Pick<ServiceProcesses, 'databaseUrl' | 'cpuSeconds'>, when: string): Promise<RawInsertRate> {
  const seconds = Number(process.env.BENCH_RAW_SECONDS ?? 10);
  const postgresSeconds = () => service.cpuSeconds().postgres;
  const { inserts, elapsed, where, cpu } = service.databaseUrl ? await onPostgres(service.databaseUrl, seconds, postgresSeconds) : await onPglite(seconds);
  const perSecond = inserts / elapsed;
  // What one insert costs the database server (Postgres only: PGlite shares the benchmark's process).
  const postgresCpu = cpu === undefined ? '' : `; Postgres CPU ${((cpu * 1000) / inserts).toFixed(2)} ms per insert`;
  return {
    perSecond,
    summary:
      `raw insert: ${Math.round(perSecond).toLocaleString('en-US')} inserts/s (${where}; ` +
      `single-row INSERT, autocommit, ${elapsed.toFixed(1)} s, ${when}${postgresCpu})`,
    ratio: (figure) => `(${ratioText(figure / perSecond)} × raw insert)`,
  };
}

/** Two decimals, three below 0.1 (PGlite's figures are a few hundredths of its in-process rate). */
export function ratioText(ratio: number): string {
  return ratio.toFixed(ratio < 0.1 ? 3 : 2);
}

/** Inserts from `count` loops side by side until `seconds` have passed; counts every insert made. */
async function insertLoops(count: number, seconds: number, insert: (client: number) => Promise<unknown>): Promise<{ inserts: number; elapsed: number }> {
  let inserts = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: count }, async (_, client) => {
      while (performance.now() < deadline) {
        await insert(client);
        inserts += 1;
      }
    }),
  );
  // Until the last insert in flight at the deadline returned: every counted insert is inside.
  return { inserts, elapsed: (performance.now() - started) / 1000 };
}

/**
 * `postgresSeconds`: the CPU the Postgres server's processes have used so far (undefined where
 * /proc is not there), read while the clients are connected so that their backends are counted.
 */
async function onPostgres(url: string, seconds: number, postgresSeconds: () => number | undefined) {
  const sql = new SQL({ url, max: CLIENTS });
  let backends: number[] = [];
  try {
    let connections: Awaited<ReturnType<SQL['reserve']>>[];
    try {
      connections = await Promise.all(Array.from({ length: CLIENTS }, () => sql.reserve()));
    } catch (error) {
      // Most likely max_connections: the service's pools and these clients are open at once.
      throw new Error(`raw insert: opening ${CLIENTS} connections to the service's database: ${(error as Error).message}`);
    }
    await connections[0]!.unsafe(CREATE);
    backends = await Promise.all(connections.map(async (c) => Number((await c.unsafe('select pg_backend_pid() as pid'))[0].pid)));
    const insert = (i: number) => connections[i]!.unsafe(INSERT, [i, BODY]);
    // Each connection prepares its statement and warms its backend before the clock starts.
    await Promise.all(connections.map((_, i) => insert(i)));
    const cpuBefore = postgresSeconds();
    const { inserts, elapsed } = await insertLoops(CLIENTS, seconds, insert);
    const cpuAfter = postgresSeconds();
    await connections[0]!.unsafe(`drop table ${TABLE}`);
    for (const connection of connections) connection.release();
    const cpu = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
    return { inserts, elapsed, cpu, where: `postgres, the service's database, ${CLIENTS} clients with a connection each` };
  } finally {
    await sql.close();
    await exited(backends);
  }
}

/**
 * Waits (up to 5 s) until the clients' backends have exited and the postmaster has reaped them.
 * A reading of the server's CPU taken while they exit misses their time (neither a live process's
 * nor yet the postmaster's reaped children's), and the next reading has it: the benchmark's own
 * reading right after this one would charge the raw insert's 32 backends to its load.
 */
async function exited(pids: readonly number[]): Promise<void> {
  const deadline = performance.now() + 5000;
  while (pids.some((pid) => existsSync(`/proc/${pid}`)) && performance.now() < deadline) await Bun.sleep(10);
}

async function onPglite(seconds: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-raw-insert-'));
  const pglite = await PGlite.create(dataDir);
  try {
    await pglite.exec(CREATE);
    const insert = (i: number) => pglite.query(INSERT, [i, BODY]);
    await insert(0);
    const { inserts, elapsed } = await insertLoops(1, seconds, insert);
    return { inserts, elapsed, cpu: undefined, where: "pglite, a fresh one in the benchmark's process, 1 client: PGlite serves one connection" };
  } finally {
    await pglite.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
