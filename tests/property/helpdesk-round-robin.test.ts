import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { AVAILABILITIES, type Availability } from '../../core/helpdesk/assignment/presence.ts';
import { chooseAssignee, NEW_ROTATION, type Candidate, type RotationState } from '../../core/helpdesk/assignment/round-robin.ts';

/**
 * Round-robin (core/helpdesk/assignment/round-robin.ts) against spec 3.7: "with two or more eligible agents
 * only `online` ones participate; `busy` and `offline` are skipped. With exactly one eligible
 * inbox member that member is assigned even if offline. With no inbox members and no team
 * restriction assignment falls back to the workspace Owner; a team-restricted conversation has
 * no Owner fallback." Issue 7: fair over time, "load stays balanced within one".
 *
 * The model knows nothing of circles or pointers: who is in which pool, who shows what, and
 * which assignments went to whom. Two pools (an inbox, and a team of it) keep separate rotations.
 */

const USERS = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5'] as const;
const OWNER = 'owner';
const POOLS = ['inbox', 'team'] as const;
type Pool = (typeof POOLS)[number];

interface Model {
  members: Record<Pool, Set<string>>;
  status: Map<string, Availability>;
  /** Arrivals so far (their count numbers them). */
  arrivals: number;
  /** Per pool, the arrival from which a member has been in the pool and online without a break. */
  onlineSince: Record<Pool, Map<string, number>>;
  /** Per pool, who got each arrival of that pool, with its number. */
  assigned: Record<Pool, Array<{ at: number; userId: string | null }>>;
}

interface Real {
  rotations: Record<Pool, RotationState>;
}

const statusOf = (m: Model, u: string): Availability => m.status.get(u) ?? 'offline';

/** Starts or ends the unbroken online streaks after a change of membership or status. */
function restreak(m: Model): void {
  for (const pool of POOLS) {
    for (const u of USERS) {
      const live = m.members[pool].has(u) && statusOf(m, u) === 'online';
      if (live && !m.onlineSince[pool].has(u)) m.onlineSince[pool].set(u, m.arrivals);
      if (!live) m.onlineSince[pool].delete(u);
    }
  }
}

class Join implements fc.Command<Model, Real> {
  constructor(readonly pool: Pool, readonly userId: string) {}
  check = () => true;
  run(m: Model) {
    m.members[this.pool].add(this.userId);
    restreak(m);
  }
  toString = () => `${this.userId} joins ${this.pool}`;
}

class Leave implements fc.Command<Model, Real> {
  constructor(readonly pool: Pool, readonly userId: string) {}
  check = (m: Readonly<Model>) => m.members[this.pool].has(this.userId);
  run(m: Model) {
    m.members[this.pool].delete(this.userId);
    restreak(m);
  }
  toString = () => `${this.userId} leaves ${this.pool}`;
}

class Show implements fc.Command<Model, Real> {
  constructor(readonly userId: string, readonly status: Availability) {}
  check = () => true;
  run(m: Model) {
    m.status.set(this.userId, this.status);
    restreak(m);
  }
  toString = () => `${this.userId} shows ${this.status}`;
}

class Arrive implements fc.Command<Model, Real> {
  constructor(readonly pool: Pool, readonly shuffle: number) {}
  check = () => true;
  run(m: Model, r: Real) {
    const members = [...m.members[this.pool]];
    // The store answers in no particular order.
    const rotated = members.map((_, i) => members[(i + this.shuffle) % members.length]!);
    const eligible: Candidate[] = rotated.map((userId) => ({ userId, status: statusOf(m, userId) }));
    const choice = chooseAssignee({ eligible, teamRestricted: this.pool === 'team', ownerUserId: OWNER, rotation: r.rotations[this.pool] });
    r.rotations[this.pool] = choice.rotation;

    // The rules of 3.7.
    const online = members.filter((u) => statusOf(m, u) === 'online');
    if (members.length >= 2 && online.length > 0) {
      expect(choice.rule).toBe('rotation');
      expect(online).toContain(choice.userId!);
    } else if (members.length >= 2) {
      expect(choice).toMatchObject({ rule: 'nobody-online', userId: null });
    } else if (members.length === 1) {
      expect(choice).toMatchObject({ rule: 'only-member', userId: members[0] });
    } else if (this.pool === 'inbox') {
      expect(choice).toMatchObject({ rule: 'owner', userId: OWNER });
    } else {
      expect(choice).toMatchObject({ rule: 'no-eligible-member', userId: null });
    }

    m.assigned[this.pool].push({ at: m.arrivals, userId: choice.userId });
    m.arrivals += 1;

    // Fair over time: any two members online in the pool without a break since some arrival got
    // the same number of its arrivals since then, give or take one (nobody skipped or doubled).
    const streaks = [...m.onlineSince[this.pool]];
    for (const [x, sinceX] of streaks) {
      for (const [y, sinceY] of streaks) {
        if (x >= y) continue;
        const since = Math.max(sinceX, sinceY);
        const turns = (u: string) => m.assigned[this.pool].filter((a) => a.at >= since && a.userId === u).length;
        expect(Math.abs(turns(x) - turns(y))).toBeLessThanOrEqual(1);
      }
    }
  }
  toString = () => `a conversation arrives in ${this.pool}`;
}

const pool = fc.constantFrom(...POOLS);
const user = fc.constantFrom(...USERS);
const availability = fc.constantFrom(...AVAILABILITIES);

const commands = fc.commands(
  [
    fc.tuple(pool, user).map(([p, u]) => new Join(p, u)),
    fc.tuple(pool, user).map(([p, u]) => new Leave(p, u)),
    fc.tuple(user, availability).map(([u, a]) => new Show(u, a)),
    // Arrivals weigh more: long runs of them between changes show the balance.
    fc.tuple(pool, fc.nat({ max: 5 })).map(([p, s]) => new Arrive(p, s)),
    fc.tuple(pool, fc.nat({ max: 5 })).map(([p, s]) => new Arrive(p, s)),
    fc.tuple(pool, fc.nat({ max: 5 })).map(([p, s]) => new Arrive(p, s)),
  ],
  { maxCommands: 150, size: 'max' },
);

const fresh = (): { model: Model; real: Real } => ({
  model: {
    members: { inbox: new Set(), team: new Set() },
    status: new Map(),
    arrivals: 0,
    onlineSince: { inbox: new Map(), team: new Map() },
    assigned: { inbox: [], team: [] },
  },
  real: { rotations: { inbox: NEW_ROTATION, team: NEW_ROTATION } },
});

describe('round-robin against a model', () => {
  test('members join and leave, show online, busy or offline, conversations arrive: the 3.7 rules hold and turns stay within one', () => {
    fc.assert(
      fc.property(commands, (cmds) => {
        fc.modelRun(fresh, cmds);
      }),
      { numRuns: 400 },
    );
  });
});

describe('the table, by example', () => {
  const c = (userId: string, status: Availability): Candidate => ({ userId, status });
  const run = (eligible: Candidate[], arrivals: number, teamRestricted = false) => {
    let rotation = NEW_ROTATION;
    const picked: Array<string | null> = [];
    for (let i = 0; i < arrivals; i++) {
      const choice = chooseAssignee({ eligible, teamRestricted, ownerUserId: OWNER, rotation });
      rotation = choice.rotation;
      picked.push(choice.userId);
    }
    return picked;
  };

  test('three agents, two online and one busy: only the online two, alternating', () => {
    expect(run([c('a', 'online'), c('b', 'busy'), c('c', 'online')], 6)).toEqual(['a', 'c', 'a', 'c', 'a', 'c']);
  });

  test('a single member is assigned even if offline or busy; no members: the Owner, unless a team restricts', () => {
    expect(run([c('a', 'offline')], 2)).toEqual(['a', 'a']);
    expect(run([c('a', 'busy')], 1)).toEqual(['a']);
    expect(run([], 2)).toEqual([OWNER, OWNER]);
    expect(run([], 1, true)).toEqual([null]);
    expect(chooseAssignee({ eligible: [], teamRestricted: false, ownerUserId: null, rotation: NEW_ROTATION }).userId).toBeNull();
  });

  test('two or more eligible, none online: nobody, and the rotation stays', () => {
    const rotation = { lastUserId: 'b' };
    expect(chooseAssignee({ eligible: [c('a', 'busy'), c('b', 'offline')], teamRestricted: false, ownerUserId: OWNER, rotation })).toEqual({ rule: 'nobody-online', userId: null, rotation });
  });

  test('a member listed twice counts once (one member is still "exactly one")', () => {
    expect(chooseAssignee({ eligible: [c('a', 'offline'), c('a', 'offline')], teamRestricted: false, ownerUserId: OWNER, rotation: NEW_ROTATION }).rule).toBe('only-member');
  });

  test('coming back online takes the place on the circle: no burst of catching up', () => {
    let rotation: RotationState = NEW_ROTATION;
    const pick = (eligible: Candidate[]) => {
      const choice = chooseAssignee({ eligible, teamRestricted: false, ownerUserId: OWNER, rotation });
      rotation = choice.rotation;
      return choice.userId;
    };
    const all = (bStatus: Availability) => [c('a', 'online'), c('b', bStatus), c('c', 'online')];
    expect([pick(all('offline')), pick(all('offline')), pick(all('offline'))]).toEqual(['a', 'c', 'a']);
    expect([pick(all('online')), pick(all('online')), pick(all('online')), pick(all('online'))]).toEqual(['b', 'c', 'a', 'b']);
  });
});
