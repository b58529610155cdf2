import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import pg from 'pg';
import { loadConfig } from '../../apps/config.ts';
import { openRuntime, type Runtime } from '../../apps/runtime.ts';
import { startService, type RunningService } from '../../apps/server/server.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import { createApiToken } from '../../core/tokens/api-tokens.ts';
import { broadcastHelpdeskEvent } from '../../plugins/helpdesk/realtime/broadcast.ts';
import { PRESENCE_COALESCE_MS } from '../../plugins/helpdesk/realtime/presence.ts';
import { postgresHub } from '../../adapters/realtime/postgres-hub.ts';
import { freshDatabase, onPostgres } from '../support/service.ts';
import { connectHelpdesk, type TestSocket } from '../support/socket.ts';
import { inviteAndAccept } from '../support/invitations.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Production shape (ARCHITECTURE "Data and scale"): a server process without workers, and a
 * worker-only process, on one Postgres database. An event the worker broadcasts reaches a socket
 * connected to the server (`@socket.io/postgres-emitter` -> NOTIFY -> `@socket.io/postgres-adapter`).
 * Only on Postgres: the embedded database is one process by design.
 */
const TTL_SECONDS = 2;
const TTL_MS = TTL_SECONDS * 1000;

describe.skipIf(!onPostgres)('a worker process reaches sockets of a server process (Postgres only; skipped on the embedded PGlite, which is one process)', () => {
  let database: { url: string; drop(): Promise<void> };
  let server: RunningService;
  /** A second server process on the same database. */
  let other: RunningService;
  let worker: Runtime;
  let owner: { userId: string; workspaceId: string; token: string };
  let socket: TestSocket;

  beforeAll(async () => {
    database = await freshDatabase(process.env.TEST_DATABASE_URL!);
    const config = () => loadConfig({ PORT: '0', DATA_DIR: 'memory://', DATABASE_URL: database.url, HELPDESK_PRESENCE_TTL_SECONDS: String(TTL_SECONDS) });
    server = await startService(config(), { worker: false });
    other = await startService(config(), { worker: false });
    // As apps/worker/main.ts does.
    worker = await openRuntime(config());
    await worker.ctx.queue.work(worker.jobs);
    owner = await server.runtime.ctx.db
      .transaction()
      .execute((trx) => bootstrapOwner(baseStores(trx), server.runtime.ctx, { email: `owner-${crypto.randomUUID().slice(0, 8)}@example.com`, workspace: 'Cluster', plan: 'PRO' }));
    socket = await connectHelpdesk(server.url, owner.token, { transports: ['websocket'] });
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    socket?.close();
    await worker?.close();
    await other?.stop();
    await server?.stop();
    await database?.drop();
  }, HOOK_TIMEOUT);

  /** A second member of the workspace with a token of their own (tokens act as their creator). */
  async function secondMember(): Promise<{ userId: string; token: string }> {
    const userId = await inviteAndAccept(server.url, owner.token, `agent-${crypto.randomUUID().slice(0, 8)}@example.com`, ['AGENT']);
    const view = await createApiToken(baseStores(server.runtime.ctx.db).tokens, server.runtime.ctx, { userId, workspaceId: owner.workspaceId, roles: ['OWNER'] }, 'agent');
    return { userId, token: view.token! };
  }

  /** The server's adapter starts listening in the background: send until one copy arrives. */
  async function deliveredFromWorker(event: { type: string; accountId: string; [k: string]: unknown }, match: (p: any) => boolean): Promise<any> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      await broadcastHelpdeskEvent(worker.ctx.realtime!, event);
      try {
        return await socket.next(event.type, match, { timeoutMs: 500 });
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
    }
  }

  test('an inbox event and a personal notification emitted by the worker reach the socket on the server', async () => {
    const inboxEvent = { type: 'helpdesk.conversation.created', accountId: owner.workspaceId, inboxId: crypto.randomUUID(), conversationId: crypto.randomUUID(), status: 'OPEN' };
    expect(await deliveredFromWorker(inboxEvent, (p) => p.conversationId === inboxEvent.conversationId)).toEqual(inboxEvent);

    const notification = { type: 'helpdesk.notification.created', accountId: owner.workspaceId, userId: owner.userId, notificationId: crypto.randomUUID(), notificationType: 'assigned' };
    await broadcastHelpdeskEvent(worker.ctx.realtime!, notification);
    expect(await socket.next('helpdesk.notification.created', (p) => p.notificationId === notification.notificationId)).toEqual(notification);
  });

  test('presence spans server processes: a connection on one is announced on the other, and a decay once, though both sweep', async () => {
    const member = await secondMember();
    const observer = await connectHelpdesk(server.url, owner.token, { transports: ['websocket'] });
    const beat = setInterval(() => observer.socket.emit('presence:online'), 400);
    try {
      const from = observer.received.length;
      const elsewhere = await connectHelpdesk(other.url, member.token, { transports: ['websocket'] });
      await observer.next('presence.update', (p) => p.users[member.userId] === 'online', { after: from, timeoutMs: 10 * TTL_MS });
      // Each process announces what it saw change (the observer's own arrival, the member's), a
      // snapshot taken when it goes: the second may repeat the first. Then it is quiet.
      await Bun.sleep(2 * PRESENCE_COALESCE_MS);
      const online = observer.received.length;
      elsewhere.close();
      await observer.next('presence.update', (p) => p.users[member.userId] === 'offline', { after: online, timeoutMs: 10 * TTL_MS });
      await Bun.sleep(TTL_MS); // several sweeps of both servers
      // One announcement: a second (by the other sweeper) would repeat the same snapshot.
      const updates = observer.received.slice(online).filter((r) => r.event === 'presence.update');
      expect(updates.map((u) => u.payload.users)).toEqual([{ [owner.userId]: 'online', [member.userId]: 'offline' }]);
    } finally {
      clearInterval(beat);
      observer.close();
    }
  }, 60_000);

  test('a packet too large for a NOTIFY travels through socket_io_attachments', async () => {
    const large = { type: 'helpdesk.message.created', accountId: owner.workspaceId, inboxId: crypto.randomUUID(), conversationId: crypto.randomUUID(), message: { content: 'x'.repeat(20_000) } };
    await broadcastHelpdeskEvent(worker.ctx.realtime!, large);
    expect(await socket.next('helpdesk.message.created', (p) => p.conversationId === large.conversationId)).toEqual(large);
  });

  test('a worker emit fails loudly once its hub is closed (a job would retry), instead of dropping the event', async () => {
    const other = await openRuntime(loadConfig({ PORT: '0', DATA_DIR: 'memory://', DATABASE_URL: database.url }));
    await other.close();
    await expect(broadcastHelpdeskEvent(other.ctx.realtime!, { type: 'helpdesk.label.created', accountId: owner.workspaceId })).rejects.toThrow('closed');
  });

  test('an emit whose query fails rejects with the database error', async () => {
    const url = new URL(database.url);
    url.pathname = `/missing_${crypto.randomUUID().slice(0, 8)}`;
    const hub = postgresHub(url.toString());
    try {
      await expect(broadcastHelpdeskEvent(hub, { type: 'helpdesk.label.created', accountId: owner.workspaceId })).rejects.toThrow('does not exist');
    } finally {
      await hub.close();
    }
  });
});

describe.skipIf(!onPostgres)('stopping a server process on Postgres', () => {
  test('a server stopped right after it started lets go of every connection (its LISTEN client included)', async () => {
    const database = await freshDatabase(process.env.TEST_DATABASE_URL!);
    const name = new URL(database.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      for (let round = 0; round < 3; round++) {
        const service = await startService(loadConfig({ PORT: '0', DATA_DIR: 'memory://', DATABASE_URL: database.url }), { worker: false });
        await service.stop();
      }
      // The adapter's LISTEN client used to arrive after the stop and stay checked out for ever.
      // A sleep: a late client is exactly what this looks for, so give it the time to arrive.
      await Bun.sleep(500);
      const { rows } = await admin.query('select count(*)::int as n from pg_stat_activity where datname = $1', [name]);
      expect(rows[0].n).toBe(0);
    } finally {
      await admin.end();
      await database.drop();
    }
  }, HOOK_TIMEOUT);
});
