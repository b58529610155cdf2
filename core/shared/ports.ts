/**
 * The ports through which core/ reaches time, identity and chance. Adapters supply the
 * real ones; property tests supply deterministic ones.
 */
export interface Clock {
  now(): Date;
}

export interface IdGen {
  /** A new UUID v7. */
  next(): string;
}

export interface Random {
  /** `length` cryptographically strong random bytes. */
  bytes(length: number): Uint8Array;
}
