import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import type { Actor } from '../../core/identity/identity.ts';
import type { Role } from '../../core/identity/roles.ts';
import { removeMember } from '../../core/identity/members.ts';
import { signUp } from '../../core/identity/workspaces.ts';
import { DEFAULT_PLANS } from '../../core/plans/plans.ts';
import { DomainError, type DomainErrorKind } from '../../core/shared/errors.ts';
import type { Clock, IdGen, Random } from '../../core/shared/ports.ts';
import {
  authenticateApiKey,
  createApiToken,
  deleteApiToken,
  rotateApiToken,
  type ApiTokenView,
} from '../../core/tokens/api-tokens.ts';
import { base64url, constantTimeEqual, hashSecret, newApiTokenSecret, secretMatches } from '../../core/tokens/secret.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import type { Database } from '../../adapters/postgres/schema.ts';
import { onPostgres, openTestDatabase, type TestDatabase } from '../support/database.ts';
import { expectDomainError } from '../support/expect-domain-error.ts';

const NOW = new Date('2025-06-01T08:00:00.000Z');
const clock: Clock = { now: () => new Date(NOW.getTime()) };
const ids: IdGen = { next: () => crypto.randomUUID() };
const osRandom: Random = { bytes: (length) => crypto.getRandomValues(new Uint8Array(length)) };
const deps = { clock, ids, random: osRandom, plans: DEFAULT_PLANS };

const SECRET_SHAPE = /^sk_live_[A-Za-z0-9_-]{43}$/;

/** A Random that hands out the given bytes and records what was asked of it. */
function scriptedRandom(bytes: Uint8Array): Random & { asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    bytes(length) {
      asked.push(length);
      if (length !== bytes.length) throw new Error(`asked for ${length} bytes, scripted ${bytes.length}`);
      return bytes.slice();
    },
  };
}

/** Any UTF-16 code unit, with ASCII and (lone) surrogates drawn often: a JS string may hold anything. */
const codeUnit = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.integer({ min: 0, max: 0xffff }))
  .map((c) => String.fromCharCode(c));
const codeUnitString = fc.string({ unit: codeUnit, maxLength: 12 });

// ---------------------------------------------------------------------------------------------
// Plain properties of core/tokens/secret.ts.
// ---------------------------------------------------------------------------------------------

describe('API token secrets (core/tokens/secret.ts)', () => {
  test('newApiTokenSecret: sk_live_ + 43 base64url chars carrying all 32 random bytes (256 bits)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const random = scriptedRandom(bytes);
        const secret = newApiTokenSecret(random);
        expect(random.asked).toEqual([32]);
        expect(secret).toMatch(SECRET_SHAPE);
        expect(secret.startsWith('sk_live_')).toBe(true);
        const suffix = secret.slice('sk_live_'.length);
        expect(suffix).toHaveLength(43);
        // The encoding is lossless, so every one of the 256 random bits reaches the secret.
        expect([...Buffer.from(suffix, 'base64url')]).toEqual([...bytes]);
      }),
      { numRuns: 500 },
    );
  });

  test('different random bytes give different secrets', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (a, b) => {
        const same = a.every((byte, i) => byte === b[i]);
        expect(newApiTokenSecret(scriptedRandom(a)) === newApiTokenSecret(scriptedRandom(b))).toBe(same);
      }),
    );
  });

  test('base64url agrees with Node’s base64url encoder for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        expect(base64url(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
      }),
      { numRuns: 500 },
    );
  });

  test('hashSecret is deterministic, 64 hex chars, never the secret itself, and differs for different secrets', () => {
    // Well-formed text: secrets are ASCII, and TextEncoder maps lone surrogates to U+FFFD.
    const text = fc.string({ unit: 'grapheme', maxLength: 60 });
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(hashSecret(a)).toBe(hashSecret(a));
        expect(hashSecret(a)).toMatch(/^[0-9a-f]{64}$/);
        expect(hashSecret(a)).not.toBe(a);
        expect(hashSecret(a) === hashSecret(b)).toBe(a === b);
        expect(secretMatches(a, hashSecret(a))).toBe(true);
        expect(secretMatches(b, hashSecret(a))).toBe(a === b);
      }),
      { numRuns: 500 },
    );
    // A known answer, so a different digest cannot pass as "deterministic".
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  test('hashSecret separates real secrets differing in one character', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.nat({ max: 50 }), (bytes, at) => {
        const secret = newApiTokenSecret(scriptedRandom(bytes));
        const i = at % secret.length;
        const other = secret.slice(0, i) + (secret[i] === 'A' ? 'B' : 'A') + secret.slice(i + 1);
        expect(hashSecret(other)).not.toBe(hashSecret(secret));
        expect(secretMatches(other, hashSecret(secret))).toBe(false);
      }),
    );
  });

  test('constantTimeEqual agrees with === for any strings', () => {
    const related = codeUnitString.chain((a) =>
      fc.oneof(
        fc.constant([a, a] as const),
        codeUnitString.map((b) => [a, b] as const),
        codeUnitString.map((suffix) => [a, a + suffix] as const),
        fc.tuple(fc.nat(), codeUnit).map(([i, c]) => {
          const at = a.length === 0 ? 0 : i % a.length;
          return [a, a.slice(0, at) + c + a.slice(at + 1)] as const;
        }),
      ),
    );
    fc.assert(
      fc.property(related, ([a, b]) => {
        expect(constantTimeEqual(a, b)).toBe(a === b);
        expect(constantTimeEqual(b, a)).toBe(a === b);
      }),
      { numRuns: 2000 },
    );
    expect(constantTimeEqual('\uD800', '\uDBFF')).toBe(false);
    expect(constantTimeEqual('a', 'a\u0000')).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Model-based: create, rotate, delete and authenticate against the real stores.
// ---------------------------------------------------------------------------------------------

type MemberKey = 'owner' | 'admin' | 'manager';
const MEMBER_ROLES: Record<MemberKey, Role[]> = { owner: ['OWNER'], admin: ['ADMIN'], manager: ['MANAGER'] };

interface ModelToken {
  id: string;
  creator: MemberKey;
  live: boolean;
  current: string;
}

interface TokenModel {
  /** Members still in the workspace (the Owner never leaves). */
  present: Set<MemberKey>;
  tokens: ModelToken[];
  /** Every secret ever handed out, with the token it was issued for. */
  secrets: Array<{ secret: string; token: ModelToken }>;
}

interface TokenSystem {
  db: Kysely<Database>;
  workspaceId: string;
  /** The admin's own personal workspace (where they are Owner; the others are not members). */
  adminPersonalWorkspaceId: string;
  members: Record<MemberKey, Actor>;
}

const isCurrent = (entry: { secret: string; token: ModelToken }) => entry.token.live && entry.token.current === entry.secret;

/** What managing (rotate, delete) someone's token answers, from spec 2.14 and the outrank rule. */
function expectedManageOutcome(actor: MemberKey, token: ModelToken): DomainErrorKind | 'ok' {
  if (actor === 'manager') return 'forbidden'; // API tokens: Owner and Admin only
  if (!token.live) return 'not_found';
  if (actor === 'admin' && token.creator === 'owner') return 'forbidden'; // the Owner outranks an Admin
  return 'ok';
}

async function inTransaction<T>(system: TokenSystem, work: (stores: ReturnType<typeof baseStores>) => Promise<T>): Promise<T> {
  return system.db.transaction().execute((trx) => work(baseStores(trx)));
}

/** The rows match the model: live tokens only, each storing the hash of its current secret. */
async function verify(model: TokenModel, system: TokenSystem): Promise<void> {
  const rows = await system.db.selectFrom('api_tokens').selectAll().where('workspace_id', '=', system.workspaceId).orderBy('id').execute();
  const live = model.tokens.filter((t) => t.live).sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(rows.map((r) => r.id)).toEqual(live.map((t) => t.id));
  rows.forEach((row, i) => {
    const token = live[i]!;
    expect(row.secret_hash).toBe(hashSecret(token.current));
    expect(row.secret_hash).not.toBe(token.current);
    expect(row.token_last4).toBe(token.current.slice(-4));
    expect(row.user_id).toBe(system.members[token.creator].userId);
  });
  // No secret, live or dead, is stored anywhere in clear.
  const all = await system.db.selectFrom('api_tokens').select(['secret_hash', 'token_last4', 'name']).execute();
  const stored = JSON.stringify(all);
  for (const { secret } of model.secrets) expect(stored.includes(secret)).toBe(false);
}

function expectIssued(view: ApiTokenView): string {
  expect(view.prefix).toBe('sk_live');
  expect(view.token).toMatch(SECRET_SHAPE);
  expect(view.tokenLast4).toBe(view.token!.slice(-4));
  return view.token!;
}

type TokenCommand = fc.AsyncCommand<TokenModel, TokenSystem>;

class CreateToken implements TokenCommand {
  constructor(
    readonly actor: MemberKey,
    readonly name: string,
  ) {}
  check(model: Readonly<TokenModel>) {
    return model.present.has(this.actor);
  }
  async run(model: TokenModel, system: TokenSystem) {
    const create = () => inTransaction(system, (stores) => createApiToken(stores.tokens, deps, system.members[this.actor], this.name));
    if (this.actor === 'manager') {
      await expectDomainError(create, 'forbidden', 'Insufficient account permissions');
    } else {
      const view = await create();
      const secret = expectIssued(view);
      expect(view.name).toBe(this.name);
      expect(model.secrets.some((s) => s.secret === secret)).toBe(false);
      const token: ModelToken = { id: view.id, creator: this.actor, live: true, current: secret };
      model.tokens.push(token);
      model.secrets.push({ secret, token });
    }
    await verify(model, system);
  }
  toString() {
    return `CreateToken(${this.actor}, ${JSON.stringify(this.name)})`;
  }
}

/**
 * A member acts on the n-th token of the workspace (rotates it, deletes it): refused as
 * `expectedManageOutcome` says, or done, and the model follows what it did.
 */
abstract class ManageToken<Answer> implements TokenCommand {
  abstract readonly command: string;
  constructor(
    readonly actor: MemberKey,
    readonly index: number,
  ) {}
  check(model: Readonly<TokenModel>) {
    return model.present.has(this.actor) && model.tokens.length > 0;
  }
  async run(model: TokenModel, system: TokenSystem) {
    const token = model.tokens[this.index % model.tokens.length]!;
    const act = () => this.act(system, token);
    const expected = expectedManageOutcome(this.actor, token);
    if (expected !== 'ok') {
      await expectDomainError(act, expected);
    } else {
      this.done(model, token, await act());
    }
    await verify(model, system);
  }
  toString() {
    return `${this.command}(${this.actor}, #${this.index})`;
  }
  protected abstract act(system: TokenSystem, token: ModelToken): Promise<Answer>;
  protected abstract done(model: TokenModel, token: ModelToken, answer: Answer): void;
}

class RotateToken extends ManageToken<ApiTokenView> {
  readonly command = 'RotateToken';
  protected act(system: TokenSystem, token: ModelToken) {
    return inTransaction(system, (stores) => rotateApiToken(stores, deps, system.members[this.actor], token.id));
  }
  protected done(model: TokenModel, token: ModelToken, view: ApiTokenView) {
    const secret = expectIssued(view);
    expect(view.id).toBe(token.id);
    expect(secret).not.toBe(token.current);
    token.current = secret;
    model.secrets.push({ secret, token });
  }
}

class DeleteToken extends ManageToken<unknown> {
  readonly command = 'DeleteToken';
  protected act(system: TokenSystem, token: ModelToken) {
    return inTransaction(system, (stores) => deleteApiToken(stores, system.members[this.actor], token.id));
  }
  protected done(_model: TokenModel, token: ModelToken) {
    token.live = false;
  }
}

/** The Owner removes a member (spec: their API tokens for the workspace are revoked with it). */
class RemoveMember implements TokenCommand {
  constructor(readonly member: Exclude<MemberKey, 'owner'>) {}
  check(model: Readonly<TokenModel>) {
    return model.present.has(this.member);
  }
  async run(model: TokenModel, system: TokenSystem) {
    await inTransaction(system, (stores) => removeMember(stores, system.members.owner, system.members[this.member].userId));
    model.present.delete(this.member);
    for (const token of model.tokens) if (token.creator === this.member) token.live = false;
    await verify(model, system);
  }
  toString() {
    return `RemoveMember(${this.member})`;
  }
}

type AccountChoice = 'none' | 'own' | 'adminPersonal' | 'stranger';

/** Presents one of the secrets ever issued (current, rotated away or deleted). */
class Authenticate implements TokenCommand {
  constructor(
    readonly index: number,
    readonly account: AccountChoice,
  ) {}
  check(model: Readonly<TokenModel>) {
    return model.secrets.length > 0;
  }
  async run(model: TokenModel, system: TokenSystem) {
    const entry = model.secrets[this.index % model.secrets.length]!;
    const accountId = {
      none: undefined,
      own: system.workspaceId,
      adminPersonal: system.adminPersonalWorkspaceId,
      stranger: crypto.randomUUID(),
    }[this.account];
    const authenticate = () => inTransaction(system, (stores) => authenticateApiKey(stores, deps, entry.secret, accountId));

    if (!isCurrent(entry)) {
      // A rotated-away or deleted secret never authenticates, whatever workspace it names.
      await expectDomainError(authenticate, 'unauthenticated', 'Invalid or missing API key');
    } else if (this.account === 'stranger' || (this.account === 'adminPersonal' && entry.token.creator !== 'admin')) {
      await expectDomainError(authenticate, 'forbidden');
    } else {
      const actor = await authenticate();
      const creator = system.members[entry.token.creator];
      const switched = this.account === 'adminPersonal';
      expect(actor).toEqual({
        userId: creator.userId,
        workspaceId: switched ? system.adminPersonalWorkspaceId : system.workspaceId,
        roles: switched ? ['OWNER'] : MEMBER_ROLES[entry.token.creator],
        tokenId: entry.token.id,
      });
      const row = await system.db.selectFrom('api_tokens').select('last_used_at').where('id', '=', entry.token.id).executeTakeFirstOrThrow();
      expect(row.last_used_at && new Date(row.last_used_at).toISOString()).toBe(NOW.toISOString());
    }
    await verify(model, system);
  }
  toString() {
    return `Authenticate(secret #${this.index}, account=${this.account})`;
  }
}

type ForgeKind = 'missing' | 'fresh' | 'oneCharOff' | 'noPrefix' | 'hashAsKey' | 'padded';

/** Keys nobody was issued: derived from a live secret, or made up. Always 401. */
class AuthenticateForged implements TokenCommand {
  constructor(
    readonly kind: ForgeKind,
    readonly index: number,
  ) {}
  check() {
    return true;
  }
  async run(model: TokenModel, system: TokenSystem) {
    const live = model.secrets.filter(isCurrent);
    const base = live.length > 0 ? live[this.index % live.length]!.secret : newApiTokenSecret(osRandom);
    const i = 8 + (this.index % 43);
    const forged = {
      missing: undefined,
      fresh: newApiTokenSecret(osRandom),
      oneCharOff: base.slice(0, i) + (base[i] === 'x' ? 'y' : 'x') + base.slice(i + 1),
      noPrefix: base.slice('sk_live_'.length),
      hashAsKey: hashSecret(base),
      padded: `${base} `,
    }[this.kind];
    await expectDomainError(() => inTransaction(system, (stores) => authenticateApiKey(stores, deps, forged, undefined)), 'unauthenticated');
    await verify(model, system);
  }
  toString() {
    return `AuthenticateForged(${this.kind}, #${this.index})`;
  }
}

const member = fc.constantFrom<MemberKey>('owner', 'owner', 'admin', 'admin', 'manager');
const tokenCommands = fc.commands(
  [
    fc.oneof(
      { weight: 4, arbitrary: fc.tuple(member, fc.string({ minLength: 1, maxLength: 20 })).map(([m, name]): TokenCommand => new CreateToken(m, name)) },
      { weight: 3, arbitrary: fc.tuple(member, fc.nat()).map(([m, i]): TokenCommand => new RotateToken(m, i)) },
      { weight: 2, arbitrary: fc.tuple(member, fc.nat()).map(([m, i]): TokenCommand => new DeleteToken(m, i)) },
      {
        weight: 6,
        arbitrary: fc
          .tuple(fc.nat(), fc.constantFrom<AccountChoice>('none', 'none', 'none', 'own', 'adminPersonal', 'stranger'))
          .map(([i, account]): TokenCommand => new Authenticate(i, account)),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom<ForgeKind>('missing', 'fresh', 'oneCharOff', 'noPrefix', 'hashAsKey', 'padded'), fc.nat())
          .map(([k, i]): TokenCommand => new AuthenticateForged(k, i)),
      },
      { weight: 1, arbitrary: fc.constantFrom<'admin' | 'manager'>('admin', 'manager').map((m): TokenCommand => new RemoveMember(m)) },
    ),
  ],
  { maxCommands: 40, size: 'medium' },
);

describe(`API tokens on the real stores (${onPostgres ? 'Postgres' : 'PGlite'})`, () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase();
  });

  afterAll(async () => {
    await database?.close();
  });

  /** A workspace with an Owner (and their bootstrap token), an Admin and a Manager. */
  async function freshWorkspace(): Promise<{ system: TokenSystem; bootstrapSecret: string; bootstrapTokenId: string }> {
    const tag = crypto.randomUUID().slice(0, 8);
    return database.db.transaction().execute(async (trx) => {
      const stores = baseStores(trx);
      const boot = await bootstrapOwner(stores, deps, { email: `owner-${tag}@example.com`, workspace: `Tokens ${tag}`, plan: 'PRO' });
      const admin = await signUp(stores, deps, { email: `admin-${tag}@example.com` });
      const manager = await signUp(stores, deps, { email: `manager-${tag}@example.com` });
      await stores.identity.insertMembership({ workspaceId: boot.workspaceId, userId: admin.id, roles: ['ADMIN'], createdAt: NOW });
      await stores.identity.insertMembership({ workspaceId: boot.workspaceId, userId: manager.id, roles: ['MANAGER'], createdAt: NOW });
      const adminPersonal = (await stores.identity.listWorkspacesOf(admin.id)).find((w) => w.isPersonal)!;
      const bootstrapToken = await stores.tokens.findByHash(hashSecret(boot.token));
      const members: Record<MemberKey, Actor> = {
        owner: { userId: boot.userId, workspaceId: boot.workspaceId, roles: ['OWNER'] },
        admin: { userId: admin.id, workspaceId: boot.workspaceId, roles: ['ADMIN'] },
        manager: { userId: manager.id, workspaceId: boot.workspaceId, roles: ['MANAGER'] },
      };
      return {
        system: { db: database.db, workspaceId: boot.workspaceId, adminPersonalWorkspaceId: adminPersonal.id, members },
        bootstrapSecret: boot.token,
        bootstrapTokenId: bootstrapToken!.id,
      };
    });
  }

  test('model-based: a secret authenticates iff it is the current secret of a live token', async () => {
    await fc.assert(
      fc.asyncProperty(tokenCommands, async (commands) => {
        const { system, bootstrapSecret, bootstrapTokenId } = await freshWorkspace();
        const bootstrap: ModelToken = { id: bootstrapTokenId, creator: 'owner', live: true, current: bootstrapSecret };
        const model: TokenModel = { present: new Set(['owner', 'admin', 'manager']), tokens: [bootstrap], secrets: [{ secret: bootstrapSecret, token: bootstrap }] };
        await verify(model, system);
        await fc.asyncModelRun(() => ({ model, real: system }), commands);
      }),
      { numRuns: 25 },
    );
  });

  test('a token whose creator is no longer a member does not authenticate (defence in depth)', async () => {
    const { system } = await freshWorkspace();
    const view = await inTransaction(system, (stores) => createApiToken(stores.tokens, deps, system.members.admin, 'orphan'));
    const secret = expectIssued(view);
    const actor = await inTransaction(system, (stores) => authenticateApiKey(stores, deps, secret, undefined));
    expect(actor.userId).toBe(system.members.admin.userId);
    // The membership row goes, the token row stays (as if removed by a path that forgot the tokens).
    await inTransaction(system, (stores) => stores.identity.deleteMembership(system.workspaceId, system.members.admin.userId));
    await expectDomainError(() => inTransaction(system, (stores) => authenticateApiKey(stores, deps, secret, undefined)), 'unauthenticated');
    await expectDomainError(() => inTransaction(system, (stores) => authenticateApiKey(stores, deps, secret, system.adminPersonalWorkspaceId)), 'unauthenticated');
  });

  test('createApiToken stores only the hash and the last 4 characters of the secret it returns', async () => {
    const { system } = await freshWorkspace();
    const rollback = new Error('rollback');
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.constantFrom<MemberKey>('owner', 'admin'), async (bytes, who) => {
        await system.db
          .transaction()
          .execute(async (trx) => {
            const stores = baseStores(trx);
            const view = await createApiToken(stores.tokens, { ...deps, random: scriptedRandom(bytes) }, system.members[who], 'probe');
            const secret = `sk_live_${Buffer.from(bytes).toString('base64url')}`;
            expect(view.token).toBe(secret);
            expect(view.tokenLast4).toBe(secret.slice(-4));
            const row = await trx.selectFrom('api_tokens').selectAll().where('id', '=', view.id).executeTakeFirstOrThrow();
            expect(row.secret_hash).toBe(hashSecret(secret));
            expect(row.secret_hash).not.toBe(secret);
            expect(row.token_last4).toBe(secret.slice(-4));
            expect(Object.values(row).map(String).some((value) => value.includes(secret.slice(8)))).toBe(false);
            throw rollback; // leave nothing behind: the next run may draw the same bytes
          })
          .catch((error) => {
            if (error !== rollback) throw error;
          });
      }),
      { numRuns: 50 },
    );
  });
});
