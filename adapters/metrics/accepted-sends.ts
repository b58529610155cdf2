import { onePerContext, type AppContext } from '../http/context.ts';
import { errorField } from '../logging/logger.ts';

/**
 * Counts a send accepted (stored PENDING and queued) once its transaction has committed, under
 * its connection's driver. A connection's driver never changes, so it is looked up once per
 * connection and kept. Counting never fails the send it counts.
 */
export const countAcceptedSend = onePerContext((ctx: AppContext) => {
  const drivers = new Map<string, string>();
  return async (message: { connectionId: string }, created: boolean): Promise<void> => {
    if (!created || !ctx.metrics) return;
    try {
      let driver = drivers.get(message.connectionId);
      if (driver === undefined) {
        const row = await ctx.db.selectFrom('connections').select('kind').where('id', '=', message.connectionId).executeTakeFirst();
        if (!row) return;
        drivers.set(message.connectionId, (driver = row.kind));
      }
      ctx.metrics.sendsRecorded(driver, 'accepted');
    } catch (error) {
      ctx.log.warn({ connectionId: message.connectionId, error: errorField(error) }, 'an accepted send could not be counted');
    }
  };
});
