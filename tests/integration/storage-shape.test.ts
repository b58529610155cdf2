import { expect, test } from 'bun:test';
import { sql } from 'kysely';
import { useTestService } from '../support/service.ts';
import { useEventWatch } from '../support/connections.ts';

/**
 * JSON columns hold JSON objects on every database client (PGlite, Bun's PostgreSQL client):
 * a client that turned them into JSON strings would still read back, but SQL over them
 * (`content->>'…'`, reports) would silently find nothing.
 */
const service = useTestService();
const eventWatch = useEventWatch(service);

test('message content, errors and event payloads are stored as JSON objects', async () => {
  const owner = await service.bootstrap({ plan: 'PRO' });
  const auth = { apikey: owner.token };
  const connection = (await service.call('POST', '/v3/connections', { ...auth, body: { name: 'json' } })).body;
  // A webhook reads the connection's events, so they are logged.
  await eventWatch.watch(owner.token, connection.id);
  await service.call('POST', `/v3/connections/${connection.id}/connect`, auth);
  await service.call('POST', `/v3/connections/${connection.id}/sandbox/messages`, { ...auth, body: { from: '+5511977776666', text: 'hello' } });
  await service.call('POST', `/v3/connections/${connection.id}/chats/messages`, { ...auth, body: { to: '+9995550000', text: 'to nowhere' } });
  for (let i = 0; i < 100; i++) {
    const failed = await service.runtime.ctx.db.selectFrom('messages').select('id').where('status', '=', 'FAILED').executeTakeFirst();
    if (failed) break;
    await Bun.sleep(100);
  }

  const messages = await sql<{ content: string; error: string | null }>`
    select jsonb_typeof(content) as content, jsonb_typeof(error) as error from messages where connection_id = ${connection.id}`.execute(service.runtime.ctx.db);
  expect(messages.rows.map((r) => r.content)).toEqual(['object', 'object']);
  expect(messages.rows.map((r) => r.error).sort()).toEqual(['object', null].sort() as string[]);

  const events = await sql<{ kind: string }>`select distinct jsonb_typeof(payload) as kind from events where connection_id = ${connection.id}`.execute(service.runtime.ctx.db);
  expect(events.rows).toEqual([{ kind: 'object' }]);
  const text = await sql<{ text: string }>`
    select payload->'data'->'message'->>'conversation' as text from events where connection_id = ${connection.id} and event = 'messages.upsert'`.execute(service.runtime.ctx.db);
  expect(text.rows).toEqual([{ text: 'hello' }]);
});
