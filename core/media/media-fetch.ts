import { DriverError, MEDIA_GONE } from '../connections/driver.ts';
import { DomainError, notFound } from '../shared/errors.ts';

/**
 * A received media item the network could not serve, as the downloader sees it (spec 7.1):
 * 404 when the network no longer has it (links outlive the provider's own copy), 502 when the
 * provider failed or could not be reached (worth trying again later). Never a 500.
 */
export function mediaFetchFailure(error: DriverError): DomainError {
  if (error.code === MEDIA_GONE) return notFound('The media is no longer available from the network');
  return new DomainError('upstream_failed', `The network could not serve the media (${error.retryable ? 'try again later' : 'it refused'}): ${error.message}`);
}
