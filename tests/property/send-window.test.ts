import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { chatStore } from '../../adapters/postgres/repositories/chat-store.ts';
import {
  assertMaySend,
  recordContactMessage,
  SEND_WINDOW_HOURS,
  SEND_WINDOW_TRANSITIONS,
  windowState,
  type SendWindow,
  type SendWindowState,
} from '../../core/messaging/send-window.ts';
import { DomainError } from '../../core/shared/errors.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { thrownBy } from '../support/expect-domain-error.ts';

/**
 * The 24-hour send window of official connections (spec 3.4, 8; issue 3: "Property tests: send
 * window (random sequences of contact messages and sends against a model clock)").
 *
 * Spec 3.4:
 * | Window open   | 24 h pass since contact's last message | Window closed | Free text is refused with 422; only a pre-approved template may be sent. |
 * | Window closed | contact replies                        | Window open   | |
 * Spec 8: "Official-connection send window | 24 hours after the contact's last message".
 *
 * The model: a clock and the list of times the contact wrote. The window is open iff
 * `now - max(contact message times) < 24 h`; templates always pass. Contact messages may arrive
 * late and out of order (a delivery retried by the provider carries its original time).
 */

const HOUR = 3_600_000;
const WINDOW = 24 * HOUR;
const T0 = Date.UTC(2025, 5, 1, 12, 0, 0);

interface Model {
  now: number;
  contactTimes: number[];
}

const modelOpen = (m: Model) => m.contactTimes.length > 0 && m.now - Math.max(...m.contactTimes) < WINDOW;
const modelState = (m: Model): SendWindowState => (modelOpen(m) ? 'OPEN' : 'CLOSED');

/** Spec 7.2: "free text into a closed window | standard shape, message says the outbound window expired and a pre-approved template is required | 422". */
function expectWindowRefusal(error: unknown): void {
  expect(error).toBeInstanceOf(DomainError);
  const e = error as DomainError;
  expect(e.kind).toBe('unprocessable');
  expect(e.shape).toBe('standard');
  expect(e.message).toMatch(/window expired/i);
  expect(e.message).toMatch(/pre-approved template/i);
}

// ------------------------------------------------------------------------------------------
// Arbitraries shared by the pure and the database runs
// ------------------------------------------------------------------------------------------

/** Clock steps: small ones, and ones that straddle the 24 h boundary exactly. */
const stepArb = fc.oneof(
  fc.integer({ min: 0, max: 2 * HOUR }),
  fc.integer({ min: 20 * HOUR, max: 30 * HOUR }),
  fc.constantFrom(WINDOW - 1, WINDOW, WINDOW + 1, 1),
);
/** When the contact's message was written, relative to now: mostly now, often late, sometimes very late or slightly ahead (clock skew). */
const contactOffsetArb = fc.oneof(
  fc.constant(0),
  fc.integer({ min: -3 * HOUR, max: 0 }),
  fc.integer({ min: -48 * HOUR, max: -20 * HOUR }),
  fc.integer({ min: 0, max: 5 * 60_000 }),
);

// ------------------------------------------------------------------------------------------
// Pure core: recordContactMessage / windowState / assertMaySend
// ------------------------------------------------------------------------------------------

interface PureReal {
  now: Date;
  window: SendWindow;
}

class Elapse implements fc.Command<Model, PureReal> {
  constructor(readonly ms: number) {}
  check = () => true;
  run(m: Model, r: PureReal) {
    m.now += this.ms;
    r.now = new Date(m.now);
    expect(windowState(r.window, r.now)).toBe(modelState(m));
  }
  toString = () => `elapse(${(this.ms / HOUR).toFixed(3)} h)`;
}

class ContactWrites implements fc.Command<Model, PureReal> {
  constructor(readonly offset: number) {}
  check = () => true;
  run(m: Model, r: PureReal) {
    const at = m.now + this.offset;
    m.contactTimes.push(at);
    r.window = recordContactMessage(r.window, new Date(at));
    // The window remembers the latest contact message, whatever order they arrive in.
    expect(r.window.lastContactMessageAt?.getTime()).toBe(Math.max(...m.contactTimes));
    expect(windowState(r.window, r.now)).toBe(modelState(m));
  }
  toString = () => `contactWrites(${(this.offset / HOUR).toFixed(3)} h)`;
}

class Send implements fc.Command<Model, PureReal> {
  constructor(readonly isTemplate: boolean) {}
  check = () => true;
  run(m: Model, r: PureReal) {
    const error = thrownBy(() => assertMaySend(r.window, r.now, { isTemplate: this.isTemplate }));
    // Templates always pass; free text passes iff the window is open.
    if (this.isTemplate || modelOpen(m)) expect(error).toBeUndefined();
    else expectWindowRefusal(error);
  }
  toString = () => (this.isTemplate ? 'sendTemplate' : 'sendFreeText');
}

const pureCommands = [
  stepArb.map((ms) => new Elapse(ms)),
  contactOffsetArb.map((offset) => new ContactWrites(offset)),
  fc.boolean().map((isTemplate) => new Send(isTemplate)),
];

describe('send window: the pure core against the model clock', () => {
  test('the transition table is spec 3.4', () => {
    expect(SEND_WINDOW_HOURS).toBe(24);
    expect([...SEND_WINDOW_TRANSITIONS].sort((a, b) => `${a.from}${a.trigger}`.localeCompare(`${b.from}${b.trigger}`))).toEqual([
      { from: 'CLOSED', trigger: 'contactMessage', to: 'OPEN' },
      { from: 'OPEN', trigger: 'contactMessage', to: 'OPEN' },
      { from: 'OPEN', trigger: 'elapsed', to: 'CLOSED' },
    ]);
  });

  test('random sequences of contact messages (late, out of order), clock steps and sends', () => {
    fc.assert(
      fc.property(fc.commands(pureCommands, { maxCommands: 60 }), (cmds) => {
        fc.modelRun(() => ({ model: { now: T0, contactTimes: [] }, real: { now: new Date(T0), window: { lastContactMessageAt: null } } }), cmds);
      }),
      { numRuns: 300 },
    );
  });

  test('a contact who never wrote: free text is refused at any time, templates pass', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e13 }), (t) => {
        const window = { lastContactMessageAt: null };
        expect(windowState(window, new Date(t))).toBe('CLOSED');
        expectWindowRefusal(thrownBy(() => assertMaySend(window, new Date(t), { isTemplate: false })));
        expect(thrownBy(() => assertMaySend(window, new Date(t), { isTemplate: true }))).toBeUndefined();
      }),
    );
  });

  test('the boundary: open until just before 24 h after the last message, closed at exactly 24 h', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), fc.integer({ min: 0, max: WINDOW - 1 }), (last, since) => {
        const window = { lastContactMessageAt: new Date(last) };
        expect(windowState(window, new Date(last + since))).toBe('OPEN');
        expect(windowState(window, new Date(last + WINDOW))).toBe('CLOSED');
        expect(windowState(window, new Date(last + WINDOW + since))).toBe('CLOSED');
      }),
    );
  });

  test('recordContactMessage never moves the window back and is order-independent', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 4e12 }), { minLength: 1, maxLength: 20 }), (times) => {
        const fold = (ts: number[]) => ts.reduce<SendWindow>((w, t) => recordContactMessage(w, new Date(t)), { lastContactMessageAt: null });
        const forward = fold(times);
        const backward = fold([...times].reverse());
        expect(forward.lastContactMessageAt!.getTime()).toBe(Math.max(...times));
        expect(backward.lastContactMessageAt!.getTime()).toBe(Math.max(...times));
      }),
    );
  });
});

// ------------------------------------------------------------------------------------------
// The same model against what the service really stores: the chats table (Postgres `greatest`)
// read back as the window that acceptSend checks.
// ------------------------------------------------------------------------------------------

let database: TestDatabase;
const connectionId = crypto.randomUUID();

beforeAll(async () => {
  database = await openTestDatabase();
  const workspaceId = crypto.randomUUID();
  await database.db.insertInto('workspaces').values({ id: workspaceId, name: 'window', is_personal: false, plan: 'PRO' }).execute();
  await database.db.insertInto('connections').values({ id: connectionId, workspace_id: workspaceId, name: 'official', kind: 'cloud-api', status: 'CONNECTED', phone_number: null, qr: null, pairing_code: null, status_reason: null, routing_key: null }).execute();
}, 60_000);

afterAll(async () => {
  await database?.close();
}, 60_000);

interface DbReal {
  now: Date;
  remoteJid: string;
}

async function storedWindow(r: DbReal): Promise<SendWindow> {
  const chat = await chatStore(database.db).get(connectionId, r.remoteJid);
  return { lastContactMessageAt: chat?.lastContactMessageAt ?? null };
}

class DbElapse implements fc.AsyncCommand<Model, DbReal> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(m: Model, r: DbReal) {
    m.now += this.ms;
    r.now = new Date(m.now);
  }
  toString = () => `elapse(${(this.ms / HOUR).toFixed(3)} h)`;
}

class DbContactWrites implements fc.AsyncCommand<Model, DbReal> {
  constructor(readonly offset: number) {}
  check = () => true;
  async run(m: Model, r: DbReal) {
    const at = m.now + this.offset;
    m.contactTimes.push(at);
    await chatStore(database.db).touch(connectionId, r.remoteJid, { at: new Date(at), name: 'Contact', fromContact: true });
    expect((await storedWindow(r)).lastContactMessageAt?.getTime()).toBe(Math.max(...m.contactTimes));
  }
  toString = () => `contactWrites(${(this.offset / HOUR).toFixed(3)} h)`;
}

/** Our own messages touch the chat too, but never open the window. */
class DbBusinessWrites implements fc.AsyncCommand<Model, DbReal> {
  check = () => true;
  async run(m: Model, r: DbReal) {
    await chatStore(database.db).touch(connectionId, r.remoteJid, { at: new Date(m.now), fromContact: false });
  }
  toString = () => 'businessWrites';
}

class DbSend implements fc.AsyncCommand<Model, DbReal> {
  constructor(readonly isTemplate: boolean) {}
  check = () => true;
  async run(m: Model, r: DbReal) {
    const window = await storedWindow(r);
    expect(windowState(window, r.now)).toBe(modelState(m));
    const error = thrownBy(() => assertMaySend(window, r.now, { isTemplate: this.isTemplate }));
    if (this.isTemplate || modelOpen(m)) expect(error).toBeUndefined();
    else expectWindowRefusal(error);
  }
  toString = () => (this.isTemplate ? 'sendTemplate' : 'sendFreeText');
}

describe('send window: the stored chat (database) against the model clock', () => {
  test('random sequences on the chats table: late contact messages never close an open window or reopen a closed one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands(
          [
            stepArb.map((ms) => new DbElapse(ms)),
            contactOffsetArb.map((offset) => new DbContactWrites(offset)),
            fc.constant(new DbBusinessWrites()),
            fc.boolean().map((isTemplate) => new DbSend(isTemplate)),
          ],
          { maxCommands: 25 },
        ),
        async (cmds) => {
          // A fresh chat per run: the model starts with a contact who never wrote.
          const setup = () => ({ model: { now: T0, contactTimes: [] }, real: { now: new Date(T0), remoteJid: `${crypto.randomUUID()}@s.whatsapp.net` } });
          await fc.asyncModelRun(setup, cmds);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
