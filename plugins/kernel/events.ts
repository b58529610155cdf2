/**
 * What a plugin's subscriber receives for each event it subscribes to: the stored event (spec 6.1
 * envelope fields) with its id and workspace. The worker's event runner (apps/) builds it.
 */
export interface PluginEventPayload {
  eventId: string;
  workspaceId: string;
  event: string;
  connectionId: string | null;
  remoteJid: string | null;
  sender?: string;
  data: unknown;
}
