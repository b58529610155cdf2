/**
 * The port through which the authorization server gets Client ID Metadata Documents
 * (core/oauth/metadata-document.ts); adapters/outbound implements it.
 */
export interface ClientMetadataDocuments {
  /** Plain http is accepted only for hosts the outbound policy exempts (`OUTBOUND_ALLOW`: local trials, tests). */
  allowsHttp(url: URL): boolean;
  /** The parsed JSON and the `max-age` it was served with; throws `MetadataDocumentUnavailable`. */
  load(url: string): Promise<{ body: unknown; maxAgeSeconds: number | undefined }>;
}

/** The document could not be had: refused by the policy, unreachable, slow, too large, not JSON. */
export class MetadataDocumentUnavailable extends Error {
  override name = 'MetadataDocumentUnavailable';
}

