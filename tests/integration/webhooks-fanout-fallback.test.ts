import { beforeAll, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { FANOUT_QUEUE } from '../../core/webhooks/dispatch.ts';
import { jobIdFor } from '../../adapters/queue/queue.ts';
import { useTestService } from '../support/service.ts';
import { deliveriesSettled } from '../support/wait.ts';
import { useReceiver } from '../support/webhook-receiver.ts';
import { connectedWithWebhook } from '../support/connections.ts';
import { eventually } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * The delivery engine fans waiting events out in batches, one transaction each (README
 * "How delivery works"). An event that cannot be fanned out must not hold back the others of its
 * batch, nor be lost: the batch's events then go to fan-out jobs of their own, retried one by one.
 * The database itself refuses the delivery of one event here (a trigger), as a corrupt row or a
 * failing constraint would; the others are delivered, and the refused one is delivered once the
 * database takes it again.
 */
const receiver = useReceiver();
let token: string;

const service = useTestService();

beforeAll(async () => {
  ({ token } = await service.bootstrap({ plan: 'PRO' }));
  const db = service.runtime.ctx.db;
  await sql
    .raw(
      `create function refuse_poison() returns trigger language plpgsql as $$
       begin
         if new.body like '%poison pill%' then raise exception 'this delivery is refused'; end if;
         return new;
       end $$`,
    )
    .execute(db);
  await sql.raw('create trigger refuse_poison before insert on webhook_deliveries for each row execute function refuse_poison()').execute(db);
}, HOOK_TIMEOUT);

test('an event the batch cannot fan out goes to a job of its own; the others are delivered, and it is delivered once it can be', async () => {
  const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: token, body });
  const path = '/hooks/fan-out-fallback';
  const connection = await connectedWithWebhook(service, token, 'fan-out', receiver.url(path));

  // Injected together, so they wait for the same fan-out batch.
  await Promise.all(
    ['healthy one', 'poison pill', 'healthy two'].map(async (text, i) =>
      expect((await call('POST', `/v3/connections/${connection}/sandbox/messages`, { from: `551199000050${i}`, text })).status).toBe(201),
    ),
  );
  const texts = () => receiver.hits(path).map((h) => h.json.data.message.conversation as string);
  await eventually(async () => (texts().includes('healthy one') && texts().includes('healthy two') ? true : undefined), 'the healthy events delivered', 20_000);
  expect(texts()).not.toContain('poison pill');

  // The refused event waits in the fan-out job queue, not lost and not holding anything back.
  const poison = await service.runtime.ctx.db
    .selectFrom('events')
    .select('id')
    .where('connection_id', '=', connection)
    .where(sql<boolean>`payload::text like '%poison pill%'`)
    .executeTakeFirstOrThrow();
  const job = await sql<{ state: string }>`select state from pgboss.job where id = ${jobIdFor(FANOUT_QUEUE, poison.id)}`.execute(service.runtime.ctx.db);
  expect(job.rows.length).toBe(1);
  expect(await service.runtime.ctx.db.selectFrom('webhook_fanout').selectAll().execute()).toEqual([]);

  await sql.raw('drop trigger refuse_poison on webhook_deliveries').execute(service.runtime.ctx.db);
  await eventually(async () => (texts().includes('poison pill') ? true : undefined), 'the refused event delivered on a retry', 30_000);
  await deliveriesSettled(service);
  expect(texts().sort()).toEqual(['healthy one', 'healthy two', 'poison pill']);
}, 60_000);
