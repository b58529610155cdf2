import { expect } from 'bun:test';
import type { TestService } from './service.ts';

/** A connection of the workspace of `apikey`, created (201) and left unpaired; answers its id. */
export async function newConnection(service: TestService, apikey: string, name: string): Promise<string> {
  const created = await service.call('POST', '/v3/connections', { apikey, body: { name } });
  expect(created.status).toBe(201);
  return created.body.id;
}

/** The payloads of the connection's events of this type, as the `events` table keeps them, oldest first. */
export async function connectionEvents(service: TestService, connectionId: string, event: string): Promise<any[]> {
  const rows = await service.runtime.ctx.db
    .selectFrom('events')
    .selectAll()
    .where('connection_id', '=', connectionId)
    .where('event', '=', event)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload));
}
