import type { Kysely } from 'kysely';
import type { Database } from '../postgres/schema.ts';
import type { DatabaseHandle } from '../postgres/database.ts';
import type { GaugeDefinition } from './metrics.ts';

/**
 * The base's gauges, read from the database at each scrape: small tables grouped, or counts
 * over the partial indexes of the queues (a settled delivery leaves `webhook_deliveries_due_idx`).
 * They describe the whole deployment, whichever process answers the scrape.
 */
export function serviceGauges(db: Kysely<Database>, database: Pick<DatabaseHandle, 'pool'>): GaugeDefinition[] {
  const gauges: GaugeDefinition[] = [
    {
      name: 'switchboard_connections',
      help: 'Connections by driver and status',
      labelNames: ['driver', 'status'],
      async read() {
        const rows = await db.selectFrom('connections').select(['kind', 'status']).select((eb) => eb.fn.countAll<string>().as('n')).groupBy(['kind', 'status']).execute();
        return rows.map((r) => ({ labels: { driver: r.kind, status: r.status }, value: Number(r.n) }));
      },
    },
    {
      name: 'switchboard_webhook_deliveries_queued',
      help: 'Webhook deliveries not yet settled (the delivery queue), by state',
      labelNames: ['state'],
      async read() {
        const rows = await db
          .selectFrom('webhook_deliveries')
          .select('state')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('next_attempt_at', 'is not', null)
          .groupBy('state')
          .execute();
        return rows.map((r) => ({ labels: { state: r.state }, value: Number(r.n) }));
      },
    },
    {
      name: 'switchboard_sends_in_progress',
      help: 'Sends in the send queue, by the state of their record (queued, claimed, in_flight, in_doubt)',
      labelNames: ['state'],
      async read() {
        // The partial queue index holds only these rows (`send_due_at` is set exactly while a
        // send is in progress): a count over the sends in progress.
        const rows = await db
          .selectFrom('messages')
          .select('send_state')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('send_due_at', 'is not', null)
          .groupBy('send_state')
          .execute();
        return rows.map((r) => ({ labels: { state: r.send_state! }, value: Number(r.n) }));
      },
    },
    {
      name: 'switchboard_webhook_events_waiting',
      help: 'Events waiting to be fanned out into webhook deliveries',
      read: async () => [{ value: await count(db, 'webhook_fanout') }],
    },
    {
      name: 'switchboard_plugin_events_waiting',
      help: "Events waiting for the enabled plugins' subscribers (the plugin event backlog)",
      read: async () => [{ value: await count(db, 'plugin_event_queue') }],
    },
  ];
  const pool = database.pool;
  // On the embedded database there is one connection and no pool to watch.
  if (pool) {
    gauges.push(
      { name: 'switchboard_db_pool_max_connections', help: "Connections the service's database pool may open", read: () => [{ value: pool.max }] },
      {
        name: 'switchboard_db_pool_in_use',
        help: "The database pool's work now: statements outside a transaction, and connections held by open transactions",
        labelNames: ['kind'],
        read: () => [
          { labels: { kind: 'statement' }, value: pool.use.statements },
          { labels: { kind: 'transaction' }, value: pool.use.transactions },
        ],
      },
      { name: 'switchboard_db_pool_waiting', help: 'Transactions waiting for a connection of the pool', read: () => [{ value: pool.use.waiting }] },
    );
  }
  return gauges;
}

async function count(db: Kysely<Database>, table: 'webhook_fanout' | 'plugin_event_queue'): Promise<number> {
  const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
