import type { EventSubscriber, PluginContext } from '../../kernel/plugin.ts';
import type { PluginEventPayload } from '../../kernel/events.ts';
import { HELPDESK_EVENT_TYPES, type HelpdeskEventType } from '../../../core/helpdesk/events.ts';
import { fanOutHelpdeskEvent } from '../../../core/helpdesk/webhooks/helpdesk-webhooks.ts';
import { dispatchDeps } from '../../kernel/webhooks.ts';
import { helpdeskWebhookStores } from '../webhooks/use-case-stores.ts';
import { broadcastHelpdeskEvent } from '../realtime/broadcast.ts';

type HelpdeskEventData = Record<string, unknown> & { type: HelpdeskEventType; accountId: string; inboxId?: string | null };

/**
 * What happens to a logged helpdesk event (run by the worker's `plugins.events` job, queued with
 * the event): a delivery to each helpdesk webhook that hears it, then the event to the sockets of
 * the `/helpdesk` namespace on every server process. The job is retried if this throws:
 * deliveries are keyed by (webhook, event), so a rerun adds none; sockets may then hear an
 * event twice (at least once, as webhooks; consumers keep the latest state).
 */
export async function onHelpdeskEvent(payload: unknown, ctx: PluginContext): Promise<void> {
  const event = payload as PluginEventPayload;
  const data = event.data as HelpdeskEventData;
  await ctx.storage.transaction(helpdeskWebhookStores, (stores) => fanOutHelpdeskEvent(stores, dispatchDeps(ctx), { eventId: event.eventId, data }));
  if (ctx.realtime) await broadcastHelpdeskEvent(ctx.realtime, data);
}

export const HELPDESK_EVENT_SUBSCRIBERS: EventSubscriber[] = HELPDESK_EVENT_TYPES.map((event) => ({ event, handle: onHelpdeskEvent }));
