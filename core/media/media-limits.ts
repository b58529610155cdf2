import { DomainError } from '../shared/errors.ts';
import type { MediaKind } from '../messaging/outgoing.ts';

/**
 * The chat network's size limit per media kind (its Cloud API's published figures; the spec
 * names none). Every path that stores or sends media checks against this one table: uploads,
 * sends by `mediaId`, media `url` downloads, template header media, helpdesk replies with a
 * file. MB and KB are binary (1 MB = 1,048,576 bytes), as `MAX_MEDIA_BYTES` is.
 */
const KB = 1024;
const MB = 1024 * KB;

export const MEDIA_LIMITS: Readonly<Record<MediaKind, number>> = {
  image: 5 * MB,
  video: 16 * MB,
  audio: 16 * MB,
  document: 100 * MB,
  /** Static stickers; animated ones have `ANIMATED_STICKER_LIMIT`. */
  sticker: 100 * KB,
};
export const ANIMATED_STICKER_LIMIT = 500 * KB;

/** The largest of the table: nothing the service holds for the network can be bigger. */
export const LARGEST_MEDIA_LIMIT = Math.max(...Object.values(MEDIA_LIMITS), ANIMATED_STICKER_LIMIT);

/**
 * Bytes allowed for a kind; `cap` (the configured `MAX_MEDIA_BYTES`) lowers it. A sticker of
 * unknown animation gets the animated limit: what reads the bytes stops there, then checks.
 */
export function mediaLimitFor(kind: MediaKind, options: { animated?: boolean; cap?: number } = {}): number {
  const limit = kind === 'sticker' && options.animated !== false ? ANIMATED_STICKER_LIMIT : MEDIA_LIMITS[kind];
  return options.cap !== undefined ? Math.min(limit, options.cap) : limit;
}

/** `5 MB`, `100 KB`, or the exact byte count when it is no whole number of either. */
export function sizeText(bytes: number): string {
  if (bytes % MB === 0) return `${bytes / MB} MB`;
  if (bytes % KB === 0) return `${bytes / KB} KB`;
  return `${bytes} bytes`;
}

/** Over a kind's limit (too large), naming the kind and the limit ("image larger than 5 MB"). */
export class MediaTooLarge extends DomainError {
  constructor(
    readonly mediaKind: MediaKind,
    readonly limit: number,
    animated?: boolean,
  ) {
    const what = mediaKind === 'sticker' && animated !== undefined ? `${animated ? 'animated' : 'static'} sticker` : mediaKind;
    const size = sizeText(limit);
    super('too_large', `${what} larger than ${size}${size.endsWith(' bytes') ? '' : ` (${limit} bytes)`}`);
  }
}

/** Whether a size fits a kind, without the bytes: for a sticker, the check is final only when `animated` is known. */
export function assertMediaSize(kind: MediaKind, size: number, options: { animated?: boolean; cap?: number } = {}): void {
  const limit = mediaLimitFor(kind, options);
  if (size > limit) throw new MediaTooLarge(kind, limit, kind === 'sticker' ? options.animated : undefined);
}

/** The final check on the bytes themselves: a sticker's limit depends on whether it is animated. */
export function assertMediaFits(kind: MediaKind, bytes: Uint8Array, cap?: number): void {
  assertMediaSize(kind, bytes.length, { animated: kind === 'sticker' ? isAnimatedWebp(bytes) : undefined, cap });
}

/**
 * An animated WebP: a `RIFF…WEBP` file whose extended header (`VP8X`) has the animation flag
 * (bit 1 of its first byte), as the WebP container specification lays it out.
 */
export function isAnimatedWebp(bytes: Uint8Array): boolean {
  if (bytes.length < 21) return false;
  const tag = (at: number) => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
  return tag(0) === 'RIFF' && tag(8) === 'WEBP' && tag(12) === 'VP8X' && (bytes[20]! & 0x02) !== 0;
}

/** How an upload whose use is not known yet is sent: by its media type (a WebP counts as an image). */
export function mediaKindOfType(mimetype: string): MediaKind {
  const family = mimetype.split('/')[0];
  return family === 'image' || family === 'video' || family === 'audio' ? family : 'document';
}

/** The table in words, for the API documentation of every route that takes or sends media. */
export function mediaLimitsText(): string {
  const kinds = (['image', 'video', 'audio', 'document'] as const).map((kind) => `${kind} ${sizeText(MEDIA_LIMITS[kind])}`);
  return (
    `Size limits per kind (the chat network's): ${kinds.join(', ')}, sticker ${sizeText(MEDIA_LIMITS.sticker)} (animated WebP ${sizeText(ANIMATED_STICKER_LIMIT)}); ` +
    'MAX_MEDIA_BYTES (default 16 MB) lowers them all. Over the limit: 413 naming the kind and the limit, and nothing is stored.'
  );
}

/** The same for routes that send media by `mediaId` or `url`. */
export function mediaSendLimitsText(): string {
  return (
    `${mediaLimitsText()} A \`mediaId\` over the limit of the kind it is sent as is refused at once (413). ` +
    'A `url` is downloaded when the message is sent (unofficial connections), reading no more than the limit: over it the message ends FAILED with an error naming the kind and the limit; on official connections the network downloads the link and applies the same limits.'
  );
}
