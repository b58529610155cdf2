import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  AVAILABILITIES,
  choose,
  heartbeat,
  NO_PRESENCE,
  presenceChanges,
  presenceSnapshot,
  SHOWN_STATUS,
  shownStatus,
  type Availability,
  type Presence,
  type PresenceSnapshot,
} from '../../core/helpdesk/assignment/presence.ts';

/**
 * Agent presence (core/helpdesk/assignment/presence.ts).
 *
 * Spec 3.7: "Values `online`, `busy`, `offline`. Agent sets own value ... Heartbeat
 * `presence:online` every 20 s keeps an agent online; without heartbeats the agent decays to
 * offline on its own (a reload or brief disconnect does not flicker)." Spec 6.7: `presence.update`
 * "snapshot on connect and whenever anyone's status changes".
 *
 * Our design, modelled here in words: what others see is the chosen value while the last contact
 * (connection or heartbeat) is less than the TTL old, and offline otherwise; choosing offline is
 * offline. A disconnect is not a contact and changes nothing.
 */

const availability = fc.constantFrom(...AVAILABILITIES);
const ttlMs = fc.integer({ min: 1, max: 120_000 });
const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(T0 + ms);

describe('the table', () => {
  test('live shows the chosen value, stale shows offline, chosen offline is offline', () => {
    for (const a of AVAILABILITIES) {
      expect(SHOWN_STATUS[a].live).toBe(a);
      expect(SHOWN_STATUS[a].stale).toBe('offline');
    }
    // Never seen: offline, whatever was chosen.
    fc.assert(fc.property(availability, ttlMs, fc.nat(), (a, ttl, now) => shownStatus(choose(NO_PRESENCE, a), at(now), ttl) === 'offline'));
    expect(shownStatus(undefined, at(0), 60_000)).toBe('offline');
  });
});

describe('decay', () => {
  test('never before the TTL: within it the member shows what they chose', () => {
    fc.assert(
      fc.property(availability, ttlMs, fc.nat({ max: 1e9 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (a, ttl, seen, fraction) => {
        const presence: Presence = { availability: a, lastSeenAt: at(seen) };
        const elapsed = Math.floor(fraction * ttl);
        return shownStatus(presence, at(seen + elapsed), ttl) === a;
      }),
    );
  });

  test('from the TTL on, offline', () => {
    fc.assert(
      fc.property(availability, ttlMs, fc.nat({ max: 1e9 }), fc.nat({ max: 1e9 }), (a, ttl, seen, extra) => {
        return shownStatus({ availability: a, lastSeenAt: at(seen) }, at(seen + ttl + extra), ttl) === 'offline';
      }),
    );
  });
});

describe('reloads', () => {
  test('contacts closer than the TTL (reconnects, heartbeats, with disconnects between) never show an online member offline', () => {
    fc.assert(
      fc.property(
        ttlMs.filter((t) => t >= 2),
        fc.array(fc.record({ gap: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), lookAt: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }) }), { minLength: 1, maxLength: 30 }),
        fc.constantFrom<Availability>('online', 'busy'),
        (ttl, steps, chosen) => {
          let presence = heartbeat(choose(NO_PRESENCE, chosen), at(0));
          let now = 0;
          for (const { gap, lookAt } of steps) {
            // Somewhere before the next contact (a disconnect may be anywhere in between): still shown.
            const next = now + Math.floor(gap * ttl);
            const observed = now + Math.floor(lookAt * (next - now));
            if (shownStatus(presence, at(observed), ttl) !== chosen) return false;
            presence = heartbeat(presence, at(next));
            now = next;
            if (shownStatus(presence, at(now), ttl) !== chosen) return false;
          }
          return true;
        },
      ),
    );
  });
});

/** Model: the chosen value and how long since the last contact; nothing about timestamps. */
interface Model {
  chosen: Availability;
  silenceMs: number;
}
interface Real {
  presence: Presence;
  now: number;
}
const TTL = 1_000;
const expected = (m: Model): Availability => (m.silenceMs < TTL ? m.chosen : 'offline');

class Contact implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real) {
    r.presence = heartbeat(r.presence, at(r.now));
    m.silenceMs = 0;
    expect(shownStatus(r.presence, at(r.now), TTL)).toBe(expected(m));
  }
  toString = () => 'contact';
}
/** A report stamped earlier than now (another server's heartbeat arriving late). */
class LateContact implements fc.Command<Model, Real> {
  constructor(readonly agoMs: number) {}
  check = () => true;
  run(m: Model, r: Real) {
    r.presence = heartbeat(r.presence, at(r.now - this.agoMs));
    m.silenceMs = Math.min(m.silenceMs, this.agoMs);
    expect(shownStatus(r.presence, at(r.now), TTL)).toBe(expected(m));
  }
  toString = () => `late contact ${this.agoMs} ms ago`;
}
class Disconnect implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real) {
    expect(shownStatus(r.presence, at(r.now), TTL)).toBe(expected(m));
  }
  toString = () => 'disconnect';
}
class Wait implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  run(m: Model, r: Real) {
    r.now += this.ms;
    m.silenceMs += this.ms;
    expect(shownStatus(r.presence, at(r.now), TTL)).toBe(expected(m));
  }
  toString = () => `wait ${this.ms} ms`;
}
class Choose implements fc.Command<Model, Real> {
  constructor(readonly value: Availability) {}
  check = () => true;
  run(m: Model, r: Real) {
    r.presence = choose(r.presence, this.value);
    m.chosen = this.value;
    expect(shownStatus(r.presence, at(r.now), TTL)).toBe(expected(m));
  }
  toString = () => `choose ${this.value}`;
}

describe('against a model', () => {
  test('contacts, late contacts, disconnects, waits and choices: shown status as the model says', () => {
    fc.assert(
      fc.property(
        fc.commands(
          [
            fc.constant(new Contact()),
            fc.nat({ max: 2 * TTL }).map((ms) => new LateContact(ms)),
            fc.constant(new Disconnect()),
            fc.nat({ max: 2 * TTL }).map((ms) => new Wait(ms)),
            availability.map((a) => new Choose(a)),
          ],
          { maxCommands: 60 },
        ),
        (cmds) => {
          fc.modelRun(() => ({ model: { chosen: 'online' as Availability, silenceMs: Number.POSITIVE_INFINITY }, real: { presence: NO_PRESENCE, now: 10 * TTL } }), cmds);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('presence.update', () => {
  const users = fc.constantFrom('u1', 'u2', 'u3', 'u4', 'u5', 'u6');
  const snapshot = fc.dictionary(users, availability) as fc.Arbitrary<PresenceSnapshot>;

  test('the diff holds exactly the members whose shown status changed, with their new status', () => {
    fc.assert(
      fc.property(snapshot, snapshot, (before, after) => {
        const changes = presenceChanges(before, after);
        const changed = Object.keys(after).filter((u) => (before[u] ?? 'offline') !== after[u]);
        expect(Object.keys(changes).sort()).toEqual(changed.sort());
        for (const u of changed) expect(changes[u]).toBe(after[u]!);
        // Applying the diff to what was shown gives what is shown now.
        const applied = { ...Object.fromEntries(Object.keys(after).map((u) => [u, before[u] ?? 'offline'])), ...changes };
        expect(applied).toEqual(after);
      }),
    );
    expect(presenceChanges({ u1: 'online' }, { u1: 'online' })).toEqual({});
  });

  test('the snapshot lists every member, and only members', () => {
    fc.assert(
      fc.property(fc.uniqueArray(users), fc.dictionary(users, fc.record({ availability, seen: fc.nat({ max: 10_000 }) })), ttlMs, fc.nat({ max: 20_000 }), (members, stored, ttl, now) => {
        const presences = new Map(Object.entries(stored).map(([u, p]) => [u, { availability: p.availability, lastSeenAt: at(p.seen) }]));
        const shown = presenceSnapshot(members, presences, at(now), ttl);
        expect(Object.keys(shown).sort()).toEqual([...members].sort());
        for (const u of members) expect(shown[u]).toBe(shownStatus(presences.get(u), at(now), ttl));
      }),
    );
  });
});
