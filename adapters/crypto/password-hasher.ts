import type { PasswordHasher } from '../../core/identity/passwords.ts';

/**
 * argon2id through `Bun.password`, with OWASP's recommended parameters (19 MiB, 2 passes, one
 * lane). `DUMMY_PASSWORD_HASH` in core/identity/passwords.ts uses the same parameters: change
 * both together. Hashes made with other parameters still verify (they are in the hash string).
 */
export const ARGON2ID = { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 } as const;

export const passwordHasher: PasswordHasher = {
  hash: (password) => Bun.password.hash(password, ARGON2ID),
  async verify(password, hash) {
    try {
      return await Bun.password.verify(password, hash);
    } catch {
      // A hash Bun cannot read (not one of ours): no password matches it.
      return false;
    }
  },
};
