import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { DomainError } from '../shared/errors.ts';
import type { PlanName } from '../plans/plans.ts';
import { base64url, constantTimeEqual } from '../tokens/secret.ts';
import { openOwnerWorkspace } from './bootstrap.ts';
import type { User } from './identity.ts';
import { passwordProblems, setPassword, type PasswordHasher } from './passwords.ts';
import { normalizeEmail, type WorkspaceDeps, type WorkspaceStores } from './workspaces.ts';

/**
 * First run: while nobody exists in the database, the service prints a set-up link at each
 * start (`PUBLIC_URL/setup?token=…`); its page makes the first Owner and workspace. The token is
 * HMAC(service signing key, "first-run-setup"): the same at each start, stored nowhere, and dead
 * as soon as any person exists (every use checks that nobody does).
 */
export const FIRST_RUN_PATH = '/setup';
/** The plan of the first workspace (as `cli bootstrap` without `--plan`). */
export const FIRST_RUN_PLAN: PlanName = 'FREE';
export const WORKSPACE_NAME_MAX_LENGTH = 200;
export const PERSON_NAME_MAX_LENGTH = 200;

export function firstRunToken(signingKey: Uint8Array): string {
  return base64url(hmac(sha256, signingKey, new TextEncoder().encode('first-run-setup')));
}

/** Whether `token` is this installation's set-up token (constant time). */
export function firstRunTokenMatches(signingKey: Uint8Array, token: unknown): boolean {
  return typeof token === 'string' && token.length < 256 && constantTimeEqual(firstRunToken(signingKey), token);
}

/** `${publicUrl}/setup?token=…` */
export function firstRunUrl(publicUrl: string, signingKey: Uint8Array): string {
  return `${publicUrl}${FIRST_RUN_PATH}?token=${firstRunToken(signingKey)}`;
}

export interface FirstOwnerInput {
  email: string;
  name: string;
  password: string;
  workspace: string;
}

/** Every problem of the set-up form's fields; empty when they pass. */
export function firstOwnerProblems(input: FirstOwnerInput & { passwordConfirmation?: string }): string[] {
  const problems: string[] = [];
  try {
    normalizeEmail(input.email);
  } catch {
    problems.push('Enter a valid email address');
  }
  if ([...input.name.trim()].length > PERSON_NAME_MAX_LENGTH) problems.push(`Your name must be at most ${PERSON_NAME_MAX_LENGTH} characters long`);
  problems.push(...passwordProblems(input.password));
  if (input.passwordConfirmation !== undefined && input.passwordConfirmation !== input.password) problems.push('The two passwords do not match');
  const workspace = input.workspace.trim();
  if (!workspace) problems.push('Enter a name for the workspace');
  else if ([...workspace].length > WORKSPACE_NAME_MAX_LENGTH) problems.push(`The workspace name must be at most ${WORKSPACE_NAME_MAX_LENGTH} characters long`);
  return problems;
}

/**
 * Makes the first Owner (with their password) and workspace, through the same use case as
 * `cli bootstrap`, when nobody exists yet; `already-set-up` otherwise. Run it in a transaction
 * that two concurrent set-ups cannot both commit (the caller's: serializable).
 */
export async function setUpFirstOwner(
  stores: WorkspaceStores,
  deps: WorkspaceDeps & { hasher: PasswordHasher },
  input: FirstOwnerInput,
): Promise<{ user: User; workspaceId: string } | 'already-set-up'> {
  const problems = firstOwnerProblems(input);
  if (problems.length > 0) throw new DomainError('invalid_input', problems);
  if (await stores.identity.anyUser()) return 'already-set-up';
  const { user, workspace } = await openOwnerWorkspace(stores, deps, {
    email: input.email,
    name: input.name.trim() || undefined,
    workspace: input.workspace,
    plan: FIRST_RUN_PLAN,
  });
  await setPassword(stores, deps.hasher, user.id, input.password);
  return { user, workspaceId: workspace.id };
}
