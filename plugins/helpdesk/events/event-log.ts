import type { Kysely } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { eventPublisher } from '../../kernel/storage.ts';
import type { HelpdeskEvent, HelpdeskEventLog } from '../../../core/helpdesk/events.ts';
import { presentMessage } from '../conversations/views.ts';

/**
 * Helpdesk events go into the durable event log of the base (the `events` table, with no
 * connection) in the transaction of the change; its place in the plugins' event queue, written
 * with it, runs the helpdesk's subscribers (webhook fan-out, realtime broadcast), so a crash loses neither.
 */
export function helpdeskEventLog(db: Kysely<Database>, ctx: Pick<PluginContext, 'ids' | 'clock' | 'pluginEvents' | 'pluginEventConnections' | 'pluginEventTests' | 'queue'>): HelpdeskEventLog {
  const publisher = eventPublisher(db, ctx);
  return {
    async record(event) {
      await publisher.publish({ event: event.type, workspaceId: event.accountId, connectionId: '', remoteJid: null, sender: null, data: toWire(event) });
    },
  };
}

/** The event object as webhooks and sockets carry it: the message hydrated as in REST, times as ISO strings. */
export function toWire(event: HelpdeskEvent): Record<string, unknown> {
  const { message, ...rest } = event;
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) wire[key] = value instanceof Date ? value.toISOString() : value;
  if (message) wire.message = presentMessage(message);
  return wire;
}
