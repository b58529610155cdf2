/** The host's websocket hub (spec 6.7) as a plugin's namespaces use it. */
export type { AccessChange, RealtimeHub, RealtimeServer } from '../../adapters/realtime/hub.ts';
export { accessChangeConcerns, announceAccessChange } from '../../adapters/realtime/hub.ts';
