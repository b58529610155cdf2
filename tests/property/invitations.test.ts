import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import type { Actor } from '../../core/identity/identity.ts';
import {
  acceptInvitation,
  declineInvitation,
  InvitationUnusable,
  inviteMember,
  revokeInvitation,
  WRONG_PASSWORD,
} from '../../core/identity/invitations.ts';
import {
  currentInvitationStatus,
  INVITATION_EVENTS,
  INVITATION_STATUSES,
  INVITATION_TRANSITIONS,
  nextInvitationStatus,
  type InvitationStatus,
} from '../../core/identity/invitation-status.ts';
import type { PasswordHasher } from '../../core/identity/passwords.ts';
import { CANNOT_TAKE_OVER } from '../../core/identity/account-reclaim.ts';
import { createApiToken } from '../../core/tokens/api-tokens.ts';
import { signUp } from '../../core/identity/workspaces.ts';
import { DEFAULT_PLANS } from '../../core/plans/plans.ts';
import type { Clock } from '../../core/shared/ports.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { onPostgres, openTestDatabase, type TestDatabase } from '../support/database.ts';
import { expectDomainError } from '../support/expect-domain-error.ts';

/**
 * Issue 19, section 3: "Joining a workspace needs the invitee's own acceptance … no secret that
 * one workspace's member receives or chooses ever lets anyone act in another workspace."
 * The invitation's states as a transition table, then the use cases on the real stores against
 * a model: random invites, answers, revocations and the passing of time in two workspaces.
 */

const DAY = 86_400_000;
const START = new Date('2026-03-01T09:00:00.000Z').getTime();

describe('the transition table (core/identity/invitation-status.ts)', () => {
  test('PENDING is the only state that moves; every other state is final', () => {
    for (const status of INVITATION_STATUSES) {
      for (const event of INVITATION_EVENTS) {
        const to = nextInvitationStatus(status, event);
        if (status === 'PENDING') expect(to).toBe(INVITATION_TRANSITIONS.PENDING[event]!);
        else expect(to).toBeUndefined();
      }
    }
  });

  test('a PENDING invitation is EXPIRED from its expiry on; no other state changes with time', () => {
    fc.assert(
      fc.property(fc.constantFrom(...INVITATION_STATUSES), fc.integer({ min: -10 * DAY, max: 10 * DAY }), (status, offset) => {
        const expiresAt = new Date(START);
        const got = currentInvitationStatus({ status, expiresAt }, new Date(START + offset));
        expect(got).toBe(status === 'PENDING' && offset >= 0 ? 'EXPIRED' : status);
      }),
    );
  });
});

/** A stand-in for argon2 (slow on purpose): the property is about who joins, not about hashing. */
const hasher: PasswordHasher = {
  hash: async (password) => `plain:${password}`,
  verify: async (password, hash) => hash === `plain:${password}`,
};

type WorkspaceKey = 'W' | 'X';
const EMAILS = ['fresh-a', 'existing', 'fresh-b'] as const;
type EmailKey = (typeof EMAILS)[number];
const EXISTING_PASSWORD = 'the existing password';

interface ModelInvitation {
  id: string;
  token: string;
  workspace: WorkspaceKey;
  email: EmailKey;
  mailed: boolean;
  /** The status the row holds (a PENDING row past its expiry reads as EXPIRED). */
  status: InvitationStatus;
  expiresAt: number;
}

interface Model {
  now: number;
  invitations: ModelInvitation[];
  /** Password of each email that has an account. */
  accounts: Map<EmailKey, string>;
  members: Set<string>;
  /** The members (`W:email`) who joined through an invitation passed on by link. */
  joinedByLink: Set<string>;
  verified: Set<EmailKey>;
  /** Emails whose account holds API tokens (made before any takeover). */
  tokens: Set<EmailKey>;
}

interface System {
  clock: { now: number };
  tag: string;
  owners: Record<WorkspaceKey, Actor>;
}

let database: TestDatabase;
const address = (system: System, email: EmailKey) => `${email}-${system.tag}@example.com`;
const depsOf = (system: System) => {
  const clock: Clock = { now: () => new Date(system.clock.now) };
  return { clock, ids: { next: () => crypto.randomUUID() }, random: { bytes: (n: number) => crypto.getRandomValues(new Uint8Array(n)) }, plans: DEFAULT_PLANS, hasher };
};
const inTransaction = <T>(work: (stores: ReturnType<typeof baseStores>) => Promise<T>) => database.db.transaction().execute((trx) => work(baseStores(trx)));
const effective = (model: Model, i: ModelInvitation) => currentInvitationStatus({ status: i.status, expiresAt: new Date(i.expiresAt) }, new Date(model.now));

async function expectUnusable(work: () => Promise<unknown>, status: InvitationStatus): Promise<void> {
  const error = await expectDomainError(work, 'invalid_input');
  expect(error).toBeInstanceOf(InvitationUnusable);
  expect((error as InvitationUnusable).invitationStatus).toBe(status as Exclude<InvitationStatus, 'PENDING'>);
}

async function verify(model: Model, system: System): Promise<void> {
  const rows = await database.db.selectFrom('invitations').select(['id', 'status', 'token_hash']).where('workspace_id', 'in', [system.owners.W.workspaceId, system.owners.X.workspaceId]).execute();
  expect(rows).toHaveLength(model.invitations.length);
  for (const invitation of model.invitations) {
    const row = rows.find((r) => r.id === invitation.id)!;
    expect(row.status).toBe(invitation.status);
    expect(row.token_hash).not.toBe(invitation.token); // only a hash is kept
  }
  for (const email of EMAILS) {
    const user = await database.db.selectFrom('users').select(['id', 'email_verified_at']).where('email', '=', address(system, email)).executeTakeFirst();
    expect(Boolean(user)).toBe(model.accounts.has(email));
    expect(Boolean(user?.email_verified_at)).toBe(model.verified.has(email));
    if (user) {
      const tokens = await database.db.selectFrom('api_tokens').select('id').where('user_id', '=', user.id).execute();
      expect(tokens.length > 0).toBe(model.tokens.has(email));
      const personal = (await baseStores(database.db).identity.listWorkspacesOf(user.id)).filter((w) => w.isPersonal);
      expect(personal).toHaveLength(1);
    }
    for (const ws of ['W', 'X'] as const) {
      const membership = user && (await baseStores(database.db).identity.getMembership(system.owners[ws].workspaceId, user.id));
      expect(Boolean(membership)).toBe(model.members.has(`${ws}:${email}`));
    }
  }
}

type Command = fc.AsyncCommand<Model, System>;

/**
 * An accepted invitation in the model: the invitee's account has this password and they are a
 * member; a mailed one proves their address, one passed on by link is remembered as such.
 */
function joins(model: Model, invitation: ModelInvitation, password: string): void {
  model.accounts.set(invitation.email, password);
  model.members.add(`${invitation.workspace}:${invitation.email}`);
  if (!invitation.mailed) model.joinedByLink.add(`${invitation.workspace}:${invitation.email}`);
  if (invitation.mailed) model.verified.add(invitation.email);
  invitation.status = 'ACCEPTED';
}

class Invite implements Command {
  constructor(readonly workspace: WorkspaceKey, readonly email: EmailKey, readonly mailed: boolean) {}
  check = () => true;
  async run(model: Model, system: System) {
    const invite = () =>
      inTransaction((stores) =>
        inviteMember(stores, depsOf(system), system.owners[this.workspace], { email: address(system, this.email), roles: ['AGENT'], deliveredBy: this.mailed ? 'mail' : 'link' }),
      );
    if (model.members.has(`${this.workspace}:${this.email}`)) {
      await expectDomainError(invite, 'conflict');
    } else {
      const { invitation, token } = await invite();
      // The answer does not depend on whether the address has an account.
      expect(Object.keys(invitation).sort()).toEqual(['createdAt', 'deliveredBy', 'email', 'expiresAt', 'id', 'invitedBy', 'roles', 'status', 'tokenHash', 'updatedAt', 'workspaceId']);
      for (const old of model.invitations) if (old.workspace === this.workspace && old.email === this.email && old.status === 'PENDING') old.status = 'REVOKED';
      model.invitations.push({ id: invitation.id, token, workspace: this.workspace, email: this.email, mailed: this.mailed, status: 'PENDING', expiresAt: model.now + 7 * DAY });
    }
    await verify(model, system);
  }
  toString = () => `Invite(${this.workspace}, ${this.email}, ${this.mailed ? 'mail' : 'link'})`;
}

type PasswordChoice = 'existing' | 'chosen' | 'short';

class Accept implements Command {
  constructor(readonly index: number, readonly password: PasswordChoice) {}
  check = (model: Readonly<Model>) => model.invitations.length > 0;
  async run(model: Model, system: System) {
    const invitation = model.invitations[this.index % model.invitations.length]!;
    const password = { existing: EXISTING_PASSWORD, chosen: `chosen for ${invitation.id}`, short: 'short' }[this.password];
    const accept = () => inTransaction((stores) => acceptInvitation(stores, depsOf(system), invitation.token, { password }));
    const status = effective(model, invitation);
    const known = model.accounts.get(invitation.email);
    if (status !== 'PENDING') {
      await expectUnusable(accept, status);
    } else if (known !== undefined && known !== password) {
      // Holding the link alone never attaches an existing account.
      await expectDomainError(accept, 'invalid_input', WRONG_PASSWORD);
    } else if (known === undefined && this.password === 'short') {
      await expectDomainError(accept, 'invalid_input');
    } else {
      const joined = await accept();
      expect(joined.created).toBe(known === undefined);
      joins(model, invitation, password);
    }
    await verify(model, system);
  }
  toString = () => `Accept(#${this.index}, ${this.password})`;
}

/**
 * Accepting by taking the account over with a new password: only a mailed token, only for an
 * account nobody verified. The account then has the new password, is verified, holds no API
 * token, and leaves the workspaces it joined by link.
 */
class TakeOver implements Command {
  constructor(readonly index: number, readonly short: boolean) {}
  check = (model: Readonly<Model>) => model.invitations.length > 0;
  async run(model: Model, system: System) {
    const invitation = model.invitations[this.index % model.invitations.length]!;
    const password = this.short ? 'short' : `taken over with ${invitation.id}`;
    const takeOver = () => inTransaction((stores) => acceptInvitation(stores, depsOf(system), invitation.token, { password, takeOver: true }));
    const status = effective(model, invitation);
    const known = model.accounts.has(invitation.email);
    if (status !== 'PENDING') {
      await expectUnusable(takeOver, status);
    } else if (known && !invitation.mailed) {
      await expectDomainError(takeOver, 'invalid_input', WRONG_PASSWORD);
    } else if (known && model.verified.has(invitation.email)) {
      await expectDomainError(takeOver, 'invalid_input', CANNOT_TAKE_OVER);
    } else if (this.short) {
      await expectDomainError(takeOver, 'invalid_input');
    } else {
      const joined = await takeOver();
      expect(joined.created).toBe(!known);
      expect(joined.tookOver).toBe(known);
      if (known) {
        for (const key of [...model.joinedByLink].filter((k) => k.endsWith(`:${invitation.email}`))) {
          model.members.delete(key);
          model.joinedByLink.delete(key);
        }
        model.tokens.delete(invitation.email);
      }
      joins(model, invitation, password);
    }
    await verify(model, system);
  }
  toString = () => `TakeOver(#${this.index}${this.short ? ', short' : ''})`;
}

class Decline implements Command {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.invitations.length > 0;
  async run(model: Model, system: System) {
    const invitation = model.invitations[this.index % model.invitations.length]!;
    const decline = () => inTransaction((stores) => declineInvitation(stores, depsOf(system), invitation.token));
    const status = effective(model, invitation);
    if (status !== 'PENDING') await expectUnusable(decline, status);
    else {
      await decline();
      invitation.status = 'DECLINED';
    }
    await verify(model, system);
  }
  toString = () => `Decline(#${this.index})`;
}

class Revoke implements Command {
  constructor(readonly index: number, readonly by: WorkspaceKey) {}
  check = (model: Readonly<Model>) => model.invitations.length > 0;
  async run(model: Model, system: System) {
    const invitation = model.invitations[this.index % model.invitations.length]!;
    const revoke = () => inTransaction((stores) => revokeInvitation(stores, depsOf(system), system.owners[this.by], invitation.id));
    const status = effective(model, invitation);
    if (this.by !== invitation.workspace) await expectDomainError(revoke, 'not_found');
    else if (status !== 'PENDING') await expectDomainError(revoke, 'conflict');
    else {
      expect((await revoke()).status).toBe('REVOKED');
      invitation.status = 'REVOKED';
    }
    await verify(model, system);
  }
  toString = () => `Revoke(#${this.index} by ${this.by})`;
}

/** A token that was never issued, or one of another invitation with a character changed. */
class AcceptForged implements Command {
  constructor(readonly index: number) {}
  check = () => true;
  async run(model: Model, system: System) {
    const base = model.invitations.length > 0 ? model.invitations[this.index % model.invitations.length]!.token : `inv_${'A'.repeat(43)}`;
    const forged = base.slice(0, -1) + (base.endsWith('A') ? 'B' : 'A');
    await expectDomainError(() => inTransaction((stores) => acceptInvitation(stores, depsOf(system), forged, { password: EXISTING_PASSWORD })), 'invalid_input');
    await verify(model, system);
  }
  toString = () => `AcceptForged(#${this.index})`;
}

class Wait implements Command {
  constructor(readonly hours: number) {}
  check = () => true;
  async run(model: Model, system: System) {
    model.now += this.hours * 3_600_000;
    system.clock.now = model.now;
    await verify(model, system);
  }
  toString = () => `Wait(${this.hours}h)`;
}

const workspace = fc.constantFrom<WorkspaceKey>('W', 'W', 'X');
const commands = fc.commands(
  [
    fc.tuple(workspace, fc.constantFrom(...EMAILS), fc.boolean()).map(([w, e, m]): Command => new Invite(w, e, m)),
    fc.tuple(fc.nat(), fc.constantFrom<PasswordChoice>('existing', 'chosen', 'chosen', 'short')).map(([i, p]): Command => new Accept(i, p)),
    fc.tuple(fc.nat(), fc.boolean()).map(([i, short]): Command => new TakeOver(i, short)),
    fc.nat().map((i): Command => new Decline(i)),
    fc.tuple(fc.nat(), workspace).map(([i, w]): Command => new Revoke(i, w)),
    fc.nat().map((i): Command => new AcceptForged(i)),
    fc.integer({ min: 1, max: 96 }).map((h): Command => new Wait(h)),
  ],
  { maxCommands: 30, size: 'medium' },
);

describe(`invitations on the real stores (${onPostgres ? 'Postgres' : 'PGlite'})`, () => {
  // Hooks do not take bunfig's test timeout; migrating a database can take a while on a busy machine.
  beforeAll(async () => {
    database = await openTestDatabase();
  }, 60_000);

  afterAll(async () => {
    await database?.close();
  }, 60_000);

  test('model-based: a person is a member of a workspace iff they accepted a pending invitation of that workspace with its token (and, for an existing account, its password, unless a mailed token takes a never-verified account over)', async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (run) => {
        const system: System = { clock: { now: START }, tag: crypto.randomUUID().slice(0, 8), owners: {} as Record<WorkspaceKey, Actor> };
        const deps = depsOf(system);
        await inTransaction(async (stores) => {
          for (const ws of ['W', 'X'] as const) {
            const boot = await bootstrapOwner(stores, deps, { email: `owner-${ws}-${system.tag}@example.com`, workspace: `${ws} ${system.tag}`, plan: 'FREE' });
            system.owners[ws] = { userId: boot.userId, workspaceId: boot.workspaceId, roles: ['OWNER'] };
          }
          const existing = await signUp(stores, deps, { email: address(system, 'existing') });
          await stores.identity.setPasswordHash(existing.id, await hasher.hash(EXISTING_PASSWORD));
          const personal = (await stores.identity.listWorkspacesOf(existing.id))[0]!;
          await createApiToken(stores.tokens, deps, { userId: existing.id, workspaceId: personal.id, roles: ['OWNER'] }, 'made before any invitation');
        });
        const model: Model = {
          now: START,
          invitations: [],
          accounts: new Map([['existing', EXISTING_PASSWORD]]),
          members: new Set(),
          joinedByLink: new Set(),
          verified: new Set(),
          tokens: new Set(['existing']),
        };
        await verify(model, system);
        await fc.asyncModelRun(() => ({ model, real: system }), run);
      }),
      { numRuns: 25 },
    );
  }, 300_000);
});
