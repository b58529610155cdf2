import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { intlZoneRules } from '../../adapters/time/zone-rules.ts';
import { connectionStore } from '../../adapters/postgres/repositories/connection-store.ts';
import { creditStore } from '../../adapters/postgres/repositories/credit-store.ts';
import { migrate } from '../../adapters/postgres/migrator.ts';
import type { Campaign, RecipientView, ReportedRecipientStatus } from '../../core/campaigns/campaign.ts';
import { cancelCampaign, createCampaign, pauseCampaign, resumeCampaign, type CampaignDeps, type CampaignStores } from '../../core/campaigns/campaigns.ts';
import type { CampaignStatus } from '../../core/campaigns/campaign-status.ts';
import { busiestWindow, MAX_BATCH, WINDOW_MS } from '../../core/campaigns/pacing.ts';
import { runCampaign } from '../../core/campaigns/sending.ts';
import type { Connection } from '../../core/connections/connection.ts';
import type { NetworkDriver } from '../../core/connections/driver.ts';
import type { Actor } from '../../core/identity/identity.ts';
import type { ChatMessage } from '../../core/messaging/message.ts';
import { openAccount } from '../../core/plans/credit-ledger.ts';
import { consumeCredits, releaseCredits } from '../../core/plans/metering.ts';
import { DEFAULT_PLANS, type PlanCatalog } from '../../core/plans/plans.ts';
import type { Clock } from '../../core/shared/ports.ts';
import type { UnitOfWork } from '../../core/shared/unit-of-work.ts';
import { campaignsPlugin } from '../../plugins/campaigns/index.ts';
import { campaignStores } from '../../plugins/campaigns/use-case-stores.ts';
import { FakeCampaignDatabase } from '../support/campaign-fakes.ts';
import { connectionRow } from '../support/connection-row.ts';
import { openTestContext, type TestContext } from '../support/context.ts';
import { onPostgres } from '../support/database.ts';
import { expectDomainError } from '../support/expect-domain-error.ts';
import { createOutbound } from '../../adapters/outbound/outbound.ts';
import { NOTHING_ALLOWED } from '../../core/shared/outbound-policy.ts';

/**
 * The campaign state machine and its credits, model-based (issue 8, Tests): "Model-based property
 * tests: the campaign state machine and the credit ledger under random
 * create/pause/resume/cancel/send-success/send-failure/crash sequences: credits never negative,
 * reserved = sent + refunded + in flight, no recipient sent twice, pacing never exceeded in any
 * window." And issue 8 item 3: "cancel refunds exactly the unsent"; item 4: "Exactly-once sending
 * per recipient across worker crashes and restarts (an idempotency key per recipient)".
 *
 * The system is the real use cases (createCampaign, pauseCampaign, resumeCampaign, cancelCampaign,
 * runCampaign; a send's outcome settled as core/messaging/deliver.ts does it: success marks the
 * message SENT and consumes its credit, failure marks it FAILED and releases it) over the ports,
 * either in memory (tests/support/campaign-fakes.ts) or the real Postgres adapters of the plugin.
 * A model clock moves only by command. A crash is a pacer run whose transaction throws midway.
 *
 * The model is a list of recipients per campaign, each QUEUED, SENDING, SENT, FAILED, OPTED_OUT,
 * INVALID or CANCELLED, the workspace's available credits and the campaign statuses. How many
 * recipients a pacer run takes is the pace's choice (tests/property/campaign-pacing.test.ts checks
 * it): the model reads the number and checks it is the head of the queue, within the pace.
 */

const WORKSPACE_NOW = Date.parse('2027-01-11T10:00:00.000Z');
const MESSAGE = { text: 'Hello {{name|friend}}, our January news' };

/** Numbers as people type them, with the E.164 digits the campaign must keep (null: not a number). */
const PHONES: ReadonlyArray<{ raw: string; e164: string | null }> = [
  { raw: '+55 (11) 99999-0001', e164: '5511999990001' },
  { raw: '0055 11 99999 0001', e164: '5511999990001' },
  { raw: '+49 151 2345 6701', e164: '4915123456701' },
  { raw: '4915123456702', e164: '4915123456702' },
  { raw: '+33-6-12-34-56-78', e164: '33612345678' },
  { raw: '+1 (415) 555-0100', e164: '14155550100' },
  { raw: '14155550101@s.whatsapp.net', e164: '14155550101' },
  { raw: '+44 7700 900123', e164: '447700900123' },
  { raw: '+1 212 555 0199', e164: '12125550199' },
  { raw: 'not a phone', e164: null },
  { raw: '12345', e164: null },
  { raw: '+0 123 456 789', e164: null },
];
const VALID_E164 = [...new Set(PHONES.map((p) => p.e164).filter((p): p is string => p !== null))];

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

type ModelRecipientState = 'QUEUED' | 'SENDING' | 'SENT' | 'FAILED' | 'OPTED_OUT' | 'INVALID' | 'CANCELLED';

interface ModelRecipient {
  position: number;
  phone: string;
  state: ModelRecipientState;
  /** Model time of its send, when it was handed to the network. */
  sentAt: number | null;
}

interface ModelCampaign {
  id: string;
  status: CampaignStatus;
  perMinute: number | null;
  jitterSeconds: number;
  startAt: number | null;
  started: boolean;
  /** Credits reserved at launch: the recipients QUEUED then. */
  reserved: number;
  optedOutAtCreate: number;
  recipients: ModelRecipient[];
  /** Model time the pacer restarted from scratch (launch, resume): no slot carried over. */
  freshSince: number;
}

interface Model {
  now: number;
  grant: number;
  available: number;
  optedOut: Set<string>;
  campaigns: ModelCampaign[];
}

const ACTIVE: readonly CampaignStatus[] = ['SCHEDULED', 'RUNNING', 'PAUSED'];
const queuedOf = (c: ModelCampaign) => c.recipients.filter((r) => r.state === 'QUEUED');
const countOf = (c: ModelCampaign, state: ModelRecipientState) => c.recipients.filter((r) => r.state === state).length;

/** The statuses a person's command leads to, written from the campaign's description, not the table. */
function modelAfter(c: ModelCampaign, command: 'pause' | 'resume' | 'cancel', now: number): CampaignStatus | null {
  if (command === 'pause') return c.status === 'SCHEDULED' || c.status === 'RUNNING' ? 'PAUSED' : null;
  if (command === 'cancel') return ACTIVE.includes(c.status) ? 'CANCELLED' : null;
  if (c.status !== 'PAUSED') return null;
  return c.startAt !== null && c.startAt > now && !c.started ? 'SCHEDULED' : 'RUNNING';
}

// ---------------------------------------------------------------------------------------------
// The system: the use cases over some ports, with a crash switch and the pacer's wake-ups
// ---------------------------------------------------------------------------------------------

class ModelClock implements Clock {
  constructor(public at: number) {}
  now() {
    return new Date(this.at);
  }
}

class Crash extends Error {}

/** What the ports are: in memory or the plugin's Postgres adapters. */
interface Backend {
  uow: UnitOfWork<CampaignStores>;
  actor: Actor;
  connectionId: string;
  /** Every message stored under the campaign's idempotency keys (the raw rows, not one per key). */
  messagesOf(campaignId: string): Promise<Array<{ key: string; createdAt: number }>>;
}

interface Observed {
  available: number;
  campaignCount: number;
  campaigns: Array<{
    campaign: Campaign;
    reservation: { amount: number; consumed: number; refunded: number; status: string } | null;
    recipients: RecipientView[];
    messages: Map<string, ChatMessage>;
    rawMessages: Array<{ key: string; createdAt: number }>;
  }>;
}

class System {
  /** The pacer's committed wake-ups per campaign, in order. */
  readonly wakes = new Map<string, Array<{ tick: number; at: number }>>();
  /** When set, the next transaction throws after this many store calls. */
  crashAfter: number | null = null;
  readonly deps: CampaignDeps;
  readonly uow: UnitOfWork<CampaignStores>;

  constructor(
    readonly backend: Backend,
    readonly clock: ModelClock,
    grant: number,
    seed: number,
  ) {
    let state = seed >>> 0 || 1;
    const plans: PlanCatalog = { FREE: { ...DEFAULT_PLANS.FREE, messagesPerMonth: grant }, PRO: DEFAULT_PLANS.PRO };
    const driver = { capabilities: { official: false, sendWindow: false, templates: false, carousels: false, flows: false, typing: true, pairing: 'instant' } } as unknown as NetworkDriver;
    this.deps = {
      clock,
      ids: { next: () => crypto.randomUUID() },
      plans,
      drivers: new Map([['sandbox', driver]]),
      zones: intlZoneRules,
      outbound: createOutbound(NOTHING_ALLOWED),
      // A deterministic uniform fraction (xorshift32) from the run's seed: the pacer's jitter.
      fraction: () => {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        return (state >>> 0) / 2 ** 32;
      },
    };
    this.uow = {
      transaction: async (work) => {
        const pending: Array<{ campaignId: string; tick: number; at: number }> = [];
        const crashAt = this.crashAfter;
        this.crashAfter = null;
        let calls = 0;
        const result = await backend.uow.transaction(async (stores) => {
          const recorded: CampaignStores = { ...stores, pacer: { wake: async (campaignId, tick, at) => void pending.push({ campaignId, tick, at: at.getTime() }) } };
          if (crashAt === null) return work(recorded);
          const counting = Object.fromEntries(
            Object.entries(recorded).map(([name, store]) => [
              name,
              new Proxy(store as object, {
                get(target, key) {
                  const value = Reflect.get(target, key);
                  if (typeof value !== 'function') return value;
                  return (...args: unknown[]) => {
                    calls += 1;
                    if (calls > crashAt) throw new Crash(`crash before ${name}.${String(key)}`);
                    return value.apply(target, args);
                  };
                },
              }),
            ]),
          ) as unknown as CampaignStores;
          return work(counting);
        });
        for (const wake of pending) {
          const list = this.wakes.get(wake.campaignId) ?? [];
          list.push({ tick: wake.tick, at: wake.at });
          this.wakes.set(wake.campaignId, list);
        }
        return result;
      },
    };
  }

  latestWake(campaignId: string) {
    return this.wakes.get(campaignId)?.at(-1);
  }

  /** What the system holds, read through the ports (as the routes read it). */
  async observe(ids: readonly string[]): Promise<Observed> {
    const { actor } = this.backend;
    const read = await this.backend.uow.transaction(async (stores) => {
      const account = await stores.credits.lockAccount(actor.workspaceId);
      const list = await stores.campaigns.list(actor.workspaceId, { page: 1, perPage: 100, search: undefined });
      const campaigns: Observed['campaigns'] = [];
      for (const id of ids) {
        const campaign = (await stores.campaigns.get(actor.workspaceId, id))!;
        const found = campaign.reservationId ? await stores.credits.findReservation(campaign.reservationId) : undefined;
        const recipients: RecipientView[] = [];
        for (let page = 1; ; page++) {
          const got = await stores.recipients.list(id, { page, perPage: 100, search: undefined });
          recipients.push(...got.data);
          if (page >= got.totalPages) break;
        }
        const messages = new Map<string, ChatMessage>();
        for (const r of recipients) if (r.messageId) messages.set(r.messageId, (await stores.messages.get(r.messageId))!);
        const reservation = found ? { amount: found.amount, consumed: found.consumed, refunded: found.refunded, status: found.status } : null;
        campaigns.push({ campaign, reservation, recipients, messages, rawMessages: [] });
      }
      return { available: account!.available, campaignCount: list.total, campaigns };
    });
    for (const c of read.campaigns) c.rawMessages = await this.backend.messagesOf(c.campaign.id);
    return read;
  }
}

/** Compares the system with the model and checks the invariants of issue 8 on what the system holds. */
async function verify(model: Model, system: System): Promise<Observed> {
  const seen = await system.observe(model.campaigns.map((c) => c.id));

  // "credits never negative", and every credit granted is available, held or consumed.
  expect(seen.available).toBeGreaterThanOrEqual(0);
  expect(seen.available).toBe(model.available);
  expect(seen.campaignCount).toBe(model.campaigns.length);
  let held = 0;
  let consumed = 0;

  model.campaigns.forEach((mc, i) => {
    const { campaign, reservation, recipients, messages, rawMessages } = seen.campaigns[i]!;
    expect(campaign.status).toBe(mc.status);
    expect(recipients.map((r) => ({ position: r.position, phone: r.phone, status: r.status }))).toEqual(
      mc.recipients.map((r) => ({ position: r.position, phone: r.phone, status: (r.state === 'SENDING' ? 'SENDING' : r.state) as ReportedRecipientStatus })),
    );

    // "reserved = sent + refunded + in flight": the reservation holds exactly the queued and the
    // in-flight while active; once the campaign is over only the in-flight.
    const queued = countOf(mc, 'QUEUED');
    const inFlight = countOf(mc, 'SENDING');
    const sent = countOf(mc, 'SENT');
    expect(reservation).not.toBeNull();
    const r = reservation!;
    expect(r.amount).toBe(mc.reserved);
    expect(campaign.audienceSize).toBe(mc.reserved);
    const remaining = r.amount - r.consumed - r.refunded;
    if (ACTIVE.includes(mc.status)) expect(remaining).toBe(queued + inFlight);
    else {
      expect(queued).toBe(0);
      expect(remaining).toBe(inFlight);
    }
    expect(r.consumed).toBe(sent);
    expect(r.refunded).toBe(countOf(mc, 'FAILED') + countOf(mc, 'CANCELLED') + countOf(mc, 'OPTED_OUT') - mc.optedOutAtCreate);
    expect(r.status).toBe(remaining === 0 ? 'SETTLED' : 'OPEN');
    if (r.status === 'OPEN') held += remaining;
    consumed += r.consumed;

    // "no recipient sent twice": one message per dispatched recipient, keyed by its position.
    const dispatched = recipients.filter((x) => x.messageId !== null);
    expect(rawMessages.map((m) => m.key).sort()).toEqual(dispatched.map((x) => `campaign:${campaign.id}:${x.position}`).sort());
    for (const x of dispatched) {
      const message = messages.get(x.messageId!)!;
      expect(message.idempotencyKey).toBe(`campaign:${campaign.id}:${x.position}`);
      expect(message.remoteJid).toBe(`${x.phone}@s.whatsapp.net`);
      expect(message.reservationId).toBe(campaign.reservationId);
    }
    expect([...messages.values()].filter((m) => m.status === 'SENT').length).toBe(r.consumed);

    // "pacing never exceeded in any window", by the model clock.
    if (mc.perMinute !== null) {
      expect(busiestWindow(rawMessages.map((m) => m.createdAt))).toBeLessThanOrEqual(mc.perMinute);
      expect(busiestWindow(dispatched.map((x) => x.dispatchedAt!.getTime()))).toBeLessThanOrEqual(mc.perMinute);
    }

    // A running or scheduled campaign always has a pacer run waiting for its current run number;
    // a paused or finished one has none (its number moved on).
    const wake = system.latestWake(campaign.id);
    const live = mc.status === 'RUNNING' || mc.status === 'SCHEDULED';
    expect(wake !== undefined && wake.tick === campaign.tick).toBe(live);
  });
  expect(seen.available + held + consumed).toBe(model.grant);
  return seen;
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

type CampaignCommand = fc.AsyncCommand<Model, System>;

class CreateCommand implements CampaignCommand {
  constructor(
    readonly audience: number[],
    readonly perMinute: number | null,
    readonly jitterSeconds: number,
    readonly startInMs: number | null,
  ) {}
  check() {
    return true;
  }
  async run(model: Model, system: System) {
    const raw = this.audience.map((i) => PHONES[i]!);
    // The model's audience: each number once (the first time), invalid ones reported.
    const seen = new Set<string>();
    const recipients: ModelRecipient[] = [];
    for (const p of raw) {
      if (p.e164 === null) {
        recipients.push({ position: recipients.length, phone: p.raw, state: 'INVALID', sentAt: null });
        continue;
      }
      if (seen.has(p.e164)) continue;
      seen.add(p.e164);
      recipients.push({ position: recipients.length, phone: p.e164, state: model.optedOut.has(p.e164) ? 'OPTED_OUT' : 'QUEUED', sentAt: null });
    }
    const toSend = recipients.filter((r) => r.state === 'QUEUED').length;
    const startAt = this.startInMs === null ? null : model.now + this.startInMs;
    const input = {
      name: 'Property campaign',
      connectionId: system.backend.connectionId,
      message: MESSAGE,
      audience: { numbers: raw.map((p) => p.raw) },
      schedule: startAt === null ? undefined : { startAt: new Date(startAt).toISOString() },
      pace: { messagesPerMinute: this.perMinute, jitterSeconds: this.jitterSeconds },
    };
    const create = () => system.uow.transaction((stores) => createCampaign(stores, system.deps, system.backend.actor, input));
    if (toSend === 0) {
      await expectDomainError(create, 'unprocessable');
    } else if (toSend > model.available) {
      // Issue 8: "USER_PLAN_EXCEEDED_MESSAGES and no campaign if it cannot be covered".
      await expectDomainError(create, 'forbidden', 'USER_PLAN_EXCEEDED_MESSAGES');
    } else {
      const created = await create();
      expect(created.duplicates).toBe(raw.length - recipients.length);
      const later = startAt !== null && startAt > model.now;
      expect(created.campaign.status).toBe(later ? 'SCHEDULED' : 'RUNNING');
      model.available -= toSend;
      model.campaigns.push({
        id: created.campaign.id,
        status: later ? 'SCHEDULED' : 'RUNNING',
        perMinute: this.perMinute,
        jitterSeconds: this.jitterSeconds,
        startAt,
        started: !later,
        reserved: toSend,
        optedOutAtCreate: recipients.filter((r) => r.state === 'OPTED_OUT').length,
        recipients,
        freshSince: model.now,
      });
    }
    await verify(model, system);
  }
  toString() {
    return `Create([${this.audience.join(',')}], pace ${this.perMinute}/min ±${this.jitterSeconds}s, start ${this.startInMs === null ? 'now' : `+${this.startInMs}ms`})`;
  }
}

/** A pacer run with the campaign's latest scheduled run number; `crashAfter`: its transaction dies midway. */
class TickCommand implements CampaignCommand {
  constructor(
    readonly index: number,
    readonly crashAfter: number | null,
  ) {}
  check(model: Readonly<Model>) {
    return model.campaigns.length > 0;
  }
  async run(model: Model, system: System) {
    const mc = model.campaigns[this.index % model.campaigns.length]!;
    const wake = system.latestWake(mc.id)!;
    const before = await system.observe(model.campaigns.map((c) => c.id));
    const wakesBefore = system.wakes.get(mc.id)!.length;
    system.crashAfter = this.crashAfter;
    try {
      await runCampaign(system.uow, system.deps, { campaignId: mc.id, tick: wake.tick });
    } catch (error) {
      if (!(error instanceof Crash)) throw error;
      // A worker that dies mid-run leaves nothing: the run is retried from what was committed.
      expect(await system.observe(model.campaigns.map((c) => c.id))).toEqual(before);
      expect(system.wakes.get(mc.id)!.length).toBe(wakesBefore);
      await verify(model, system);
      return;
    }
    system.crashAfter = null;
    if (mc.status !== 'RUNNING' && mc.status !== 'SCHEDULED') {
      // A stale run (paused, cancelled, completed since): nothing happens.
      expect(await system.observe(model.campaigns.map((c) => c.id))).toEqual(before);
      expect(system.wakes.get(mc.id)!.length).toBe(wakesBefore);
      await verify(model, system);
      return;
    }
    if (mc.status === 'SCHEDULED') {
      if (mc.startAt !== null && mc.startAt > model.now) {
        // Not yet: it sleeps until its start time.
        expect(system.latestWake(mc.id)).toEqual({ tick: wake.tick, at: mc.startAt });
        await verify(model, system);
        return;
      }
      mc.status = 'RUNNING';
      mc.started = true;
    }
    const queue = queuedOf(mc);
    const seen = await system.observe([mc.id]);
    const statuses = new Map(seen.campaigns[0]!.recipients.map((r) => [r.position, r.status]));
    const taken = queue.filter((r) => statuses.get(r.position) !== 'QUEUED').length;
    // The run takes the head of the queue, in audience order, within the pace.
    expect(taken).toBeLessThanOrEqual(MAX_BATCH);
    if (mc.perMinute === null) expect(taken).toBe(Math.min(queue.length, MAX_BATCH));
    else {
      expect(taken).toBeLessThanOrEqual(mc.perMinute);
      // Liveness: with room in the window and a full gap since its last send, a send is due.
      const sends = mc.recipients.filter((r) => r.sentAt !== null).map((r) => r.sentAt!);
      const inWindow = sends.filter((t) => t > model.now - WINDOW_MS).length;
      const last = Math.max(mc.freshSince, ...sends.filter((t) => t >= mc.freshSince));
      const fresh = sends.every((t) => t < mc.freshSince);
      const gapDone = fresh || model.now - last >= WINDOW_MS / mc.perMinute + mc.jitterSeconds * 1000;
      if (queue.length > 0 && inWindow < mc.perMinute && gapDone) expect(taken).toBeGreaterThanOrEqual(1);
    }
    for (const r of queue.slice(0, taken)) {
      if (model.optedOut.has(r.phone)) {
        // Opted out since the campaign was created: no message, the credit goes back.
        r.state = 'OPTED_OUT';
        model.available += 1;
      } else {
        r.state = 'SENDING';
        r.sentAt = model.now;
      }
    }
    if (queuedOf(mc).length === 0 && countOf(mc, 'SENDING') === 0) mc.status = 'COMPLETED';
    await verify(model, system);
  }
  toString() {
    return this.crashAfter === null ? `Tick(#${this.index})` : `CrashingTick(#${this.index}, after ${this.crashAfter} calls)`;
  }
}

/** A pacer run with an earlier run number than the current one does nothing. */
class StaleTickCommand implements CampaignCommand {
  constructor(readonly index: number) {}
  check(model: Readonly<Model>) {
    return model.campaigns.length > 0;
  }
  async run(model: Model, system: System) {
    const mc = model.campaigns[this.index % model.campaigns.length]!;
    const wakes = system.wakes.get(mc.id)!;
    const current = (await system.observe([mc.id])).campaigns[0]!.campaign.tick;
    const stale = wakes.filter((w) => w.tick < current);
    if (stale.length === 0) return;
    const before = await system.observe(model.campaigns.map((c) => c.id));
    const count = wakes.length;
    await runCampaign(system.uow, system.deps, { campaignId: mc.id, tick: stale[this.index % stale.length]!.tick });
    expect(await system.observe(model.campaigns.map((c) => c.id))).toEqual(before);
    expect(system.wakes.get(mc.id)!.length).toBe(count);
  }
  toString() {
    return `StaleTick(#${this.index})`;
  }
}

class AdvanceClockCommand implements CampaignCommand {
  constructor(readonly ms: number) {}
  check() {
    return true;
  }
  async run(model: Model, system: System) {
    model.now += this.ms;
    system.clock.at = model.now;
  }
  toString() {
    return `Advance(${this.ms}ms)`;
  }
}

/** The pacer woken when it asked to be, or late (a busy worker), by the model clock. */
class AdvanceToWakeCommand implements CampaignCommand {
  constructor(
    readonly index: number,
    readonly lateMs: number,
  ) {}
  check(model: Readonly<Model>) {
    return model.campaigns.length > 0;
  }
  async run(model: Model, system: System) {
    const mc = model.campaigns[this.index % model.campaigns.length]!;
    const wake = system.latestWake(mc.id)!;
    model.now = Math.max(model.now, wake.at + this.lateMs);
    system.clock.at = model.now;
  }
  toString() {
    return `AdvanceToWake(#${this.index}, +${this.lateMs}ms)`;
  }
}

class PersonCommand implements CampaignCommand {
  constructor(
    readonly command: 'pause' | 'resume' | 'cancel',
    readonly index: number,
  ) {}
  check(model: Readonly<Model>) {
    return model.campaigns.length > 0;
  }
  async run(model: Model, system: System) {
    const mc = model.campaigns[this.index % model.campaigns.length]!;
    const to = modelAfter(mc, this.command, model.now);
    const { actor } = system.backend;
    const act = () =>
      system.uow.transaction(async (stores) => {
        if (this.command === 'pause') return { campaign: await pauseCampaign(stores, system.deps, actor, mc.id), refunded: 0 };
        if (this.command === 'resume') return { campaign: await resumeCampaign(stores, system.deps, actor, mc.id), refunded: 0 };
        return cancelCampaign(stores, system.deps, actor, mc.id);
      });
    if (to === null) {
      await expectDomainError(act, 'conflict');
    } else {
      const result = await act();
      expect(result.campaign.status).toBe(to);
      if (this.command === 'cancel') {
        // "cancel refunds exactly the unsent".
        const unsent = queuedOf(mc);
        expect(result.refunded).toBe(unsent.length);
        for (const r of unsent) r.state = 'CANCELLED';
        model.available += unsent.length;
      }
      if (this.command === 'resume') {
        mc.freshSince = model.now;
        const wake = system.latestWake(mc.id)!;
        expect(wake.at).toBe(to === 'SCHEDULED' ? mc.startAt! : model.now);
      }
      mc.status = to;
    }
    await verify(model, system);
  }
  toString() {
    return `${this.command[0]!.toUpperCase()}${this.command.slice(1)}(#${this.index})`;
  }
}

/** The network's answer to one message in flight, settled as core/messaging/deliver.ts does. */
class SendOutcomeCommand implements CampaignCommand {
  constructor(
    readonly index: number,
    readonly success: boolean,
  ) {}
  check(model: Readonly<Model>) {
    return model.campaigns.some((c) => c.recipients.some((r) => r.state === 'SENDING'));
  }
  async run(model: Model, system: System) {
    const flying = model.campaigns.flatMap((c) => c.recipients.filter((r) => r.state === 'SENDING').map((r) => ({ c, r })));
    const { c, r } = flying[this.index % flying.length]!;
    const view = (await system.observe([c.id])).campaigns[0]!.recipients.find((x) => x.position === r.position)!;
    const messageId = view.messageId!;
    const now = () => system.clock.now();
    await system.uow.transaction(async (stores) => {
      const current = await stores.messages.lock(messageId);
      if (!current || current.status !== 'PENDING') return;
      if (this.success) {
        await stores.messages.update({ ...current, externalId: `wamid.${current.id}`, status: 'SENT', updatedAt: now() });
        if (current.reservationId) await consumeCredits(stores.credits, current.reservationId, 1);
      } else {
        await stores.messages.update({ ...current, status: 'FAILED', error: { code: 131026, title: 'Message undeliverable' }, updatedAt: now() });
        if (current.reservationId) await releaseCredits(stores.credits, current.reservationId, 1);
      }
    });
    r.state = this.success ? 'SENT' : 'FAILED';
    // Credit policy (deliver.ts): consumed once the network accepted it; a failed send costs nothing.
    if (!this.success) model.available += 1;
    await verify(model, system);
  }
  toString() {
    return `${this.success ? 'SendSucceeds' : 'SendFails'}(#${this.index})`;
  }
}

class OptOutCommand implements CampaignCommand {
  constructor(readonly index: number) {}
  check() {
    return true;
  }
  async run(model: Model, system: System) {
    const phone = VALID_E164[this.index % VALID_E164.length]!;
    await system.uow.transaction((stores) => stores.optOuts.add(system.backend.actor.workspaceId, phone, system.clock.now(), 'STOP'));
    model.optedOut.add(phone);
    await verify(model, system);
  }
  toString() {
    return `OptOut(${VALID_E164[this.index % VALID_E164.length]})`;
  }
}

const campaignCommands = (maxCommands: number) =>
  fc.commands(
    [
      fc
        .record({
          audience: fc.array(fc.nat({ max: PHONES.length - 1 }), { minLength: 1, maxLength: 10 }),
          perMinute: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 7, max: 40 })),
          jitter: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20 })),
          start: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: -60_000, max: 300_000 }) }),
        })
        .map((x) => new CreateCommand(x.audience, x.perMinute, x.jitter, x.start)),
      fc.nat().map((i) => new TickCommand(i, null)),
      fc.nat().map((i) => new TickCommand(i, null)),
      fc.nat().map((i) => new TickCommand(i, null)),
      fc.tuple(fc.nat(), fc.integer({ min: 1, max: 24 })).map(([i, n]) => new TickCommand(i, n)),
      fc.nat().map((i) => new StaleTickCommand(i)),
      fc.oneof(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 3_000, max: 30_000 }), fc.integer({ min: 30_000, max: 400_000 })).map((ms) => new AdvanceClockCommand(ms)),
      fc.integer({ min: 0, max: 3_000 }).map((ms) => new AdvanceClockCommand(ms)),
      fc.tuple(fc.nat(), fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 5_000, max: 90_000 }))).map(([i, ms]) => new AdvanceToWakeCommand(i, ms)),
      fc.tuple(fc.nat(), fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 5_000, max: 90_000 }))).map(([i, ms]) => new AdvanceToWakeCommand(i, ms)),
      fc.tuple(fc.constantFrom('pause' as const, 'resume' as const, 'cancel' as const), fc.nat()).map(([c, i]) => new PersonCommand(c, i)),
      fc.tuple(fc.nat(), fc.boolean()).map(([i, ok]) => new SendOutcomeCommand(i, ok)),
      fc.tuple(fc.nat(), fc.boolean()).map(([i, ok]) => new SendOutcomeCommand(i, ok)),
      fc.nat().map((i) => new OptOutCommand(i)),
    ],
    { maxCommands, size: 'max' },
  );

const property = (maxCommands: number, open: (grant: number, clock: ModelClock) => Promise<Backend>) =>
  fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.integer(), campaignCommands(maxCommands), async (grant, seed, commands) => {
    const clock = new ModelClock(WORKSPACE_NOW);
    const system = new System(await open(grant, clock), clock, grant, seed);
    await fc.asyncModelRun(() => ({ model: { now: WORKSPACE_NOW, grant, available: grant, optedOut: new Set<string>(), campaigns: [] }, real: system }), commands);
  });

// ---------------------------------------------------------------------------------------------
// a) In memory
// ---------------------------------------------------------------------------------------------

const WS = '00000000-0000-7000-8000-0000000000e1';
const USER = '00000000-0000-7000-8000-0000000000a1';
const CONNECTION = '00000000-0000-7000-8000-0000000000c1';

function campaignLine(id: string, workspaceId: string, at: Date): Connection {
  return connectionRow({ id, workspaceId, name: 'Campaign line', status: 'CONNECTED', phoneNumber: '4930000000', createdAt: at, updatedAt: at });
}

async function inMemory(grant: number): Promise<Backend> {
  const db = new FakeCampaignDatabase();
  const at = new Date(WORKSPACE_NOW);
  db.state.workspaces.set(WS, { id: WS, name: 'Campaigns', isPersonal: false, plan: 'FREE', createdAt: at });
  db.state.connections.set(CONNECTION, campaignLine(CONNECTION, WS, at));
  db.state.accounts.set(WS, openAccount(WS, { ...DEFAULT_PLANS.FREE, messagesPerMonth: grant }, at));
  return {
    uow: db.uow,
    actor: { userId: USER, workspaceId: WS, roles: ['OWNER'] },
    connectionId: CONNECTION,
    async messagesOf(campaignId) {
      return [...db.state.messages.values()]
        .filter((m) => m.idempotencyKey?.startsWith(`campaign:${campaignId}:`))
        .map((m) => ({ key: m.idempotencyKey!, createdAt: m.createdAt.getTime() }));
    },
  };
}

describe('campaign lifecycle and credits, model-based (in-memory ports)', () => {
  test('create / tick / pause / resume / cancel / send outcomes / crashes / opt-outs keep the invariants of issue 8', async () => {
    await fc.assert(property(40, inMemory), { numRuns: 250 });
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// b) The plugin's Postgres adapters (PGlite; Postgres too when configured)
// ---------------------------------------------------------------------------------------------

describe(`campaign lifecycle and credits, model-based (plugin stores on ${onPostgres ? 'Postgres' : 'PGlite'})`, () => {
  let context: TestContext;
  const clockRef = { clock: new ModelClock(WORKSPACE_NOW) };

  beforeAll(async () => {
    context = await openTestContext({ clock: { now: () => clockRef.clock.now() } });
    await migrate(context.database.db, [{ module: 'campaigns', migrations: campaignsPlugin.migrations! }]);
  }, 60_000);

  afterAll(async () => {
    await context?.close();
  });

  async function onDatabase(grant: number, clock: ModelClock): Promise<Backend> {
    clockRef.clock = clock;
    const { ctx } = context;
    const db = ctx.db;
    const userId = crypto.randomUUID();
    const workspaceId = crypto.randomUUID();
    const connectionId = crypto.randomUUID();
    const at = new Date(WORKSPACE_NOW);
    await db.insertInto('users').values({ id: userId, email: `${userId}@example.com`, name: 'Owner', password_hash: null }).execute();
    await db.insertInto('workspaces').values({ id: workspaceId, name: 'Campaigns', is_personal: false, plan: 'FREE' }).execute();
    await db.insertInto('memberships').values({ workspace_id: workspaceId, user_id: userId, roles: ['OWNER'] }).execute();
    await connectionStore(db, ctx.box).insert(campaignLine(connectionId, workspaceId, at));
    await creditStore(db).saveAccount(openAccount(workspaceId, { ...DEFAULT_PLANS.FREE, messagesPerMonth: grant }, at));
    return {
      uow: { transaction: (work) => db.transaction().execute((trx) => work(campaignStores(trx, ctx))) },
      actor: { userId, workspaceId, roles: ['OWNER'] },
      connectionId,
      async messagesOf(campaignId) {
        const rows = await db
          .selectFrom('messages')
          .select(['idempotency_key', 'created_at'])
          .where('connection_id', '=', connectionId)
          .where(sql<boolean>`idempotency_key like ${`campaign:${campaignId}:%`}`)
          .execute();
        return rows.map((row) => ({ key: row.idempotency_key!, createdAt: new Date(row.created_at).getTime() }));
      },
    };
  }

  test('the same commands on the real stores, in real transactions (a crash rolls back)', async () => {
    await fc.assert(property(25, onDatabase), { numRuns: 12 });
  }, 300_000);
});
