import { DriverError } from '../../core/connections/driver.ts';
import { OutboundRefusal, readBounded, type Outbound } from './outbound.ts';

/** The most a media URL send downloads (the network's largest media limit is far below for most types). */
export const MEDIA_URL_MAX_BYTES = 16 * 1024 * 1024;
const MEDIA_URL_TIMEOUT_MS = 30_000;
const MEDIA_URL_REDIRECTS = 3;

/**
 * The bytes behind a media `url` send, for drivers that upload bytes themselves: through the
 * outbound policy (each redirect checked), bounded in size and time. Failures are final
 * `DriverError`s that say what happened without naming network errors.
 */
export async function downloadMediaUrl(outbound: Outbound, url: string, maxBytes = MEDIA_URL_MAX_BYTES): Promise<Uint8Array> {
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
  try {
    return await readBounded(response, maxBytes);
  } catch (error) {
    const tooLarge = (error as Error).message.includes('larger than');
    throw new DriverError(tooLarge ? `The media at the URL is larger than ${maxBytes} bytes` : 'The media URL could not be downloaded', 'media_download_failed', false);
  }
}
