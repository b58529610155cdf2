import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import type { Connection, ConnectionStore } from '../../core/connections/connection.ts';
import type { NetworkDriver } from '../../core/connections/driver.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { DomainError } from '../../core/shared/errors.ts';
import { connectionRow } from '../support/connection-row.ts';
import { page } from '../../core/shared/pagination.ts';
import type { PlatformTemplate, TemplatePlatform } from '../../core/templates/platform.ts';
import { TEMPLATE_STATUSES, TEMPLATE_TRANSITIONS, type TemplateStatus } from '../../core/templates/template-status.ts';
import { applyTemplateCallback, checkTemplateSend, createTemplate, getTemplate, type Template, type TemplateStore } from '../../core/templates/templates.ts';
import { listTemplates } from '../../core/templates/template-list.ts';

/**
 * The template approval machine (spec 3.5: "Creation returns `PENDING`; polling `GET
 * /templates/{templateId}` reaches `APPROVED`; a `rejected_reason` field explains a rejection.
 * The full set of template states: not shown"; issue 9 tests: "Property tests: … template status
 * machine"). The real use cases run over in-memory ports and a fake platform.
 *
 * The model, from the documented meaning of each platform event (not from the table):
 * - a callback is one event that may be late: APPROVED (or REINSTATED) approves what is under
 *   review, paused, disabled or under appeal; REJECTED ends a review or an appeal, or withdraws
 *   an approval; PAUSED only pauses an approved template; DISABLED hits an approved, paused or
 *   appealed one; IN_APPEAL appeals a rejection or a disabling; a callback never puts a template
 *   back under review (PENDING); FLAGGED, LOCKED, ARCHIVED … change nothing; DELETED removes it;
 * - polling, and reading the whole list, take the platform's status as it is; a status the
 *   service does not keep (ARCHIVED, LIMIT_EXCEEDED, a new one) leaves the last known; a template
 *   missing from the platform's list is gone;
 * - `rejected_reason` is set exactly while REJECTED; only APPROVED templates may be sent.
 */

const MODEL_MOVES: Record<string, TemplateStatus[]> = {
  APPROVED: ['PENDING', 'PAUSED', 'DISABLED', 'IN_APPEAL'],
  REINSTATED: ['PENDING', 'PAUSED', 'DISABLED', 'IN_APPEAL'],
  REJECTED: ['PENDING', 'APPROVED', 'IN_APPEAL'],
  PAUSED: ['APPROVED'],
  DISABLED: ['APPROVED', 'PAUSED', 'IN_APPEAL'],
  IN_APPEAL: ['REJECTED', 'DISABLED'],
};
const INERT_EVENTS = ['PENDING', 'FLAGGED', 'LOCKED', 'UNLOCKED', 'ARCHIVED', 'UNARCHIVED', 'LIMIT_EXCEEDED'];
const REASONS = ['INVALID_FORMAT', 'PROMOTIONAL', 'SCAM', 'NONE'];

interface Model {
  status: TemplateStatus;
  reason: string | null;
  deleted: boolean;
}

const modelReason = (status: TemplateStatus, reason: string) => (status !== 'REJECTED' ? null : reason === 'NONE' ? 'UNKNOWN' : reason);

const actor: Actor = { userId: 'u', workspaceId: 'w', roles: ['OWNER'] };
const connection = connectionRow({ id: 'c', workspaceId: 'w', name: 'official', driver: 'official', status: 'CONNECTED' });

function system() {
  const rows = new Map<string, Template>();
  const onPlatform: { status: TemplateStatus | null; reason: string | null; present: boolean } = { status: 'PENDING', reason: null, present: true };
  const templates: TemplateStore = {
    list: async (_c, request) => page([...rows.values()], rows.size, request),
    get: async (_c, id) => rows.get(id),
    findByExternalId: async (_c, externalId) => [...rows.values()].find((t) => t.externalId === externalId),
    lockByExternalId: async (_c, externalId) => [...rows.values()].find((t) => t.externalId === externalId),
    findByName: async (_c, name, language) => [...rows.values()].find((t) => t.name === name && t.language === language),
    all: async () => [...rows.values()].map((t) => structuredClone(t)),
    insert: async (t) => void rows.set(t.id, structuredClone(t)),
    upsert: async (t) => void rows.set(t.id, structuredClone(t)),
    update: async (t) => void rows.set(t.id, structuredClone(t)),
    delete: async (id) => void rows.delete(id),
  };
  const connections = { get: async () => connection } as unknown as ConnectionStore;
  const seen = (): PlatformTemplate => ({
    externalId: '1001',
    name: 'order',
    language: 'en',
    category: 'UTILITY',
    status: onPlatform.status,
    rejectedReason: onPlatform.reason,
    components: null,
  });
  const platform: TemplatePlatform = {
    create: async () => ({ externalId: '1001', status: 'PENDING', category: 'UTILITY' }),
    list: async () => (onPlatform.present ? [seen()] : []),
    get: async () => seen(),
    delete: async () => {},
    uploadHeaderMedia: async () => ({ handle: 'h' }),
    uploadSendMedia: async () => ({ mediaId: 'm' }),
  };
  const driver = { name: 'official', capabilities: { templates: true }, templates: platform } as unknown as NetworkDriver;
  let tick = 0;
  const deps = { clock: { now: () => new Date(++tick * 1000) }, ids: { next: () => '01900000-0000-7000-8000-000000000001' }, drivers: new Map([['official', driver]]), rules: undefined };
  return { rows, onPlatform, stores: { connections, templates }, deps };
}
type System = ReturnType<typeof system>;
const current = (real: System) => [...real.rows.values()][0];

function checkAgainst(model: Model, real: System) {
  const row = current(real);
  if (model.deleted) return expect(row).toBeUndefined();
  expect({ status: row?.status, reason: row?.rejectedReason }).toEqual({ status: model.status, reason: model.reason });
}

class Callback implements fc.AsyncCommand<Model, System> {
  constructor(
    readonly event: string,
    readonly reason: string,
  ) {}
  check = (m: Readonly<Model>) => !m.deleted;
  async run(m: Model, real: System) {
    await applyTemplateCallback(real.stores, real.deps, connection.id, { externalId: '1001', event: this.event, reason: this.reason });
    if (this.event === 'DELETED' || this.event === 'PENDING_DELETION') m.deleted = true;
    else if (!INERT_EVENTS.includes(this.event) && MODEL_MOVES[this.event]!.includes(m.status)) {
      m.status = this.event === 'REINSTATED' ? 'APPROVED' : (this.event as TemplateStatus);
      m.reason = modelReason(m.status, this.reason);
    }
    checkAgainst(m, real);
  }
  toString = () => `callback(${this.event}, ${this.reason})`;
}

/** `status` null: a status the service does not keep. */
class Poll implements fc.AsyncCommand<Model, System> {
  constructor(
    readonly status: TemplateStatus | null,
    readonly reason: string,
  ) {}
  check = (m: Readonly<Model>) => !m.deleted;
  async run(m: Model, real: System) {
    real.onPlatform.status = this.status;
    real.onPlatform.reason = this.reason;
    const answered = await getTemplate(real.stores, real.deps, actor, connection.id, current(real)!.id);
    if (this.status) {
      m.status = this.status;
      m.reason = modelReason(this.status, this.reason);
    }
    expect({ status: answered.status, reason: answered.rejectedReason }).toEqual({ status: m.status, reason: m.reason });
    checkAgainst(m, real);
  }
  toString = () => `poll(${this.status}, ${this.reason})`;
}

/** The first page of the list reads the platform's whole list; `present` false: deleted elsewhere. */
class ReadList implements fc.AsyncCommand<Model, System> {
  constructor(
    readonly status: TemplateStatus | null,
    readonly reason: string,
    readonly present: boolean,
  ) {}
  check = (m: Readonly<Model>) => !m.deleted;
  async run(m: Model, real: System) {
    Object.assign(real.onPlatform, { status: this.status, reason: this.reason, present: this.present });
    const listed = await listTemplates(real.stores, real.deps, actor, connection.id, { page: 1, perPage: 20, search: undefined });
    if (!this.present) m.deleted = true;
    else if (this.status) {
      m.status = this.status;
      m.reason = modelReason(this.status, this.reason);
    }
    expect(listed.data.map((t) => ({ status: t.status, reason: t.rejectedReason }))).toEqual(m.deleted ? [] : [{ status: m.status, reason: m.reason }]);
    checkAgainst(m, real);
  }
  toString = () => `list(${this.status}, ${this.reason}, ${this.present ? 'present' : 'gone'})`;
}

class Send implements fc.AsyncCommand<Model, System> {
  check = (m: Readonly<Model>) => !m.deleted;
  async run(m: Model, real: System) {
    let refused: unknown;
    try {
      await checkTemplateSend(real.stores, real.deps, actor, connection.id, { name: 'order', language: 'en', components: [] });
    } catch (error) {
      refused = error;
    }
    if (m.status === 'APPROVED') expect(refused).toBeUndefined();
    else expect(refused instanceof DomainError && refused.kind === 'unprocessable').toBe(true);
  }
  toString = () => 'send';
}

const events = fc.constantFrom(...Object.keys(MODEL_MOVES), ...INERT_EVENTS, 'DELETED');
const commands = [
  fc.tuple(events, fc.constantFrom(...REASONS)).map(([e, r]) => new Callback(e, r)),
  fc.tuple(fc.constantFrom(...TEMPLATE_STATUSES, null), fc.constantFrom(...REASONS)).map(([s, r]) => new Poll(s, r)),
  fc.tuple(fc.constantFrom(...TEMPLATE_STATUSES, null), fc.constantFrom(...REASONS), fc.boolean()).map(([s, r, p]) => new ReadList(s, r, p)),
  fc.constant(new Send()),
];

describe('template status machine', () => {
  test('the transition table and the model agree on every (status, event) pair', () => {
    for (const from of TEMPLATE_STATUSES) {
      for (const to of TEMPLATE_STATUSES) {
        expect({ from, to, allowed: TEMPLATE_TRANSITIONS[from].includes(to) }).toEqual({ from, to, allowed: (MODEL_MOVES[to] ?? []).includes(from) });
      }
    }
  });

  test('random callbacks, polls, list reads and sends follow the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        const real = system();
        await createTemplate(real.stores, real.deps, actor, connection.id, { name: 'order', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hello' }] });
        const model: Model = { status: 'PENDING', reason: null, deleted: false };
        checkAgainst(model, real);
        await fc.asyncModelRun(() => ({ model, real }), cmds);
      }),
      { numRuns: 200 },
    );
  });
});
