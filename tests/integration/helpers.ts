import { beforeAll, expect } from 'bun:test';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { createApiToken } from '../../core/tokens/api-tokens.ts';
import type { Role } from '../../core/identity/roles.ts';
import { HOOK_TIMEOUT, type TestService } from '../support/service.ts';
import { inviteAndAccept } from '../support/invitations.ts';

/** Shared helpers of the HTTP integration tests (no test cases here). */

export { HOOK_TIMEOUT };

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Answer = { status: number; body: any };

/**
 * Spec 7.2 (1): "Standard: `{ statusCode: <int>, message: <array of strings for validation
 * failures, one per broken rule; a string otherwise>, error: <status text> }`."
 */
export function expectStandardError(res: Answer, status: number, error: string): void {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body ?? {}).sort()).toEqual(['error', 'message', 'statusCode']);
  expect(res.body.statusCode).toBe(status);
  expect(res.body.error).toBe(error);
  const message = res.body.message;
  // Issue 20 §4: every 400 lists its broken rules.
  if (status === 400) expect(Array.isArray(message)).toBe(true);
  if (Array.isArray(message)) {
    expect(message.length).toBeGreaterThan(0);
    for (const m of message) expect(typeof m).toBe('string');
  } else {
    expect(typeof message).toBe('string');
    expect(message.length).toBeGreaterThan(0);
  }
}

/** A POST of raw bytes (an upload) with these headers; the answer's body parsed when it is JSON. */
export async function postRaw(url: string, bytes: Uint8Array, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers, body: bytes as Uint8Array<ArrayBuffer> });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, body };
}

export function uniqueEmail(label: string): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

/**
 * Adds a person to the workspace of `apikey` over HTTP the way people join: an invitation
 * (POST /v3/members) accepted on its page as a new account; returns their user id.
 */
export async function addMember(service: TestService, apikey: string, role: Role, email = uniqueEmail(role.toLowerCase())): Promise<{ userId: string; email: string }> {
  return { userId: await inviteAndAccept(service.url, apikey, email, [role]), email };
}

/**
 * Test setup only: an API token acting as `userId` in `workspaceId`, minted straight through
 * the core use case. Over HTTP only Owners and Admins can create tokens (spec 5.1), and a token
 * acts as its creator, so a Manager's or an Agent's token cannot be made through the API.
 * `roles` here only gates the creation call; at request time the token resolves the member's
 * real roles from their membership, which is what the tests exercise.
 */
export async function mintTokenFor(service: TestService, userId: string, workspaceId: string, name = 'test-setup'): Promise<string> {
  const view = await createApiToken(baseStores(service.runtime.ctx.db).tokens, service.runtime.ctx, { userId, workspaceId, roles: ['OWNER'] }, name);
  return view.token!;
}

/** A member with the given role in the workspace, and a token that acts as them. */
export async function memberWithToken(service: TestService, owner: { token: string; workspaceId: string }, role: Role): Promise<{ userId: string; email: string; token: string }> {
  const member = await addMember(service, owner.token, role);
  return { ...member, token: await mintTokenFor(service, member.userId, owner.workspaceId, `${role.toLowerCase()}-token`) };
}

/**
 * A member of the workspace of `owner` with a token of their own, added before the file's tests
 * by a hook registered after the ones that set up `owner` (filled in place, as `useOwner`'s is).
 */
export function useMember(service: TestService, owner: { token: string; workspaceId: string }, role: Role): { userId: string; email: string; token: string } {
  const member = {} as { userId: string; email: string; token: string };
  beforeAll(async () => {
    Object.assign(member, await memberWithToken(service, owner, role));
  }, HOOK_TIMEOUT);
  return member;
}
