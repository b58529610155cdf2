import { METADATA_DOCUMENT_MAX_BYTES, MetadataDocumentUnavailable, type ClientMetadataDocuments } from '../../core/oauth/metadata-document.ts';
import { OutboundRefusal, readBounded, type Outbound } from './outbound.ts';

const FETCH_TIMEOUT_MS = 5_000;

/**
 * Client ID Metadata Documents fetched through the outbound policy: no redirects (the document
 * must be at its own URL), at most 5 KiB, 5 seconds, JSON only. Failures say what went wrong
 * without naming network internals.
 */
export function clientMetadataDocuments(outbound: Outbound): ClientMetadataDocuments {
  return {
    allowsHttp(url) {
      return outbound.exempts(url.hostname);
    },

    async load(url) {
      let response: Response;
      try {
        response = await outbound.fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      } catch (error) {
        if (error instanceof OutboundRefusal) throw new MetadataDocumentUnavailable(`the URL is refused by the outbound policy: ${error.message}`);
        throw new MetadataDocumentUnavailable((error as Error).name === 'TimeoutError' ? `no answer within ${FETCH_TIMEOUT_MS / 1000} seconds` : 'the host could not be reached');
      }
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => {});
        throw new MetadataDocumentUnavailable(`the URL answered HTTP ${response.status} (redirects are not followed)`);
      }
      let bytes: Uint8Array;
      try {
        bytes = await readBounded(response, METADATA_DOCUMENT_MAX_BYTES);
      } catch (error) {
        const tooLarge = (error as Error).message.includes('larger than');
        throw new MetadataDocumentUnavailable(tooLarge ? `the document is larger than ${METADATA_DOCUMENT_MAX_BYTES} bytes` : 'the document could not be read');
      }
      let body: unknown;
      try {
        body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
      } catch {
        throw new MetadataDocumentUnavailable('the document is not JSON');
      }
      return { body, maxAgeSeconds: maxAge(response.headers.get('cache-control')) };
    },
  };
}

/** `max-age` of a Cache-Control header; `no-store` and `no-cache` count as 0 (the floor applies). */
function maxAge(header: string | null): number | undefined {
  if (!header) return undefined;
  const directives = header.toLowerCase().split(',').map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return 0;
  const found = directives.map((d) => /^max-age=(\d+)$/.exec(d)).find(Boolean);
  return found ? Number(found[1]) : undefined;
}
