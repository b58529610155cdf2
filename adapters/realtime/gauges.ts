import type { GaugeDefinition } from '../metrics/metrics.ts';
import type { RealtimeServer } from './hub.ts';

/** Websocket clients of this server process, by Socket.IO namespace (`/`, `/helpdesk`…). */
export function realtimeGauges(io: RealtimeServer): GaugeDefinition[] {
  return [
    {
      name: 'switchboard_realtime_sockets',
      help: 'Sockets connected to this server process, by namespace',
      labelNames: ['namespace'],
      read: () => [...io._nsps.values()].map((namespace) => ({ labels: { namespace: namespace.name }, value: namespace.sockets.size })),
    },
  ];
}
