import { badRequest, notFound } from '../shared/errors.ts';
import type { Clock } from '../shared/ports.ts';
import { signToken, verifyToken, type SignedPayload } from '../shared/signed-token.ts';
import { hashSecret } from '../tokens/secret.ts';
import type { IdentityStore, User } from './identity.ts';
import { normalizeEmail } from './workspaces.ts';

/**
 * Passwords of people who sign in on the service's own pages (the OAuth consent screen). Only a
 * slow, salted hash is stored (argon2id, adapters/crypto/password-hasher.ts); API tokens are
 * another matter (core/tokens).
 */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password; never throws for a well-formed hash. */
  verify(password: string, hash: string): Promise<boolean>;
}

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

/**
 * A hash of nothing anyone knows, with the parameters of the real hasher: verified against when
 * the email is unknown or has no password, so answering takes as long as for a real account and
 * the timing does not tell which emails exist. (tests/integration/sign-in.test.ts checks that the
 * parameters still match the adapter's.)
 */
export const DUMMY_PASSWORD_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$uBhZ1ocLA8reLYNJnbPA0dnzVUXVdKDrrXuxZVCAoS0$d4ShxTFmcplLMKw7c348HY9lrADkgBq4uaG9+7EW62E';

/** Every broken rule of the password policy (10 to 200 characters); empty when it passes. */
export function passwordProblems(password: unknown): string[] {
  if (typeof password !== 'string') return ['password must be a string'];
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return [`password must be at least ${PASSWORD_MIN_LENGTH} characters long`];
  if (length > PASSWORD_MAX_LENGTH) return [`password must be at most ${PASSWORD_MAX_LENGTH} characters long`];
  return [];
}

/** Sets (or replaces) the password of a person; a password breaking the policy is 400. */
export async function setPassword(stores: { identity: IdentityStore }, hasher: PasswordHasher, userId: string, password: string): Promise<void> {
  const problems = passwordProblems(password);
  if (problems.length > 0) throw badRequest(problems);
  const user = await stores.identity.getUser(userId);
  if (!user) throw notFound(`User ${userId} not found`);
  await stores.identity.setPasswordHash(userId, await hasher.hash(password));
}

/**
 * The person whose email and password these are, or undefined. One answer for an unknown
 * email, a person with no password and a wrong password, each after one hash verification.
 */
export async function verifySignIn(stores: { identity: IdentityStore }, hasher: PasswordHasher, email: string, password: string): Promise<User | undefined> {
  if (typeof email !== 'string' || typeof password !== 'string') return undefined;
  // Longer than any password the policy accepts: cannot match, and is not worth hashing.
  if (password.length === 0 || [...password].length > PASSWORD_MAX_LENGTH) return undefined;
  let normalized: string | undefined;
  try {
    normalized = normalizeEmail(email);
  } catch {
    normalized = undefined;
  }
  const found = normalized === undefined ? undefined : await stores.identity.findCredentialsByEmail(normalized);
  if (!found?.passwordHash) {
    await hasher.verify(password, DUMMY_PASSWORD_HASH).catch(() => false);
    return undefined;
  }
  return (await hasher.verify(password, found.passwordHash)) ? found.user : undefined;
}

// ---------------------------------------------------------------------------------------------
// Password set-up links: a signed token carrying the person and a fingerprint of their current
// password hash, so the link stops working as soon as a password is set with it (or otherwise).

export const PASSWORD_SETUP_USE = 'password-setup';
export const PASSWORD_SETUP_DAYS = 7;

export interface PasswordSetupClaims extends SignedPayload<typeof PASSWORD_SETUP_USE> {
  /** The person's user id. */
  sub: string;
  /** Fingerprint of the password hash when the link was issued (`none` when there was none). */
  pwd: string;
}

export interface PasswordLinkDeps {
  clock: Clock;
  signingKey: Uint8Array;
  publicUrl: string;
}

/** A short, non-reversible fingerprint of a stored password hash. */
export function passwordFingerprint(passwordHash: string | null): string {
  return passwordHash ? hashSecret(`password-setup:${passwordHash}`).slice(0, 32) : 'none';
}

/**
 * The token of a set-up link for this person, valid `lifetimeSeconds` (7 days unless given) and
 * until their password changes.
 */
export function passwordSetupToken(
  deps: Omit<PasswordLinkDeps, 'publicUrl'>,
  userId: string,
  currentHash: string | null,
  lifetimeSeconds = PASSWORD_SETUP_DAYS * 86_400,
): string {
  const exp = Math.floor(deps.clock.now().getTime() / 1000) + lifetimeSeconds;
  return signToken<PasswordSetupClaims>(deps.signingKey, { use: PASSWORD_SETUP_USE, exp, sub: userId, pwd: passwordFingerprint(currentHash) });
}

/** `${publicUrl}/account/password?token=…` */
export function passwordSetupUrl(deps: PasswordLinkDeps, userId: string, currentHash: string | null): string {
  return `${deps.publicUrl}/account/password?token=${encodeURIComponent(passwordSetupToken(deps, userId, currentHash))}`;
}

/** A password reset link lives an hour (and dies once a password is set with it, as every set-up link). */
export const PASSWORD_RESET_MINUTES = 60;

/** A reset link: the set-up page's link (`/account/password?token=…`), valid one hour. */
export function passwordResetLink(deps: PasswordLinkDeps, userId: string, currentHash: string | null): { url: string; expiresAt: Date } {
  const lifetime = PASSWORD_RESET_MINUTES * 60;
  const token = passwordSetupToken(deps, userId, currentHash, lifetime);
  const expiresAt = new Date((Math.floor(deps.clock.now().getTime() / 1000) + lifetime) * 1000);
  return { url: `${deps.publicUrl}/account/password?token=${encodeURIComponent(token)}`, expiresAt };
}

export const PASSWORD_LINK_INVALID =
  'This link has expired or has already been used. Ask for a new one: “Forgot password?” on the sign-in page, or an Owner or Admin of your workspace.';

/**
 * The person a set-up token is for, while it is still good: signature, purpose and expiry hold
 * and their password has not changed since it was issued. Else a 400 with one message.
 * Inside a transaction the person's row stays locked until it ends, so two uses of one link
 * cannot both pass.
 */
export async function checkPasswordSetupToken(
  stores: { identity: IdentityStore },
  deps: Omit<PasswordLinkDeps, 'publicUrl'>,
  token: unknown,
): Promise<User> {
  const claims = typeof token === 'string' && token.length < 2048 ? verifyToken<PasswordSetupClaims>(deps.signingKey, token, PASSWORD_SETUP_USE, deps.clock.now()) : undefined;
  if (!claims || typeof claims.sub !== 'string') throw badRequest(PASSWORD_LINK_INVALID);
  const found = await stores.identity.lockCredentials(claims.sub);
  if (!found || passwordFingerprint(found.passwordHash) !== claims.pwd) throw badRequest(PASSWORD_LINK_INVALID);
  return found.user;
}
