import { DomainError } from '../../core/shared/errors.ts';

/** 429 in the standard shape (spec 7.1: "body not in the OAuth error shape"), with Retry-After. */
export class TooManyRequests extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, `Too many requests; retry in ${retryAfterSeconds} seconds`);
  }
}
