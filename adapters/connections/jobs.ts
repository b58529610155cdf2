import { notFound } from '../../core/shared/errors.ts';
import { DriverError, MEDIA_GONE } from '../../core/connections/driver.ts';
import { mediaFetchFailure } from '../../core/media/media-fetch.ts';
import { SESSION_QUEUE, type SessionCommand } from '../../core/connections/connections.ts';
import { driverView } from '../../core/messaging/deliver.ts';
import { MEDIA_FETCH_QUEUE } from '../../core/messaging/receive.ts';
import type { AppContext } from '../http/context.ts';
import type { JobDefinition } from '../queue/queue.ts';
import { driverEventsFor } from './driver-events.ts';
import { poolMessagingStores } from './stores.ts';
import { errorField } from '../logging/logger.ts';

/** The base service's jobs: session commands and media fetching (sends have their engine: send-engine.ts). */
export function messagingJobs(ctx: AppContext): JobDefinition[] {
  return [
    {
      queue: SESSION_QUEUE,
      retryLimit: 3,
      retryDelay: 5,
      retryBackoff: true,
      expireInSeconds: 300,
      concurrency: 4,
      handle: (command: SessionCommand) => runSessionCommand(ctx, command),
    },
    {
      queue: MEDIA_FETCH_QUEUE,
      retryLimit: 5,
      retryDelay: 10,
      retryBackoff: true,
      expireInSeconds: 300,
      concurrency: 4,
      handle: async (data: { mediaId: string }) => {
        // Media the network no longer has will not come back: no retries for it.
        await fetchReceivedMedia(ctx, data.mediaId).catch((error) => {
          if (!(error instanceof DriverError && error.code === MEDIA_GONE)) throw error;
        });
      },
    },
  ];
}

/** Starts, stops or ends a connection's session on its driver. */
export async function runSessionCommand(ctx: AppContext, command: SessionCommand): Promise<void> {
  const stores = poolMessagingStores(ctx);
  const connection = await stores.connections.find(command.connectionId);
  if (command.action === 'forget') {
    const driver = command.driver ? ctx.drivers.get(command.driver) : undefined;
    await driver?.disconnect({ id: command.connectionId, workspaceId: '', credentials: {}, phoneNumber: null }, { logout: true });
    return;
  }
  if (!connection) return;
  const driver = ctx.drivers.get(connection.driver)!;
  switch (command.action) {
    case 'connect':
      // A late job for a connection the user has since disconnected does nothing.
      if (connection.status === 'CONNECTING' || connection.status === 'QR_PENDING' || connection.status === 'CONNECTED') {
        await driver.connect(driverView(connection), driverEventsFor(ctx, connection.id), { pairingPhoneNumber: command.pairingPhoneNumber });
      }
      return;
    case 'restart':
      // An imported pairing: a session still running on the old one (waiting for a QR scan) is
      // closed first, so the new session opens from the imported credentials.
      if (connection.status === 'CONNECTING' || connection.status === 'QR_PENDING' || connection.status === 'CONNECTED') {
        await driver.disconnect(driverView(connection), { logout: false });
        await driver.connect(driverView(connection), driverEventsFor(ctx, connection.id));
      }
      return;
    case 'disconnect':
    case 'logout':
      await driver.disconnect(driverView(connection), { logout: command.action === 'logout' });
      return;
  }
}

/**
 * Sessions that should be live are resumed when a worker starts, and then checked every
 * `everyMs`: a session whose worker died (its lease lapsed) is taken over here. Drivers without
 * sessions of their own (official APIs) are only resumed at start.
 */
export async function superviseSessions(ctx: AppContext, everyMs = 15_000): Promise<() => void> {
  await resumeSessions(ctx, () => true);
  const timer = setInterval(() => {
    resumeSessions(ctx, (driver) => ctx.drivers.get(driver)?.capabilities.pairing === 'qr').catch((error: Error) =>
      ctx.log.error({ loop: 'sessions', error: errorField(error) }, 'session supervision failed'),
    );
  }, everyMs);
  return () => clearInterval(timer);
}

async function resumeSessions(ctx: AppContext, which: (driver: string) => boolean): Promise<void> {
  const stores = poolMessagingStores(ctx);
  for (const connection of await stores.connections.wantingSession()) {
    if (!which(connection.driver)) continue;
    await runSessionCommand(ctx, { connectionId: connection.id, action: 'connect' }).catch((error: Error) =>
      ctx.log.error({ connectionId: connection.id, error: errorField(error) }, 'could not resume the session'),
    );
  }
}

/**
 * The bytes of a media item and what they are, for a download: held here, or fetched from the
 * network once (received media not fetched yet). 404 when there is no such media or the network
 * no longer has it; 502 when the network failed to serve it.
 */
export async function mediaDownload(ctx: AppContext, mediaId: string): Promise<Response> {
  const stores = poolMessagingStores(ctx);
  const item = await stores.media.get(mediaId);
  if (!item) throw notFound('Media not found');
  const bytes = (await stores.media.bytes(item.id)) ?? (await fetchReceivedMedia(ctx, item.id).catch(asDownloadError));
  if (!bytes) throw notFound('The media is no longer available from the network');
  const fresh = (await stores.media.get(item.id))!;
  return new Response(bytes as Uint8Array<ArrayBuffer>, {
    headers: {
      'content-type': fresh.mimetype,
      'content-length': String(bytes.length),
      'cache-control': 'private, max-age=3600',
      ...(fresh.fileName && { 'content-disposition': `attachment; filename="${fresh.fileName.replace(/["\\\r\n]/g, '_')}"` }),
    },
  });
}

/** A driver's failure to fetch is the downloader's 404 (gone) or 502 (provider trouble); anything else stays as it is. */
function asDownloadError(error: unknown): never {
  throw error instanceof DriverError ? mediaFetchFailure(error) : error;
}

/** Keeps a received media item's bytes, fetched from the network while the network still has them. */
export async function fetchReceivedMedia(ctx: AppContext, mediaId: string): Promise<Uint8Array | undefined> {
  const stores = poolMessagingStores(ctx);
  const item = await stores.media.get(mediaId);
  if (!item || !item.driverRef) return undefined;
  const existing = await stores.media.bytes(mediaId);
  if (existing) return existing;
  const connection = await stores.connections.find(item.connectionId);
  if (!connection) return undefined;
  const fetched = await ctx.drivers.get(connection.driver)!.fetchMedia(driverView(connection), item.driverRef);
  await stores.media.saveBytes(mediaId, fetched.bytes, fetched.mimetype || item.mimetype);
  return fetched.bytes;
}
