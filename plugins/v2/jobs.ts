import type { PluginContext } from '../kernel/context.ts';
import type { JobDefinition } from '../kernel/jobs.ts';
import { messagingStores } from '../kernel/storage.ts';
import { driverView } from '../../core/messaging/deliver.ts';
import { PRESENCE_QUEUE, type PresenceSignal } from '../../core/messaging/presence.ts';

/**
 * Presence signals, run where the session lives. A signal is worth little late: two quick tries,
 * then it is dropped. A connection gone or disconnected meanwhile drops it.
 */
export function v2Jobs(ctx: PluginContext): JobDefinition[] {
  return [
    {
      queue: PRESENCE_QUEUE,
      retryLimit: 2,
      retryDelay: 1,
      retryBackoff: false,
      expireInSeconds: 30,
      handle: async (signal: PresenceSignal) => {
        const connection = await ctx.storage.read(messagingStores).connections.find(signal.connectionId);
        const driver = connection && ctx.drivers.get(connection.driver);
        if (!connection || connection.status !== 'CONNECTED' || !driver?.sendTyping) return;
        await driver.sendTyping(driverView(connection), signal.to, signal.typing, signal.lastContactMessageId);
      },
    },
  ];
}
