import { expect } from 'bun:test';
import { DomainError, type DomainErrorKind } from '../../core/shared/errors.ts';

/** Runs `work` and asserts it failed with a DomainError of this kind (and message, if given). */
export async function expectDomainError(work: () => Promise<unknown>, kind: DomainErrorKind, message?: string): Promise<DomainError> {
  let thrown: unknown;
  try {
    await work();
  } catch (error) {
    thrown = error;
  }
  if (!(thrown instanceof DomainError)) throw new Error(`expected a DomainError ${kind}, got ${thrown === undefined ? 'success' : String(thrown)}`);
  expect(thrown.kind).toBe(kind);
  if (message !== undefined) expect(thrown.message).toBe(message);
  return thrown;
}

/** What `work` throws, or undefined when it returns (for a check that it throws, or does not). */
export function thrownBy(work: () => unknown): unknown {
  try {
    work();
    return undefined;
  } catch (error) {
    return error;
  }
}

/** What asynchronous `work` rejects with, or undefined when it resolves. */
export async function rejectionOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
    return undefined;
  } catch (error) {
    return error;
  }
}
