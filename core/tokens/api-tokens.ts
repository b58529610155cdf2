import { authorize, outranks, type Role } from '../identity/roles.ts';
import type { Actor, IdentityStore } from '../identity/identity.ts';
import { forbidden, notFound, unauthorized } from '../shared/errors.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { Clock, IdGen, Random } from '../shared/ports.ts';
import { API_TOKEN_PREFIX, constantTimeEqual, hashSecret, newApiTokenSecret } from './secret.ts';

/** An API token as stored: the secret itself is never kept, only its hash. */
export interface ApiToken {
  id: string;
  workspaceId: string;
  /** The member who created it; the token acts as them. */
  userId: string;
  name: string;
  secretHash: string;
  tokenLast4: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** What clients see of a token (spec 2.4); `token` only in the creation and rotation answers. */
export interface ApiTokenView {
  id: string;
  name: string;
  prefix: string;
  tokenLast4: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  token?: string;
}

export interface ApiTokenStore {
  insert(token: ApiToken): Promise<void>;
  get(workspaceId: string, id: string): Promise<ApiToken | undefined>;
  /** The token with this secret hash, with its creator's roles in its workspace (null when they left it). */
  findByHash(secretHash: string): Promise<(ApiToken & { creatorRoles: Role[] | null }) | undefined>;
  list(workspaceId: string, request: PageRequest): Promise<Page<ApiToken>>;
  /** Replaces the secret in place, so the old one stops working in the same write. */
  replaceSecret(id: string, secretHash: string, tokenLast4: string): Promise<void>;
  rename(id: string, name: string): Promise<void>;
  delete(id: string): Promise<void>;
  deleteAllOf(workspaceId: string, userId: string): Promise<void>;
  /** Every token the person made, in every workspace. */
  deleteEveryOf(userId: string): Promise<void>;
  touch(id: string, at: Date): Promise<void>;
}

const TOUCH_INTERVAL_MS = 60_000;

export interface TokenDeps {
  clock: Clock;
  ids: IdGen;
  random: Random;
}

export async function createApiToken(store: ApiTokenStore, deps: TokenDeps, actor: Actor, name: string): Promise<ApiTokenView> {
  authorize(actor.roles, 'tokens', 'write');
  const secret = newApiTokenSecret(deps.random);
  const token: ApiToken = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    userId: actor.userId,
    name,
    secretHash: hashSecret(secret),
    tokenLast4: secret.slice(-4),
    createdAt: deps.clock.now(),
    lastUsedAt: null,
  };
  await store.insert(token);
  return { ...view(token), token: secret };
}

export async function listApiTokens(store: ApiTokenStore, actor: Actor, request: PageRequest): Promise<Page<ApiTokenView>> {
  authorize(actor.roles, 'tokens', 'read');
  const found = await store.list(actor.workspaceId, request);
  return { ...found, data: found.data.map(view) };
}

/** Issues a new secret for the token; the old secret is dead from this write on. */
export async function rotateApiToken(stores: TokenStores, deps: TokenDeps, actor: Actor, id: string): Promise<ApiTokenView> {
  const token = await manageableToken(stores, actor, id);
  const secret = newApiTokenSecret(deps.random);
  const rotated = { ...token, secretHash: hashSecret(secret), tokenLast4: secret.slice(-4) };
  await stores.tokens.replaceSecret(id, rotated.secretHash, rotated.tokenLast4);
  return { ...view(rotated), token: secret };
}

export async function renameApiToken(stores: TokenStores, actor: Actor, id: string, name: string): Promise<ApiTokenView> {
  const token = await manageableToken(stores, actor, id);
  await stores.tokens.rename(id, name);
  return view({ ...token, name });
}

export async function deleteApiToken(stores: TokenStores, actor: Actor, id: string): Promise<void> {
  await manageableToken(stores, actor, id);
  await stores.tokens.delete(id);
}

export interface TokenStores {
  tokens: ApiTokenStore;
  identity: IdentityStore;
}

/**
 * Resolves an `apikey` to the member it acts as. `accountId` (the `X-Account-Id` header)
 * switches to another workspace of that member; a workspace they do not belong to is 403.
 */
export async function authenticateApiKey(
  stores: TokenStores,
  deps: Pick<TokenDeps, 'clock'> & { hashSecret?: (secret: string) => string },
  apiKey: string | undefined,
  accountId: string | undefined,
): Promise<Actor> {
  if (!apiKey || !apiKey.startsWith(`${API_TOKEN_PREFIX}_`)) throw unauthorized();
  // A host may hash natively (every request pays for it); the hash must equal `hashSecret`'s.
  const secretHash = (deps.hashSecret ?? hashSecret)(apiKey);
  const token = await stores.tokens.findByHash(secretHash);
  // The stored hash is compared again in constant time (the lookup may not be exact); the key is hashed once.
  if (!token || !constantTimeEqual(secretHash, token.secretHash)) throw unauthorized();
  // The creator left the workspace: the token has nobody left to act as.
  if (!token.creatorRoles) throw unauthorized();

  const now = deps.clock.now();
  // Recording use once a minute is enough, and spares a write on every request.
  if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS) await stores.tokens.touch(token.id, now);

  if (!accountId || accountId === token.workspaceId) {
    return { userId: token.userId, workspaceId: token.workspaceId, roles: token.creatorRoles, tokenId: token.id };
  }
  const other = await stores.identity.getMembership(accountId, token.userId);
  if (!other) throw forbidden('You are not a member of the workspace named in X-Account-Id');
  return { userId: token.userId, workspaceId: accountId, roles: other.roles, tokenId: token.id };
}

/**
 * Owners and Admins manage the tokens of their workspace, but not the tokens of a member who
 * outranks them (an Admin cannot cut off the Owner's integrations).
 */
async function manageableToken(stores: TokenStores, actor: Actor, id: string): Promise<ApiToken> {
  authorize(actor.roles, 'tokens', 'write');
  const token = await stores.tokens.get(actor.workspaceId, id);
  if (!token) throw notFound(`API token ${id} not found`);
  if (token.userId !== actor.userId) {
    const creator = await stores.identity.getMembership(actor.workspaceId, token.userId);
    if (creator && outranks(creator.roles, actor.roles)) throw forbidden();
  }
  return token;
}

function view(token: ApiToken): ApiTokenView {
  return {
    id: token.id,
    name: token.name,
    prefix: API_TOKEN_PREFIX,
    tokenLast4: token.tokenLast4,
    createdAt: token.createdAt,
    lastUsedAt: token.lastUsedAt,
  };
}
