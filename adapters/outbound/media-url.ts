import { DriverError } from '../../core/connections/driver.ts';
import { assertMediaFits, mediaLimitFor, MediaTooLarge } from '../../core/media/media-limits.ts';
import type { MediaKind } from '../../core/messaging/outgoing.ts';
import { OutboundRefusal, readBounded, type Outbound } from './outbound.ts';

const MEDIA_URL_TIMEOUT_MS = 30_000;
const MEDIA_URL_REDIRECTS = 3;

/**
 * The bytes behind a media `url` send, for drivers that upload bytes themselves: through the
 * outbound policy (each redirect checked), bounded in time and in size by the kind's limit
 * (core/media/media-limits.ts, lowered by `cap`, the configured MAX_MEDIA_BYTES): the read stops
 * at the limit, never after. Failures are final `DriverError`s that say what happened without
 * naming network errors; over the limit, the message names the kind and the limit.
 */
export async function downloadMediaUrl(outbound: Outbound, url: string, kind: MediaKind, cap?: number): Promise<Uint8Array> {
  // A sticker is read up to the animated limit; whether it is animated is known from its bytes.
  const maxBytes = mediaLimitFor(kind, { cap });
  let response: Response;
  try {
    response = await outbound.fetch(url, { followRedirects: MEDIA_URL_REDIRECTS, signal: AbortSignal.timeout(MEDIA_URL_TIMEOUT_MS) });
  } catch (error) {
    if (error instanceof OutboundRefusal) throw new DriverError(`The media URL is refused by the outbound policy: ${error.message}`, 'media_url_refused', false);
    throw new DriverError('The media URL could not be downloaded', 'media_download_failed', false);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new DriverError(`The media URL answered HTTP ${response.status}`, 'media_download_failed', false);
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBounded(response, maxBytes);
  } catch (error) {
    if ((error as Error).message.includes('larger than')) throw tooLarge(new MediaTooLarge(kind, maxBytes));
    throw new DriverError('The media URL could not be downloaded', 'media_download_failed', false);
  }
  try {
    assertMediaFits(kind, bytes, cap);
  } catch (error) {
    if (error instanceof MediaTooLarge) throw tooLarge(error);
    throw error;
  }
  return bytes;
}

function tooLarge(error: MediaTooLarge): DriverError {
  return new DriverError(`The media at the URL is too large: ${error.message}`, 'media_too_large', false);
}
