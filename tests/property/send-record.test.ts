import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import type { AppContext } from '../../adapters/http/context.ts';
import { messagingDeps, messagingStores, messagingUnitOfWork } from '../../adapters/connections/stores.ts';
import { sendQueue } from '../../adapters/postgres/repositories/send-queue.ts';
import { bootstrapOwner } from '../../core/identity/bootstrap.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { applySessionUpdate, createConnection } from '../../core/connections/connections.ts';
import { DriverError, type NetworkDriver } from '../../core/connections/driver.ts';
import { createSender } from '../../core/messaging/deliver.ts';
import { acceptSend, type SendDeps } from '../../core/messaging/send.ts';
import { settleSendByEvidence } from '../../core/messaging/settle.ts';
import {
  IN_DOUBT_ERROR,
  IN_DOUBT_GRACE_SECONDS,
  SEND_LEASE_SECONDS,
  SEND_TRANSITIONS,
  type SendState,
} from '../../core/messaging/send-record.ts';
import { MovableClock } from '../support/movable-clock.ts';
import { openTestContext, type TestContext } from '../support/context.ts';

/**
 * The send record under random crash points (core/messaging/send-record.ts): workers claim,
 * send and record against a network that answers, refuses, times out, or sees the worker die
 * before or after the request went out; time moves past leases and grace periods; the network's
 * evidence (its status callbacks carrying our id) arrives at random moments.
 *
 * Issue: "Campaigns never resend an in-doubt recipient; direct API sends resend only what the
 * network provably never took, and otherwise end FAILED with a stated reason", "0 duplicates".
 *
 * Checked after every step:
 *   - the network received no message twice;
 *   - each message's record moved only along the transition table (a path of allowed events);
 *   - a message SENT was received by the network, one FAILED for a refusal was not.
 * And once every worker is healthy again and time has run on: every send ended, SENT exactly
 * when the network has it, and FAILED otherwise.
 */

type Behaviour = 'answer' | 'refuse_retry' | 'refuse_final' | 'timeout_taken' | 'timeout_lost' | 'die_before_wire' | 'die_after_wire';
/** What the record looks like from outside: the queue's state, or how the message ended. */
type Observed = SendState | 'ended_sent';

interface Network {
  /** Times each of our messages reached the network as a message of its own. */
  received: Map<string, number>;
  /** The network recognises a repeat of a send by our id (as the sandbox does): a repeat is not a second message. */
  idempotent: boolean;
}

interface Real {
  ctx: AppContext;
  clock: MovableClock;
  network: Network;
  connectionId: string;
  actor: Actor;
  ids: string[];
  observed: Map<string, Observed>;
}

let testContext: TestContext;
let ctx: AppContext;
let actor: Actor;
let connectionId: string;
const clock = new MovableClock();

beforeAll(async () => {
  testContext = await openTestContext({ clock });
  ctx = testContext.ctx;
  await messagingUnitOfWork(ctx).transaction(async (stores) => {
    const owner = await bootstrapOwner(stores, ctx, { email: `record-${crypto.randomUUID().slice(0, 6)}@example.com`, workspace: 'Record', plan: 'PRO' });
    actor = { userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'] };
    const deps = messagingDeps(ctx);
    const created = await createConnection(stores, deps, actor, { name: 'record', driver: 'sandbox' });
    await applySessionUpdate(stores, deps, created.id, { event: 'connect' });
    connectionId = (await applySessionUpdate(stores, deps, created.id, { event: 'opened', phoneNumber: '15550100000' }))!.id;
  });
});

afterAll(async () => {
  await testContext.close();
});

/** The network, behaving as the step says; a dying worker's calls never return. */
function depsFor(real: Real, behaviour: Behaviour): SendDeps {
  const deps = messagingDeps(ctx);
  const sandbox = deps.drivers.get('sandbox')!;
  const take = (id: string) => {
    if (real.network.idempotent && real.network.received.has(id)) return;
    real.network.received.set(id, (real.network.received.get(id) ?? 0) + 1);
  };
  const send: NetworkDriver['send'] = async (_connection, message) => {
    const id = message.clientMessageId!;
    switch (behaviour) {
      case 'answer':
        take(id);
        return { externalId: `NET.${id}` };
      case 'refuse_retry':
        throw new DriverError('throttled', 130429, true);
      case 'refuse_final':
        throw new DriverError('not on the network', 'not_on_network', false);
      case 'timeout_taken':
        take(id);
        throw new DriverError('timed out', 'TIMEOUT', true, true);
      case 'timeout_lost':
        throw new DriverError('timed out', 'TIMEOUT', true, true);
      case 'die_after_wire':
        take(id);
        return new Promise(() => {});
      case 'die_before_wire':
        return new Promise(() => {});
    }
  };
  const capabilities = { ...sandbox.capabilities, idempotentSends: real.network.idempotent };
  return { ...deps, drivers: new Map([...deps.drivers, ['sandbox', { ...sandbox, capabilities, send }]]) };
}

/** One worker's turn: claims what is due and sends it; a dying worker is left hanging. */
async function workerTurn(real: Real, behaviour: Behaviour): Promise<void> {
  const owner = `worker-${crypto.randomUUID()}`;
  const queue = sendQueue(ctx.db);
  const deps = depsFor(real, behaviour);
  const now = clock.now();
  const { claimed, givenUp } = await queue.claimDue(owner, now, after(now, SEND_LEASE_SECONDS), after(now, IN_DOUBT_GRACE_SECONDS), 1000);
  const sender = createSender(messagingUnitOfWork(ctx), deps, { owner, queue });
  await sender.giveUp(givenUp.filter((id) => real.ids.includes(id)));
  const delivered = sender.deliver(claimed.filter((c) => c.message.connectionId === real.connectionId));
  if (behaviour.startsWith('die')) {
    // Long enough for the in-flight marks to be written; the calls themselves never return.
    await Bun.sleep(30);
  } else {
    expect(await delivered).toEqual([]);
  }
}

/** The network's evidence for everything it took (status callbacks carrying our id). */
async function evidence(real: Real): Promise<void> {
  const connection = (await messagingStores(ctx.db, ctx).connections.find(real.connectionId))!;
  for (const id of real.network.received.keys()) {
    await messagingUnitOfWork(ctx).transaction((stores) => settleSendByEvidence(stores, messagingDeps(ctx), connection, { messageId: id, externalId: `NET.${id}` }));
  }
}

async function observe(real: Real): Promise<Map<string, Observed>> {
  if (real.ids.length === 0) return new Map();
  const rows = await ctx.db.selectFrom('messages').select(['id', 'status', 'error', 'send_state']).where('id', 'in', real.ids).execute();
  return new Map(
    rows.map((row) => {
      const error = (typeof row.error === 'string' ? JSON.parse(row.error) : row.error) as { code?: unknown } | null;
      const state: Observed = row.send_state ?? (row.status === 'FAILED' ? (error?.code === IN_DOUBT_ERROR.code ? 'unconfirmed' : 'failed') : 'ended_sent');
      return [row.id, state];
    }),
  );
}

/** States reachable from `from` through the table (`sent` and `settled` look alike from outside). */
function reachable(from: Observed): Set<Observed> {
  const seen = new Set<Observed>([from]);
  const todo: SendState[] = from === 'ended_sent' ? [] : [from];
  while (todo.length > 0) {
    for (const next of Object.values(SEND_TRANSITIONS[todo.pop()!])) {
      const shown: Observed = next === 'sent' || next === 'settled' ? 'ended_sent' : next;
      if (!seen.has(shown)) {
        seen.add(shown);
        if (shown !== 'ended_sent') todo.push(next);
      }
    }
  }
  return seen;
}

async function checkInvariants(real: Real): Promise<void> {
  for (const [id, count] of real.network.received) expect({ id, count }).toEqual({ id, count: 1 });
  const now = await observe(real);
  for (const [id, state] of now) {
    const before = real.observed.get(id) ?? 'queued';
    if (!reachable(before).has(state)) throw new Error(`message ${id} went from ${before} to ${state}, which the transition table does not allow`);
    if (state === 'ended_sent') expect({ id, received: real.network.received.get(id) ?? 0 }).toEqual({ id, received: 1 });
    if (state === 'failed') expect({ id, received: real.network.received.get(id) ?? 0 }).toEqual({ id, received: 0 });
  }
  real.observed = now;
}

type Command = fc.AsyncCommand<object, Real>;

class Accept implements Command {
  constructor(readonly contact: number) {}
  check = () => true;
  async run(_model: object, real: Real) {
    const { message } = await messagingUnitOfWork(ctx).transaction((stores) =>
      acceptSend(stores, messagingDeps(ctx), real.actor, real.connectionId, { to: `+55119000000${10 + this.contact}`, content: { kind: 'text', text: 'hello' } }),
    );
    real.ids.push(message.id);
    await checkInvariants(real);
  }
  toString = () => `accept(contact ${this.contact})`;
}

class WorkerTurn implements Command {
  constructor(readonly behaviour: Behaviour) {}
  check = () => true;
  async run(_model: object, real: Real) {
    await workerTurn(real, this.behaviour);
    await checkInvariants(real);
  }
  toString = () => `worker(${this.behaviour})`;
}

class TimePasses implements Command {
  constructor(readonly seconds: number) {}
  check = () => true;
  async run(_model: object, real: Real) {
    real.clock.advance(this.seconds * 1000);
    await checkInvariants(real);
  }
  toString = () => `wait(${this.seconds} s)`;
}

class NetworkEvidence implements Command {
  check = () => true;
  async run(_model: object, real: Real) {
    await evidence(real);
    await checkInvariants(real);
  }
  toString = () => 'evidence';
}

const commands = [
  fc.integer({ min: 0, max: 2 }).map((contact) => new Accept(contact)),
  fc.constantFrom<Behaviour>('answer', 'refuse_retry', 'refuse_final', 'timeout_taken', 'timeout_lost', 'die_before_wire', 'die_after_wire').map((b) => new WorkerTurn(b)),
  fc.constantFrom(1, 5, SEND_LEASE_SECONDS + 1, IN_DOUBT_GRACE_SECONDS + 1).map((s) => new TimePasses(s)),
  fc.constant(new NetworkEvidence()),
];

describe.each([
  ['a network that would deliver a repeat twice (Cloud API, Baileys)', false],
  ['a network that recognises a repeat by our id (sandbox)', true],
])('the send record under random crash points: %s', (_name, idempotent) => {
  test('no message reaches the network twice; records move only along the table; every send ends SENT exactly when the network has it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 30 }), async (cmds) => {
        const real: Real = { ctx, clock, network: { received: new Map(), idempotent }, connectionId, actor, ids: [], observed: new Map() };
        await fc.asyncModelRun(() => ({ model: {}, real }), cmds);

        // Every worker healthy again, time running on, the network's callbacks arriving: all ends.
        for (let round = 0; round < 8; round++) {
          clock.advance((IN_DOUBT_GRACE_SECONDS + SEND_LEASE_SECONDS) * 1000);
          await workerTurn(real, 'answer');
          await evidence(real);
          await checkInvariants(real);
        }
        for (const [id, state] of await observe(real)) {
          const received = real.network.received.get(id) ?? 0;
          // Given up in doubt only where a repeat would be a second message; never when the network took it.
          const ended = received === 1 ? 'ended_sent' : state === 'unconfirmed' && !idempotent ? 'unconfirmed' : 'failed';
          expect({ id, state, received }).toEqual({ id, state: ended, received });
        }
      }),
      { numRuns: 25 },
    );
  }, 600_000);
});

function after(now: Date, seconds: number): Date {
  return new Date(now.getTime() + seconds * 1000);
}
