import { expect } from 'bun:test';
import type { Kysely } from 'kysely';
import type { Database } from '../../adapters/postgres/schema.ts';
import { CONNECTION_EVENTS } from '../../core/webhooks/webhook.ts';
import type { TestService } from './service.ts';
import { useReceiver } from './webhook-receiver.ts';

/** A connection of the workspace of `apikey`, created (201) and left unpaired; answers its id. */
export async function newConnection(service: TestService, apikey: string, name: string): Promise<string> {
  const created = await service.call('POST', '/v3/connections', { apikey, body: { name } });
  expect(created.status).toBe(201);
  return created.body.id;
}

/** A sandbox connection of the workspace of `apikey`, created (201) and connected (CONNECTED); answers its id. */
export async function connectedConnection(service: TestService, apikey: string, name: string): Promise<string> {
  const id = await newConnection(service, apikey, name);
  const connected = await service.call('POST', `/v3/connections/${id}/connect`, { apikey });
  expect(connected.body.status).toBe('CONNECTED');
  return id;
}

/** A connected sandbox connection whose messages received a webhook posts to `url` (201); answers the connection's id. */
export async function connectedWithWebhook(service: TestService, apikey: string, name: string, url: string): Promise<string> {
  const id = await connectedConnection(service, apikey, name);
  const webhook = await service.call('POST', '/v3/webhooks', { apikey, body: { url, events: ['messages.upsert'], connections: [id] } });
  expect(webhook.status).toBe(201);
  return id;
}

/**
 * For a test file: `watch` has a webhook of the workspace of `apikey` subscribe to a connection's
 * events (all that are dispatched, unless named), posting to a real receiver that answers 200.
 * The service logs a connection's event only where something reads it, so a test that reads the
 * `events` table first has the connection's events read. `watch` answers the hook's path.
 */
export function useEventWatch(service: TestService) {
  const receiver = useReceiver();
  return {
    receiver,
    async watch(apikey: string, connectionId: string, events: readonly string[] = DISPATCHED_EVENTS): Promise<string> {
      const path = `/watch/${connectionId}/${crypto.randomUUID()}`;
      const created = await service.call('POST', '/v3/webhooks', { apikey, body: { url: receiver.url(path), events, connections: [connectionId], hmacEnabled: true } });
      if (created.status !== 201) throw new Error(`watch: ${created.status} ${JSON.stringify(created.body)}`);
      return path;
    },
  };
}

/**
 * A webhook of the workspace subscribed to these events (every dispatched one by default) on
 * these connections, written straight to the database (for tests on a context with no HTTP app):
 * those events are then logged. Nothing delivers to it unless a delivery engine runs.
 */
export async function watchedByWebhook(db: Kysely<Database>, workspaceId: string, connections: readonly string[], events: readonly string[] = DISPATCHED_EVENTS): Promise<void> {
  const now = new Date();
  await db
    .insertInto('webhooks')
    .values({ id: crypto.randomUUID(), workspace_id: workspaceId, url: 'http://127.0.0.1:9/watch', events: [...events], connections: [...connections], hmac_enabled: false, secret: 'unused', message_group_delay: null, enable_simulate_typing: false, created_at: now, updated_at: now })
    .execute();
}

/** Every event a webhook is sent (connection.update is accepted as a subscription, never sent: spec 6.1). */
const DISPATCHED_EVENTS = CONNECTION_EVENTS.filter((e) => e !== 'connection.update');

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
