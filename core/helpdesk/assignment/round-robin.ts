import type { Availability } from './presence.ts';

/**
 * Round-robin assignment of a new conversation (spec 3.7), as a pure rule:
 *
 * > with two or more eligible agents only `online` ones participate; `busy` and `offline` are
 * > skipped. With exactly one eligible inbox member that member is assigned even if offline.
 * > With no inbox members and no team restriction assignment falls back to the workspace Owner;
 * > a team-restricted conversation has no Owner fallback.
 *
 * | eligible agents | online among them | team restriction | outcome                          |
 * |-----------------|-------------------|------------------|----------------------------------|
 * | two or more     | one or more       | either           | `rotation`: the next online one  |
 * | two or more     | none              | either           | `nobody-online`: left unassigned |
 * | exactly one     | any               | either           | `only-member`: that one          |
 * | none            | -                 | no               | `owner`: the workspace Owner     |
 * | none            | -                 | yes              | `no-eligible-member`: unassigned |
 *
 * Where the spec is silent (two or more eligible, none online) nobody is assigned: a conversation
 * is not handed to someone who said they are busy or is away; it waits in the inbox for a person
 * to take or assign it (the Owner fallback is only for an inbox with no members).
 *
 * Fair over time: the agents of a pool stand in a fixed circle (ordered by user id) and the
 * rotation keeps the last one assigned. The next is the first online agent after them on the
 * circle. The pointer only moves forward and never passes an online agent, so between two turns
 * of one agent every agent that stayed online in the pool had exactly one turn: nobody is skipped
 * or served twice in a rotation, and the turns of agents who stayed online differ by one at most.
 * An agent coming back online takes their place on the circle (no catching up in a burst).
 */
export interface RotationState {
  /** The agent of the pool assigned last by the rotation (or as its only member); null before the first. */
  lastUserId: string | null;
}

export const NEW_ROTATION: RotationState = { lastUserId: null };

/** An eligible agent with the status the workspace sees for them (core/helpdesk/assignment/presence.ts). */
export interface Candidate {
  userId: string;
  status: Availability;
}

export type AssignmentRule = 'rotation' | 'only-member' | 'owner' | 'nobody-online' | 'no-eligible-member';

export interface RoundRobinInput {
  /** The agents who may take the conversation (the inbox's members, or the team's who may see the inbox). */
  eligible: readonly Candidate[];
  /** The conversation belongs to a team: no Owner fallback. */
  teamRestricted: boolean;
  /** The workspace Owner (the fallback); null if there were none. */
  ownerUserId: string | null;
  rotation: RotationState;
}

export interface RoundRobinChoice {
  rule: AssignmentRule;
  /** Who is assigned; null when nobody is. */
  userId: string | null;
  /** The pool's rotation after this choice (unchanged unless the pool itself chose). */
  rotation: RotationState;
}

/** The rules above. Duplicated candidates count once. */
export function chooseAssignee(input: RoundRobinInput): RoundRobinChoice {
  const circle = onCircle(input.eligible);
  if (circle.length === 0) {
    if (input.teamRestricted || input.ownerUserId === null) return { rule: 'no-eligible-member', userId: null, rotation: input.rotation };
    return { rule: 'owner', userId: input.ownerUserId, rotation: input.rotation };
  }
  if (circle.length === 1) {
    const only = circle[0]!.userId;
    return { rule: 'only-member', userId: only, rotation: { lastUserId: only } };
  }
  const online = circle.filter((c) => c.status === 'online');
  if (online.length === 0) return { rule: 'nobody-online', userId: null, rotation: input.rotation };
  const last = input.rotation.lastUserId;
  const next = (last === null ? undefined : online.find((c) => c.userId > last)) ?? online[0]!;
  return { rule: 'rotation', userId: next.userId, rotation: { lastUserId: next.userId } };
}

/** The candidates once each, in circle order (user ids compare as strings: a fixed, total order). */
function onCircle(eligible: readonly Candidate[]): Candidate[] {
  const byId = new Map<string, Candidate>();
  for (const c of eligible) if (!byId.has(c.userId)) byId.set(c.userId, c);
  return [...byId.values()].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
}
