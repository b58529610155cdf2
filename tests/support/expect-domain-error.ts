import { expect } from 'bun:test';
import { DomainError } from '../../core/shared/errors.ts';

/** Runs `work` and asserts it failed with a DomainError of this status (and message, if given). */
export async function expectDomainError(work: () => Promise<unknown>, status: number, message?: string): Promise<DomainError> {
  let thrown: unknown;
  try {
    await work();
  } catch (error) {
    thrown = error;
  }
  if (!(thrown instanceof DomainError)) throw new Error(`expected a DomainError ${status}, got ${thrown === undefined ? 'success' : String(thrown)}`);
  expect(thrown.status).toBe(status);
  if (message !== undefined) expect(thrown.message).toBe(message);
  return thrown;
}
