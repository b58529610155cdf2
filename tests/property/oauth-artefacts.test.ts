import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { sha256 } from '@noble/hashes/sha2.js';
import type { AppContext } from '../../adapters/http/context.ts';
import { baseStores, unitOfWork } from '../../adapters/postgres/stores.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  CODE_TRANSITIONS,
  CODE_TTL_SECONDS,
  PENDING_REQUEST_TTL_SECONDS,
  PENDING_TRANSITIONS,
  REFRESH_TOKEN_TTL_SECONDS,
  TOKEN_TRANSITIONS,
} from '../../core/oauth/artefacts.ts';
import { decide, startAuthorization, type AuthorizeOutcome } from '../../core/oauth/authorize.ts';
import { authenticateBearer } from '../../core/oauth/bearer.ts';
import { registerClient, type OAuthClient } from '../../core/oauth/clients.ts';
import { deleteConsent } from '../../core/oauth/consents.ts';
import { OAuthError } from '../../core/oauth/errors.ts';
import type { Scope } from '../../core/oauth/scopes.ts';
import type { OAuthDeps } from '../../core/oauth/store.ts';
import { grantTokens, introspectToken, revokeToken, type TokenResponse } from '../../core/oauth/tokens.ts';
import type { Clock } from '../../core/shared/ports.ts';
import { base64url, hashSecret } from '../../core/tokens/secret.ts';
import { openTestContext, type TestContext } from '../support/context.ts';

/**
 * The OAuth artefacts of spec 3.3 (codes, access and refresh tokens, consents, pending
 * authorization requests) driven through the real core use cases on the real Postgres store,
 * against a model of a few flags per artefact. After every step: no token is alive that the
 * model says is dead, and every token the model says is alive works (bearer on the API for an
 * access token, introspection for a refresh token), with the person, workspace and scopes the
 * model expects. Two clients, two people, two workspaces each: eight independent grants.
 *
 * Spec 3.3 and 8, as the model holds them:
 *   - code: 60 s, once. First use → tokens. Second use → invalid_grant and the whole grant
 *     (every token of that client for that person and workspace) dies. Expired → invalid_grant.
 *     Another client's code → invalid_grant, nothing dies.
 *   - refresh: 30 days; presented once → it dies, a new access+refresh pair is issued (the old
 *     access token lives on until its hour is up). Presented a second time → invalid_grant and
 *     the whole grant dies.
 *   - access: 1 hour (dynamic registration: expiry always on).
 *   - re-approval with fewer scopes → every token issued under the old approval dies.
 *   - revoke: an access token → that token; a refresh token → the grant. Consent deletion →
 *     everything of that grant (it is gone).
 *   - pending authorization request: 10 minutes, then answering it is invalid_request (expired).
 *   - the same code or refresh token sent twice at once: one request wins, the other is a
 *     second use, so the grant dies (the winner's new pair with it).
 *
 * Modelling choices where the spec is silent:
 *   - a live code presented with the wrong PKCE verifier or redirect_uri is spent (no retry
 *     with another guess): invalid_grant now, a replay if presented again;
 *   - revoking a grant also burns its codes not yet exchanged; presenting such a code counts as
 *     a replay (the server cannot tell a burnt code from a used one, and erring towards
 *     revocation is the safe side);
 *   - after a consent is deleted its codes and tokens are unknown: presenting one is
 *     invalid_grant and touches nothing (not even a later consent for the same client, person
 *     and workspace).
 */

// ---------------------------------------------------------------------------------------------
// Spec numbers (sections 3.3 and 8), written here rather than imported: the model is independent.
// ---------------------------------------------------------------------------------------------

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const CODE_MS = 60 * SECOND;
const ACCESS_MS = HOUR;
const REFRESH_MS = 30 * DAY;
const PENDING_MS = 10 * MINUTE;

const ISSUER = 'http://localhost';
const API_URL = `${ISSUER}/v3/connections`;
const CLIENT_NAMES = ['A', 'B'] as const;
const CLIENT_SCOPES: Scope[][] = [
  ['profile', 'messages:read', 'messages:send', 'contacts:read'],
  ['profile', 'contacts:read', 'contacts:write'],
];
const REDIRECTS = ['http://127.0.0.1:4001/callback', 'http://127.0.0.1:4002/callback'];
const WS_NAMES = ['personal', 'shared'] as const;

type Ix = 0 | 1;

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/** A (client, person, workspace): a consent when `scopes` is set. Index = client*4 + person*2 + ws. */
interface MGrant {
  client: Ix;
  person: Ix;
  ws: Ix;
  scopes: Scope[] | null;
}

interface MCode {
  id: number;
  grant: number;
  scopes: Scope[];
  issuedAt: number;
  exchanged: boolean;
  /** Unused when its grant was revoked. */
  burnt: boolean;
  /** Its consent was deleted: the server no longer knows it. */
  deleted: boolean;
}

interface MToken {
  id: number;
  kind: 'access' | 'refresh';
  grant: number;
  scopes: Scope[];
  issuedAt: number;
  /** A refresh token presented once (rotated). */
  used: boolean;
  revoked: boolean;
  deleted: boolean;
}

interface MPending {
  id: number;
  client: Ix;
  person: Ix;
  scopes: Scope[];
  createdAt: number;
  answered: boolean;
}

interface Model {
  now: number;
  grants: MGrant[];
  codes: MCode[];
  tokens: MToken[];
  pendings: MPending[];
}

const grantIx = (client: Ix, person: Ix, ws: Ix) => client * 4 + person * 2 + ws;
const freshModel = (now: number): Model => ({
  now,
  grants: ([0, 1] as Ix[]).flatMap((client) => ([0, 1] as Ix[]).flatMap((person) => ([0, 1] as Ix[]).map((ws) => ({ client, person, ws, scopes: null })))),
  codes: [],
  tokens: [],
  pendings: [],
});

const codeUsable = (m: Model, c: MCode) => !c.exchanged && !c.burnt && !c.deleted && m.now < c.issuedAt + CODE_MS;
const tokenAlive = (m: Model, t: MToken) =>
  !t.used && !t.revoked && !t.deleted && m.now < t.issuedAt + (t.kind === 'access' ? ACCESS_MS : REFRESH_MS);

/** The whole grant dies: its tokens, and its codes not yet exchanged. */
function revokeGrant(m: Model, grant: number): void {
  for (const t of m.tokens) if (t.grant === grant && !t.deleted) t.revoked = true;
  for (const c of m.codes) if (c.grant === grant && !c.deleted && !c.exchanged) c.burnt = true;
}

/** The consent is deleted: it and everything issued under it are gone. */
function dropGrant(m: Model, grant: number): void {
  for (const t of m.tokens) if (t.grant === grant) t.deleted = true;
  for (const c of m.codes) if (c.grant === grant) c.deleted = true;
  m.grants[grant]!.scopes = null;
}

/** A person approves `approved` for a grant: fewer than before revokes the old approval's tokens. */
function approve(m: Model, grant: number, approved: Scope[]): void {
  const g = m.grants[grant]!;
  if (g.scopes && g.scopes.some((s) => !approved.includes(s))) revokeGrant(m, grant);
  g.scopes = [...approved];
}

/** The consents of this client and person that already cover `scopes` (standing approval). */
const covering = (m: Model, client: Ix, person: Ix, scopes: Scope[]) =>
  m.grants
    .map((g, i) => ({ g, i }))
    .filter(({ g }) => g.client === client && g.person === person && g.scopes !== null && scopes.every((s) => g.scopes!.includes(s)))
    .map(({ i }) => i);

const sameScopes = (a: readonly string[], b: readonly string[]) => [...a].sort().join(' ') === [...b].sort().join(' ');
const grantLabel = (m: Model, grant: number) => {
  const g = m.grants[grant]!;
  return `${CLIENT_NAMES[g.client]}/p${g.person}/${WS_NAMES[g.ws]}`;
};
const codeLabel = (m: Model, c: MCode) => `code#${c.id}[${grantLabel(m, c.grant)}]`;
const tokenLabel = (m: Model, t: MToken) => `${t.kind}#${t.id}[${grantLabel(m, t.grant)}]`;

/** A non-empty subset of `of` chosen by the bits of `mask`; `strict` keeps at least one out. */
function subset(of: Scope[], mask: number, strict = false): Scope[] {
  let picked = of.filter((_, i) => (mask >> i) & 1);
  if (picked.length === 0) picked = [of[mask % of.length]!];
  if (strict && picked.length === of.length) picked = picked.filter((_, i) => i !== mask % of.length);
  return picked;
}

const pick = <T>(list: T[], n: number): T => list[n % list.length]!;

// ---------------------------------------------------------------------------------------------
// The real system
// ---------------------------------------------------------------------------------------------

class ManualClock implements Clock {
  ms = Date.parse('2031-03-01T09:00:00.000Z');
  now(): Date {
    return new Date(this.ms);
  }
}

interface Real {
  clients: OAuthClient[];
  persons: { userId: string; workspaces: [string, string] }[];
  codes: { code: string; verifier: string }[];
  tokens: string[];
  pendings: { requestId: string; verifier: string }[];
}

let testContext: TestContext;
let ctx: AppContext;
let deps: OAuthDeps;
const clock = new ManualClock();

const uow = () => unitOfWork(ctx.db);
const stores = () => baseStores(ctx.db);

function newVerifier(): { verifier: string; challenge: string } {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { verifier, challenge: base64url(sha256(new TextEncoder().encode(verifier))) };
}

/** The error code an OAuth failure carries, or 'ok'. */
async function outcome(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return 'ok';
  } catch (error) {
    if (error instanceof OAuthError) return error.code;
    throw error;
  }
}

async function authorize(r: Real, client: Ix, person: Ix, scopes: Scope[], challenge: string, prompt?: 'consent'): Promise<AuthorizeOutcome> {
  const params = {
    response_type: 'code',
    client_id: r.clients[client]!.id,
    redirect_uri: REDIRECTS[client],
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: scopes.join(' '),
    state: 'st-1',
    ...(prompt ? { prompt } : {}),
  };
  return uow().transaction((s) => startAuthorization(s, deps, params, r.persons[person]!.userId));
}

async function answer(r: Real, requestId: string, person: Ix, ws: Ix, scopes: Scope[]): Promise<URL> {
  const p = r.persons[person]!;
  const location = await uow().transaction((s) => decide(s, deps, { requestId, userId: p.userId, approve: true, workspaceId: p.workspaces[ws], scopes }));
  return new URL(location);
}

/** The redirect back to the client carries a code, the state and the issuer (4.1). */
function codeOf(location: URL, client: Ix): string {
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECTS[client]!);
  expect(location.searchParams.get('error')).toBeNull();
  expect(location.searchParams.get('state')).toBe('st-1');
  expect(location.searchParams.get('iss')).toBe(ISSUER);
  const code = location.searchParams.get('code');
  expect(code).toBeTruthy();
  return code!;
}

function addCode(m: Model, r: Real, grant: number, scopes: Scope[], code: string, verifier: string): MCode {
  const c: MCode = { id: m.codes.length, grant, scopes: [...scopes], issuedAt: m.now, exchanged: false, burnt: false, deleted: false };
  m.codes.push(c);
  r.codes.push({ code, verifier });
  return c;
}

/** A token response: the pair the model adds, with the scopes it expects. */
function addPair(m: Model, r: Real, grant: number, scopes: Scope[], response: TokenResponse): void {
  expect(response.token_type).toBe('Bearer');
  expect(response.expires_in).toBe(3600);
  expect(sameScopes(response.scope.split(' '), scopes)).toBe(true);
  expect(response.refresh_token).toBeTruthy();
  for (const [kind, secret] of [['access', response.access_token], ['refresh', response.refresh_token!]] as const) {
    m.tokens.push({ id: m.tokens.length, kind, grant, scopes: [...scopes], issuedAt: m.now, used: false, revoked: false, deleted: false });
    r.tokens.push(secret);
  }
}

const exchange = (r: Real, client: Ix, codeId: number) =>
  grantTokens(uow(), deps, r.clients[client]!, {
    grant_type: 'authorization_code',
    code: r.codes[codeId]!.code,
    redirect_uri: REDIRECTS[client],
    code_verifier: r.codes[codeId]!.verifier,
  });

const refresh = (r: Real, client: Ix, tokenId: number) =>
  grantTokens(uow(), deps, r.clients[client]!, { grant_type: 'refresh_token', refresh_token: r.tokens[tokenId]! });

const clientOf = (m: Model, x: { grant: number }) => m.grants[x.grant]!.client;

/**
 * After every step: each token is alive exactly when the model says so (and a live access token
 * acts as the model's person, workspace and scopes); each code is exchangeable exactly when the
 * model says so; each consent holds the model's scopes.
 */
async function agrees(m: Model, r: Real): Promise<void> {
  expect(clock.now().getTime()).toBe(m.now);
  const s = stores();
  const tokenCheck = async (t: MToken): Promise<string | null> => {
    const alive = tokenAlive(m, t);
    const g = m.grants[t.grant]!;
    let works: boolean;
    if (t.kind === 'access') {
      try {
        const actor = await authenticateBearer(s, { clock }, { token: r.tokens[t.id], requestUrl: API_URL, accountId: undefined });
        works = true;
        const p = r.persons[g.person]!;
        if (actor.userId !== p.userId || actor.workspaceId !== p.workspaces[g.ws] || !sameScopes(actor.scopes ?? [], t.scopes)) {
          return `${tokenLabel(m, t)} acts as the wrong person, workspace or scopes`;
        }
      } catch (error) {
        if (!(error instanceof OAuthError) || error.code !== 'invalid_token') throw error;
        works = false;
      }
    } else {
      const answer = await introspectToken(s, deps, r.clients[g.client]!, { token: r.tokens[t.id] });
      works = answer.active === true;
      if (works && !sameScopes(String(answer.scope).split(' '), t.scopes)) return `${tokenLabel(m, t)} has scope "${String(answer.scope)}"`;
    }
    return works === alive ? null : `${tokenLabel(m, t)}: model says ${alive ? 'alive' : 'dead'}, system says ${works ? 'alive' : 'dead'}`;
  };
  const codeCheck = async (c: MCode): Promise<string | null> => {
    const stored = await s.oauth.findCode(hashSecret(r.codes[c.id]!.code));
    if (c.deleted && stored) return `${codeLabel(m, c)} outlived its deleted consent`;
    const usable = stored !== undefined && stored.usedAt === null && stored.expiresAt.getTime() > m.now;
    const expected = codeUsable(m, c);
    return usable === expected ? null : `${codeLabel(m, c)}: model says ${expected ? 'usable' : 'unusable'}, system says ${usable ? 'usable' : 'unusable'}`;
  };
  const consentCheck = async (client: Ix, person: Ix): Promise<(string | null)[]> => {
    const p = r.persons[person]!;
    const held = await s.oauth.consentsOf(r.clients[client]!.id, p.userId);
    return ([0, 1] as Ix[]).map((ws) => {
      const i = grantIx(client, person, ws);
      const expected = m.grants[i]!.scopes;
      const found = held.find((c) => c.workspaceId === p.workspaces[ws])?.scopes ?? null;
      const same = found === null || expected === null ? found === expected : sameScopes(found, expected);
      return same ? null : `consent ${grantLabel(m, i)}: model ${JSON.stringify(expected)}, system ${JSON.stringify(found)}`;
    });
  };
  const wrong = (
    await Promise.all([
      ...m.tokens.map(tokenCheck),
      ...m.codes.map(codeCheck),
      ...[consentCheck(0, 0), consentCheck(0, 1), consentCheck(1, 0), consentCheck(1, 1)],
    ])
  )
    .flat()
    .filter((x): x is string => x !== null);
  expect(wrong).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<Model, Real>;

/**
 * Commands record what they picked (for a readable counterexample), so each run gets its own
 * copies: fast-check clones a command that has a clone method before running it.
 */
abstract class Step implements Cmd {
  protected seen = '';
  abstract check(m: Readonly<Model>): boolean;
  abstract run(m: Model, r: Real): Promise<void>;
  abstract toString(): string;
  [fc.cloneMethod](): this {
    return Object.assign(Object.create(Object.getPrototypeOf(this)) as this, this, { seen: '' });
  }
}

/**
 * A step on the n-th of the model's artefacts (codes, tokens, grants, open requests) that are in
 * the state it needs: it can run only while there is one, and its name shows what it picked.
 */
abstract class StepOnArtefact<T> extends Step {
  abstract readonly title: string;
  constructor(readonly n: number) {
    super();
  }
  protected abstract candidates(m: Readonly<Model>): T[];
  check(m: Readonly<Model>) {
    return this.candidates(m).length > 0;
  }
  protected picked(m: Readonly<Model>): T {
    return pick(this.candidates(m), this.n);
  }
  toString() {
    return `${this.title}(${this.seen || `#${this.n}`})`;
  }
}

/** A code or a refresh token, as a step presents it. */
type Artefact = { code: MCode } | { token: MToken };
/** A grant with its place in the model's list. */
type GrantAt = { g: MGrant; i: number };

/** Authorize then approve (or, with a standing approval that covers the request, straight back with a code). */
class IssueCode extends Step {
  constructor(
    readonly client: Ix,
    readonly person: Ix,
    readonly ws: Ix,
    readonly askMask: number,
    readonly keepMask: number,
  ) {
    super();
  }
  check() {
    return true;
  }
  async run(m: Model, r: Real) {
    const asked = subset(CLIENT_SCOPES[this.client]!, this.askMask);
    const approved = subset(asked, this.keepMask);
    const standing = covering(m, this.client, this.person, asked);
    const { verifier, challenge } = newVerifier();
    const started = await authorize(r, this.client, this.person, asked, challenge);
    if (standing.length === 1) {
      // One earlier approval covers the request: no screen, a code under that approval.
      expect(started.next).toBe('redirect');
      const code = codeOf(new URL((started as { location: string }).location), this.client);
      const c = addCode(m, r, standing[0]!, asked, code, verifier);
      this.seen = `standing → ${codeLabel(m, c)} [${asked.join(' ')}]`;
    } else {
      expect(started.next).toBe('consent');
      const location = await answer(r, (started as { requestId: string }).requestId, this.person, this.ws, approved);
      const grant = grantIx(this.client, this.person, this.ws);
      approve(m, grant, approved);
      const c = addCode(m, r, grant, approved, codeOf(location, this.client), verifier);
      this.seen = `asked [${asked.join(' ')}], approved [${approved.join(' ')}] → ${codeLabel(m, c)}`;
    }
    await agrees(m, r);
  }
  toString() {
    return `issueCode(${CLIENT_NAMES[this.client]}, p${this.person}, ${WS_NAMES[this.ws]}: ${this.seen})`;
  }
}

/** prompt=consent on a standing approval, then approving fewer scopes than it holds. */
class ReConsentFewer extends StepOnArtefact<GrantAt> {
  readonly title = 'reConsentFewer';
  constructor(
    n: number,
    readonly keepMask: number,
  ) {
    super(n);
  }
  protected candidates(m: Readonly<Model>) {
    return m.grants.map((g, i) => ({ g, i })).filter(({ g }) => g.scopes !== null && g.scopes.length >= 2);
  }
  async run(m: Model, r: Real) {
    const { g, i } = this.picked(m);
    const asked = [...g.scopes!];
    const fewer = subset(asked, this.keepMask, true);
    const { verifier, challenge } = newVerifier();
    const started = await authorize(r, g.client, g.person, asked, challenge, 'consent');
    expect(started.next).toBe('consent');
    const location = await answer(r, (started as { requestId: string }).requestId, g.person, g.ws, fewer);
    approve(m, i, fewer);
    const c = addCode(m, r, i, fewer, codeOf(location, g.client), verifier);
    this.seen = `${grantLabel(m, i)} [${asked.join(' ')}] → [${fewer.join(' ')}], ${codeLabel(m, c)}`;
    await agrees(m, r);
  }
}

/** An authorization request the person leaves open (prompt=consent always shows the screen). */
class StartPending extends Step {
  constructor(
    readonly client: Ix,
    readonly person: Ix,
    readonly askMask: number,
  ) {
    super();
  }
  check() {
    return true;
  }
  async run(m: Model, r: Real) {
    const asked = subset(CLIENT_SCOPES[this.client]!, this.askMask);
    const { verifier, challenge } = newVerifier();
    const started = await authorize(r, this.client, this.person, asked, challenge, 'consent');
    expect(started.next).toBe('consent');
    m.pendings.push({ id: m.pendings.length, client: this.client, person: this.person, scopes: asked, createdAt: m.now, answered: false });
    r.pendings.push({ requestId: (started as { requestId: string }).requestId, verifier });
    await agrees(m, r);
  }
  toString() {
    return `startPending(${CLIENT_NAMES[this.client]}, p${this.person}, [${subset(CLIENT_SCOPES[this.client]!, this.askMask).join(' ')}])`;
  }
}

/** The person answers an open request: within 10 minutes a code, after that invalid_request (the request expired). */
class DecidePending extends StepOnArtefact<MPending> {
  readonly title = 'decidePending';
  constructor(
    n: number,
    readonly ws: Ix,
    readonly keepMask: number,
  ) {
    super(n);
  }
  protected candidates(m: Readonly<Model>) {
    return m.pendings.filter((p) => !p.answered);
  }
  async run(m: Model, r: Real) {
    const p = this.picked(m);
    p.answered = true;
    const approved = subset(p.scopes, this.keepMask);
    const location = await answer(r, r.pendings[p.id]!.requestId, p.person, this.ws, approved);
    if (m.now >= p.createdAt + PENDING_MS) {
      // Issue 20 §16: an expired request is not the person refusing (access_denied).
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('error_description')).toContain('expired');
      expect(location.searchParams.get('code')).toBeNull();
      this.seen = `pending#${p.id} after ${m.now - p.createdAt} ms → invalid_request (expired)`;
    } else {
      const grant = grantIx(p.client, p.person, this.ws);
      approve(m, grant, approved);
      const c = addCode(m, r, grant, approved, codeOf(location, p.client), r.pendings[p.id]!.verifier);
      this.seen = `pending#${p.id} → ${WS_NAMES[this.ws]} [${approved.join(' ')}], ${codeLabel(m, c)}`;
    }
    await agrees(m, r);
  }
}

/** First use of a live code: an access and a refresh token. */
class ExchangeCode extends StepOnArtefact<MCode> {
  readonly title = 'exchangeCode';
  protected candidates(m: Readonly<Model>) {
    return m.codes.filter((c) => codeUsable(m as Model, c));
  }
  async run(m: Model, r: Real) {
    const c = this.picked(m);
    this.seen = codeLabel(m, c);
    const response = await exchange(r, clientOf(m, c), c.id);
    c.exchanged = true;
    addPair(m, r, c.grant, c.scopes, response);
    await agrees(m, r);
  }
}

/**
 * A live code with the wrong PKCE verifier or redirect_uri: invalid_grant, no tokens, and the code
 * is spent (it cannot be retried with another guess); presenting it again is a replay.
 */
class ExchangeWrongProof extends StepOnArtefact<MCode> {
  readonly title = 'exchangeWrongProof';
  constructor(
    n: number,
    readonly wrong: 'code_verifier' | 'redirect_uri',
  ) {
    super(n);
  }
  protected candidates(m: Readonly<Model>) {
    return m.codes.filter((c) => codeUsable(m as Model, c));
  }
  async run(m: Model, r: Real) {
    const c = this.picked(m);
    this.seen = `${codeLabel(m, c)}, wrong ${this.wrong}`;
    const client = clientOf(m, c);
    const params = {
      grant_type: 'authorization_code',
      code: r.codes[c.id]!.code,
      redirect_uri: this.wrong === 'redirect_uri' ? `${REDIRECTS[client]}/other` : REDIRECTS[client],
      code_verifier: this.wrong === 'code_verifier' ? newVerifier().verifier : r.codes[c.id]!.verifier,
    };
    expect(await outcome(grantTokens(uow(), deps, r.clients[client]!, params))).toBe('invalid_grant');
    c.exchanged = true;
    await agrees(m, r);
  }
}

/** A code presented again (or one burnt by a revocation): invalid_grant, and the grant dies. */
class ReplayCode extends StepOnArtefact<MCode> {
  readonly title = 'replayCode';
  protected candidates(m: Readonly<Model>) {
    return m.codes.filter((c) => !c.deleted && (c.exchanged || c.burnt));
  }
  async run(m: Model, r: Real) {
    const c = this.picked(m);
    this.seen = `${codeLabel(m, c)}${c.exchanged ? '' : ' (burnt)'}`;
    expect(await outcome(exchange(r, clientOf(m, c), c.id))).toBe('invalid_grant');
    revokeGrant(m, c.grant);
    await agrees(m, r);
  }
}

/** An unused code after its 60 seconds: invalid_grant, nothing else dies. */
class ExchangeExpiredCode extends StepOnArtefact<MCode> {
  readonly title = 'exchangeExpiredCode';
  protected candidates(m: Readonly<Model>) {
    return m.codes.filter((c) => !c.deleted && !c.exchanged && !c.burnt && m.now >= c.issuedAt + CODE_MS);
  }
  async run(m: Model, r: Real) {
    const c = this.picked(m);
    this.seen = `${codeLabel(m, c)} aged ${m.now - c.issuedAt} ms`;
    expect(await outcome(exchange(r, clientOf(m, c), c.id))).toBe('invalid_grant');
    await agrees(m, r);
  }
}

/** A live refresh token: it dies, a new pair is issued with the same scopes. */
class Refresh extends StepOnArtefact<MToken> {
  readonly title = 'refresh';
  protected candidates(m: Readonly<Model>) {
    return m.tokens.filter((t) => t.kind === 'refresh' && tokenAlive(m as Model, t));
  }
  async run(m: Model, r: Real) {
    const t = this.picked(m);
    this.seen = tokenLabel(m, t);
    const response = await refresh(r, clientOf(m, t), t.id);
    t.used = true;
    addPair(m, r, t.grant, t.scopes, response);
    await agrees(m, r);
  }
}

/**
 * The same live code sent twice at once (a double submit, or a thief racing the app): exactly one
 * exchange wins, the other is a replay, so the grant dies, the winner's fresh pair included.
 */
class ConcurrentExchange extends StepOnArtefact<MCode> {
  readonly title = 'concurrentExchange';
  protected candidates(m: Readonly<Model>) {
    return m.codes.filter((c) => codeUsable(m as Model, c));
  }
  async run(m: Model, r: Real) {
    const c = this.picked(m);
    this.seen = codeLabel(m, c);
    const winner = await oneOfTwoWins(() => exchange(r, clientOf(m, c), c.id));
    c.exchanged = true;
    addPair(m, r, c.grant, c.scopes, winner);
    revokeGrant(m, c.grant);
    await agrees(m, r);
  }
}

/** The same live refresh token sent twice at once: one rotation wins, the other is a replay that kills the grant. */
class ConcurrentRefresh extends StepOnArtefact<MToken> {
  readonly title = 'concurrentRefresh';
  protected candidates(m: Readonly<Model>) {
    return m.tokens.filter((t) => t.kind === 'refresh' && tokenAlive(m as Model, t));
  }
  async run(m: Model, r: Real) {
    const t = this.picked(m);
    this.seen = tokenLabel(m, t);
    const winner = await oneOfTwoWins(() => refresh(r, clientOf(m, t), t.id));
    t.used = true;
    addPair(m, r, t.grant, t.scopes, winner);
    revokeGrant(m, t.grant);
    await agrees(m, r);
  }
}

/** The same request sent twice at once: exactly one wins, the other is refused as invalid_grant; answers the winner's pair. */
async function oneOfTwoWins(send: () => Promise<TokenResponse>): Promise<TokenResponse> {
  const results = await Promise.allSettled([send(), send()]);
  const won = results.filter((x) => x.status === 'fulfilled');
  expect(won.length).toBe(1);
  expect(await outcome(Promise.reject(results.find((x) => x.status === 'rejected')!.reason))).toBe('invalid_grant');
  return (won[0] as PromiseFulfilledResult<TokenResponse>).value;
}

/** A rotated refresh token presented again: invalid_grant, and the grant dies. */
class ReplayRefresh extends StepOnArtefact<MToken> {
  readonly title = 'replayRefresh';
  protected candidates(m: Readonly<Model>) {
    return m.tokens.filter((t) => t.kind === 'refresh' && t.used && !t.deleted);
  }
  async run(m: Model, r: Real) {
    const t = this.picked(m);
    this.seen = `${tokenLabel(m, t)}${t.revoked ? ' (rotated, then revoked with its grant)' : ''}`;
    expect(await outcome(refresh(r, clientOf(m, t), t.id))).toBe('invalid_grant');
    revokeGrant(m, t.grant);
    await agrees(m, r);
  }
}

/** A refresh token never used but expired or revoked: invalid_grant, nothing else dies. */
class RefreshDeadToken extends StepOnArtefact<MToken> {
  readonly title = 'refreshDeadToken';
  protected candidates(m: Readonly<Model>) {
    return m.tokens.filter((t) => t.kind === 'refresh' && !t.used && !t.deleted && !tokenAlive(m as Model, t));
  }
  async run(m: Model, r: Real) {
    const t = this.picked(m);
    this.seen = `${tokenLabel(m, t)} ${t.revoked ? 'revoked' : `aged ${m.now - t.issuedAt} ms`}`;
    expect(await outcome(refresh(r, clientOf(m, t), t.id))).toBe('invalid_grant');
    await agrees(m, r);
  }
}

/** A code or refresh token of a deleted consent: unknown, invalid_grant, nothing dies. */
class PresentForgotten extends StepOnArtefact<Artefact> {
  readonly title = 'presentForgotten';
  protected candidates(m: Readonly<Model>) {
    return [
    ...m.codes.filter((c) => c.deleted).map((c) => ({ code: c })),
    ...m.tokens.filter((t) => t.deleted && t.kind === 'refresh').map((t) => ({ token: t })),
    ];
  }
  async run(m: Model, r: Real) {
    const x = this.picked(m);
    if ('code' in x) {
      this.seen = codeLabel(m, x.code);
      expect(await outcome(exchange(r, clientOf(m, x.code), x.code.id))).toBe('invalid_grant');
    } else {
      this.seen = tokenLabel(m, x.token);
      expect(await outcome(refresh(r, clientOf(m, x.token), x.token.id))).toBe('invalid_grant');
    }
    await agrees(m, r);
  }
}

/** POST /v3/oauth/revoke by the owning client: an access token dies alone; a refresh token takes the grant. */
class Revoke extends StepOnArtefact<MToken> {
  readonly title = 'revoke';
  protected candidates(m: Readonly<Model>) {
    return m.tokens;
  }
  async run(m: Model, r: Real) {
    const t = this.picked(m);
    this.seen = tokenLabel(m, t);
    await uow().transaction((s) => revokeToken(s, deps, r.clients[clientOf(m, t)]!, { token: r.tokens[t.id] }));
    if (!t.deleted) {
      if (t.kind === 'access') t.revoked = true;
      else revokeGrant(m, t.grant);
    }
    await agrees(m, r);
  }
}

/** The other client presents an artefact: invalid_grant or a silent no-op; nothing dies, nothing is used up. */
class CrossClient extends StepOnArtefact<Artefact> {
  readonly title = 'crossClient';
  constructor(
    n: number,
    readonly revoke: boolean,
  ) {
    super(n);
  }
  protected candidates(m: Readonly<Model>) {
    return [...m.codes.map((c) => ({ code: c })), ...m.tokens.map((t) => ({ token: t }))];
  }
  async run(m: Model, r: Real) {
    const x = this.picked(m);
    if ('code' in x) {
      const other = (1 - clientOf(m, x.code)) as Ix;
      this.seen = `${CLIENT_NAMES[other]} exchanges ${codeLabel(m, x.code)}`;
      const code = r.codes[x.code.id]!;
      const result = grantTokens(uow(), deps, r.clients[other]!, { grant_type: 'authorization_code', code: code.code, redirect_uri: REDIRECTS[other], code_verifier: code.verifier });
      expect(await outcome(result)).toBe('invalid_grant');
    } else {
      const other = (1 - clientOf(m, x.token)) as Ix;
      const secret = r.tokens[x.token.id]!;
      if (this.revoke || x.token.kind === 'access') {
        this.seen = `${CLIENT_NAMES[other]} revokes ${tokenLabel(m, x.token)}`;
        await uow().transaction((s) => revokeToken(s, deps, r.clients[other]!, { token: secret }));
      } else {
        this.seen = `${CLIENT_NAMES[other]} refreshes with ${tokenLabel(m, x.token)}`;
        expect(await outcome(grantTokens(uow(), deps, r.clients[other]!, { grant_type: 'refresh_token', refresh_token: secret }))).toBe('invalid_grant');
      }
    }
    await agrees(m, r);
  }
}

/** DELETE /v3/oauth/consents/{id}: the app is cut off from that workspace. */
class DeleteConsent extends StepOnArtefact<GrantAt> {
  readonly title = 'deleteConsent';
  protected candidates(m: Readonly<Model>) {
    return m.grants.map((g, i) => ({ g, i })).filter(({ g }) => g.scopes !== null);
  }
  async run(m: Model, r: Real) {
    const { g, i } = this.picked(m);
    this.seen = grantLabel(m, i);
    const p = r.persons[g.person]!;
    const workspaceId = p.workspaces[g.ws];
    await uow().transaction(async (s) => {
      const consent = await s.oauth.findConsent(r.clients[g.client]!.id, p.userId, workspaceId);
      expect(consent).toBeDefined();
      await deleteConsent(s, { userId: p.userId, workspaceId, roles: ['OWNER'] }, consent!.id);
    });
    dropGrant(m, i);
    await agrees(m, r);
  }
}

class AdvanceClock extends Step {
  constructor(readonly ms: number) {
    super();
  }
  check() {
    return true;
  }
  async run(m: Model, _r: Real) {
    m.now += this.ms;
    clock.ms += this.ms;
    await agrees(m, _r);
  }
  toString() {
    return `advanceClock(${this.ms >= DAY ? `${(this.ms / DAY).toFixed(3)} d` : this.ms >= HOUR ? `${(this.ms / HOUR).toFixed(3)} h` : `${this.ms / SECOND} s`} = ${this.ms} ms)`;
  }
}

const ix = fc.constantFrom<Ix>(0, 1);
const mask = fc.nat({ max: 15 });
const n = fc.nat({ max: 50 });
/** Steps around every lifetime: the 60 s code, 10 min pending, 1 h access, 30 d refresh, and exact edges. */
const step = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: SECOND, max: 90 * SECOND }) },
  { weight: 2, arbitrary: fc.constantFrom(CODE_MS - 1, CODE_MS, PENDING_MS - 1, PENDING_MS, ACCESS_MS - 1, ACCESS_MS, REFRESH_MS - 1, REFRESH_MS) },
  { weight: 3, arbitrary: fc.integer({ min: MINUTE, max: 4 * HOUR }) },
  { weight: 1, arbitrary: fc.integer({ min: 29 * DAY, max: 31 * DAY }) },
);

/** fc.commands has no weights: an arbitrary listed `times` times is picked that much more often. */
const times = <T>(count: number, arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T>[] => Array.from({ length: count }, () => arbitrary);

const commands: fc.Arbitrary<Cmd>[] = [
  ...times(4, fc.tuple(ix, ix, ix, mask, mask).map(([c, p, w, a, k]) => new IssueCode(c, p, w, a, k))),
  ...times(1, fc.tuple(n, mask).map(([i, k]) => new ReConsentFewer(i, k))),
  ...times(1, fc.tuple(ix, ix, mask).map(([c, p, a]) => new StartPending(c, p, a))),
  ...times(1, fc.tuple(n, ix, mask).map(([i, w, k]) => new DecidePending(i, w, k))),
  ...times(5, n.map((i) => new ExchangeCode(i))),
  ...times(1, n.map((i) => new ReplayCode(i))),
  ...times(1, n.map((i) => new ExchangeExpiredCode(i))),
  ...times(1, n.map((i) => new ConcurrentExchange(i))),
  ...times(1, fc.tuple(n, fc.constantFrom('code_verifier' as const, 'redirect_uri' as const)).map(([i, w]) => new ExchangeWrongProof(i, w))),
  ...times(4, n.map((i) => new Refresh(i))),
  ...times(2, n.map((i) => new ReplayRefresh(i))),
  ...times(1, n.map((i) => new ConcurrentRefresh(i))),
  ...times(1, n.map((i) => new RefreshDeadToken(i))),
  ...times(1, n.map((i) => new PresentForgotten(i))),
  ...times(2, n.map((i) => new Revoke(i))),
  ...times(1, fc.tuple(n, fc.boolean()).map(([i, revoke]) => new CrossClient(i, revoke))),
  ...times(1, n.map((i) => new DeleteConsent(i))),
  ...times(4, step.map((ms) => new AdvanceClock(ms))),
];

// ---------------------------------------------------------------------------------------------
// Setup: one database; every run gets its own two clients and two people, so runs are independent.
// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  testContext = await openTestContext({ clock });
  ctx = testContext.ctx;
  deps = { clock, ids: ctx.ids, random: ctx.random, issuer: ISSUER, dynamicRegistration: true };
}, 60_000);

afterAll(async () => {
  await testContext?.close();
}, 60_000);

async function freshReal(): Promise<Real> {
  const run = crypto.randomUUID().slice(0, 8);
  const clients: OAuthClient[] = [];
  for (const c of [0, 1] as const) {
    const info = await uow().transaction((s) =>
      registerClient(s, deps, {
        redirect_uris: [REDIRECTS[c]],
        client_name: `Model app ${CLIENT_NAMES[c]}`,
        scope: CLIENT_SCOPES[c]!.join(' '),
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      }),
    );
    clients.push((await stores().oauth.findClient(info.client_id))!);
  }
  const persons: Real['persons'] = [];
  for (const p of [0, 1] as const) {
    const owner = await uow().transaction((s) => bootstrapOwner(s, ctx, { email: `artefacts-${run}-p${p}@example.com`, workspace: `Shared ${run} ${p}`, plan: 'FREE' }));
    const personal = (await stores().identity.listWorkspacesOf(owner.userId)).find((w) => w.isPersonal)!;
    persons.push({ userId: owner.userId, workspaces: [personal.id, owner.workspaceId] });
  }
  return { clients, persons, codes: [], tokens: [], pendings: [] };
}

describe('OAuth artefacts (spec 3.3), model-based on the real store', () => {
  test('the transition tables and lifetimes are those of spec 3.3 and 8', () => {
    expect(CODE_TTL_SECONDS * SECOND).toBe(CODE_MS);
    expect(ACCESS_TOKEN_TTL_SECONDS * SECOND).toBe(ACCESS_MS);
    expect(REFRESH_TOKEN_TTL_SECONDS * SECOND).toBe(REFRESH_MS);
    expect(PENDING_REQUEST_TTL_SECONDS * SECOND).toBe(PENDING_MS);
    // A code is exchangeable once; nothing brings a used one back.
    expect(CODE_TRANSITIONS).toEqual({ ISSUED: { exchange: 'EXCHANGED' }, EXCHANGED: {} });
    // A live token rotates (refresh) or is revoked; a dead one never comes back to life.
    expect(TOKEN_TRANSITIONS.ACTIVE).toEqual({ rotate: 'ROTATED', revoke: 'REVOKED' });
    expect(TOKEN_TRANSITIONS.REVOKED).toEqual({});
    for (const exits of Object.values(TOKEN_TRANSITIONS)) expect(Object.values(exits)).not.toContain('ACTIVE');
    expect(TOKEN_TRANSITIONS.ROTATED.rotate).toBeUndefined();
    expect(PENDING_TRANSITIONS).toEqual({ PENDING: { decide: 'DECIDED', expire: 'EXPIRED' }, DECIDED: {}, EXPIRED: {} });
  });

  test('random issue / exchange / refresh / replay / revoke / re-consent / clock steps: every token is alive exactly when the model says', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 60, size: 'max' }), async (cmds) => {
        const real = await freshReal();
        await fc.asyncModelRun(() => ({ model: freshModel(clock.ms), real }), cmds);
      }),
      { numRuns: 100 },
    );
  }, 120_000);

  /**
   * Spec 3.3: a refresh token "presented a second time" revokes the entire grant. Still so when
   * the grant was revoked in between (here by a re-approval with fewer scopes) and the app has
   * since been authorized again under the same consent: the replay must take the new tokens too.
   */
  test('a rotated refresh token replayed after its grant was revoked still revokes the grant', async () => {
    const real = await freshReal();
    await fc.asyncModelRun(
      () => ({ model: freshModel(clock.ms), real }),
      [
        new IssueCode(0, 0, 1, 0b0001, 0b1), // A, p0, shared: [profile] → code#0
        new ExchangeCode(0), // → access#0, refresh#1
        new Refresh(0), // refresh#1 rotated → access#2, refresh#3
        new IssueCode(0, 0, 1, 0b0010, 0b1), // re-approval with [messages:read] only: the grant is revoked → code#1
        new ExchangeCode(0), // code#1 → access#4, refresh#5
        new ReplayRefresh(0), // refresh#1 again: invalid_grant, and access#4 and refresh#5 must die
      ],
    );
  }, 60_000);
});
