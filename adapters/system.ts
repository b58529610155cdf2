import type { Clock, IdGen, Random } from '../core/shared/ports.ts';

/** The real clock, UUID v7 ids and the operating system's randomness. */
export const systemClock: Clock = { now: () => new Date() };
export const uuidV7: IdGen = { next: () => Bun.randomUUIDv7() };
export const secureRandom: Random = { bytes: (length) => crypto.getRandomValues(new Uint8Array(length)) };
