/** What a plugin's jobs and sends use: the job declaration, media of received messages, and the one send path. */
import { fetchReceivedMedia as hostFetchReceivedMedia, mediaDownload as hostMediaDownload } from '../../adapters/connections/jobs.ts';
import { sendFromRequest as hostSendFromRequest } from '../../adapters/connections/send-request.ts';
import { onPluginContext } from './host.ts';

export type { JobDefinition } from '../../adapters/queue/queue.ts';
/** The bytes of a received message's media, fetched from the network when not stored yet. */
export const fetchReceivedMedia = onPluginContext(hostFetchReceivedMedia);
/** A download answer for a media id (stored bytes, or the network's). */
export const mediaDownload = onPluginContext(hostMediaDownload);
/** Sends a message as a v3 request body would, through the same use case and checks as `POST /v3/…/messages`. */
export const sendFromRequest = onPluginContext(hostSendFromRequest);
