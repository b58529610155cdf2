import { workspaceReads } from '../../shared/workspace-records.ts';
import type { Actor } from '../../identity/identity.ts';
import { badRequest, conflict, notFound } from '../../shared/errors.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import { labelCreated, labelDeleted, labelUpdated, type HelpdeskEventLog } from '../events.ts';
import { labelKey, normaliseLabels } from './label-sets.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';

/**
 * Labels as a workspace resource. A label's name follows the rules of label-sets.ts (1–100
 * characters once trimmed, no comma) and is unique in the workspace case-insensitively.
 * Conversations keep their labels by name (REST shows names); events name them by id.
 */
export interface Label {
  id: string;
  workspaceId: string;
  name: string;
  /** `#rrggbb`, lower-case; null when none was chosen. */
  color: string | null;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface LabelStore {
  /** Name order; `search` matches the name (substring, case-insensitive). */
  list(workspaceId: string, request: PageRequest): Promise<Page<Label>>;
  get(workspaceId: string, id: string): Promise<Label | undefined>;
  /** Like get, locking the label until the transaction ends (two renames at once apply one after the other). */
  lock(workspaceId: string, id: string): Promise<Label | undefined>;
  /** The labels of the workspace with these names (case-insensitively); unknown names are left out. */
  findByNames(workspaceId: string, names: readonly string[]): Promise<Label[]>;
  /** Throws `duplicateLabel()` when the workspace has a label of that name. */
  insert(label: Label): Promise<void>;
  /** Inserts unless the workspace has a label of that name (a concurrent creation); true when inserted. */
  insertIfAbsent(label: Label): Promise<boolean>;
  /** Throws `duplicateLabel()` like insert. */
  update(label: Label): Promise<void>;
  delete(id: string): Promise<void>;
  /** Every conversation of the workspace labelled `from` is labelled `to` instead. */
  renameOnConversations(workspaceId: string, from: string, to: string): Promise<void>;
  /** Takes the label off every conversation of the workspace. */
  removeFromConversations(workspaceId: string, name: string): Promise<void>;
}

export interface LabelStores {
  labels: LabelStore;
  plans: WorkspacePlans;
  events: HelpdeskEventLog;
}

export interface LabelDeps {
  clock: Clock;
  ids: IdGen;
}

export interface LabelInput {
  name?: string;
  color?: string | null;
  description?: string | null;
}

export const DESCRIPTION_MAX_LENGTH = 500;
export const duplicateLabel = () => conflict('Another label of this workspace has this name');
const labelNotFound = () => notFound('Label not found');

/** The name as stored (trimmed), or a 400 naming what is wrong with it. */
function cleanName(raw: unknown, problems: string[]): string | undefined {
  if (typeof raw !== 'string') {
    problems.push('body.name must be a string');
    return undefined;
  }
  try {
    return normaliseLabels([raw])[0];
  } catch (error) {
    problems.push(`body.name: ${(error as Error).message}`);
    return undefined;
  }
}

function cleanColor(raw: string | null | undefined, problems: string[]): string | null | undefined {
  if (raw === undefined || raw === null) return raw;
  if (!/^#[0-9a-fA-F]{6}$/.test(raw)) {
    problems.push('body.color must be a colour as #rrggbb');
    return undefined;
  }
  return raw.toLowerCase();
}

function cleanDescription(raw: string | null | undefined, problems: string[]): string | null | undefined {
  if (raw === undefined || raw === null) return raw;
  const text = raw.trim();
  if ([...text].length > DESCRIPTION_MAX_LENGTH) problems.push(`body.description must be at most ${DESCRIPTION_MAX_LENGTH} characters`);
  return text.length > 0 ? text : null;
}

/** Reads: every member. */
const labelReads = workspaceReads<Label>('helpdesk.work', labelNotFound);

export const listLabels = (stores: LabelStores, actor: Actor, request: PageRequest) => labelReads.list(stores.labels, actor, request);

export const getLabel = (stores: LabelStores, actor: Actor, id: string) => labelReads.get(stores.labels, actor, id);


export async function createLabel(stores: LabelStores, deps: LabelDeps, actor: Actor, input: LabelInput): Promise<Label> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const problems: string[] = [];
  const name = cleanName(input.name, problems);
  const color = cleanColor(input.color, problems);
  const description = cleanDescription(input.description, problems);
  if (problems.length > 0) throw badRequest(problems);
  if ((await stores.labels.findByNames(actor.workspaceId, [name!])).length > 0) throw duplicateLabel();
  const now = deps.clock.now();
  const label: Label = { id: deps.ids.next(), workspaceId: actor.workspaceId, name: name!, color: color ?? null, description: description ?? null, createdAt: now, updatedAt: now };
  await stores.labels.insert(label);
  await stores.events.record(labelCreated(label, actor.userId));
  return label;
}

/**
 * Fields left out keep their value; null clears colour or description. A new name is carried
 * onto every conversation wearing the label, in this transaction; the label keeps its id, so
 * conversations' label ids do not change (no `labels_changed`, one `label.updated`).
 */
export async function updateLabel(stores: LabelStores, deps: LabelDeps, actor: Actor, id: string, input: LabelInput): Promise<Label> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const label = await stores.labels.lock(actor.workspaceId, id);
  if (!label) throw labelNotFound();
  const problems: string[] = [];
  const name = input.name === undefined ? label.name : cleanName(input.name, problems);
  const color = cleanColor(input.color, problems);
  const description = cleanDescription(input.description, problems);
  if (problems.length > 0) throw badRequest(problems);
  const renamed = name! !== label.name;
  if (renamed && labelKey(name!) !== labelKey(label.name) && (await stores.labels.findByNames(actor.workspaceId, [name!])).length > 0) throw duplicateLabel();
  const updated: Label = {
    ...label,
    name: name!,
    color: color === undefined ? label.color : color,
    description: description === undefined ? label.description : description,
    updatedAt: deps.clock.now(),
  };
  const changedFields = (['name', 'color', 'description'] as const).filter((f) => updated[f] !== label[f]);
  if (changedFields.length === 0) return label;
  await stores.labels.update(updated);
  if (renamed) await stores.labels.renameOnConversations(actor.workspaceId, label.name, updated.name);
  await stores.events.record(labelUpdated(updated, changedFields, renamed ? label.name : null, actor.userId));
  return updated;
}

/** The label is taken off every conversation, then deleted; `label.deleted` stands for both. */
export async function deleteLabel(stores: LabelStores, actor: Actor, id: string): Promise<void> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const label = await stores.labels.lock(actor.workspaceId, id);
  if (!label) throw labelNotFound();
  await stores.labels.removeFromConversations(actor.workspaceId, label.name);
  await stores.labels.delete(label.id);
  await stores.events.record(labelDeleted(label, actor.userId));
}

/**
 * The workspace labels of these names, in their order, normalised as label-sets.ts says. A name
 * not yet a label of the workspace becomes one (recording `label.created`): labelling a
 * conversation with a new word is how most labels are born, and whoever may label may do it.
 */
export async function resolveLabels(stores: Pick<LabelStores, 'labels' | 'events'>, deps: LabelDeps, workspaceId: string, names: readonly string[], actorUserId: string | null): Promise<Label[]> {
  const wanted = normaliseLabels(names);
  if (wanted.length === 0) return [];
  const byKey = new Map((await stores.labels.findByNames(workspaceId, wanted)).map((l) => [labelKey(l.name), l]));
  const out: Label[] = [];
  for (const name of wanted) {
    let label = byKey.get(labelKey(name));
    if (!label) {
      const now = deps.clock.now();
      const fresh: Label = { id: deps.ids.next(), workspaceId, name, color: null, description: null, createdAt: now, updatedAt: now };
      if (await stores.labels.insertIfAbsent(fresh)) {
        await stores.events.record(labelCreated(fresh, actorUserId));
        label = fresh;
      } else {
        // Created at the same moment by someone else: theirs is the label.
        label = (await stores.labels.findByNames(workspaceId, [name]))[0]!;
      }
    }
    out.push(label);
  }
  return out;
}
