import { hashSecret, constantTimeEqual } from '../../core/tokens/secret.ts';
import { METRICS_CONTENT_TYPE, type Metrics } from './metrics.ts';

/** The scrape's answer: the text format, never cached. */
export async function expositionResponse(metrics: Metrics): Promise<Response> {
  return new Response(await metrics.exposition(), { headers: { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' } });
}

/**
 * `Authorization: Bearer <token>` carries `expected`? Compared as hashes in constant time, so
 * neither the token's characters nor its length show in the time taken.
 */
export function bearerMatches(authorization: string | null, expected: string): boolean {
  const sent = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '')?.[1];
  return sent !== undefined && constantTimeEqual(hashSecret(sent), hashSecret(expected));
}
