import type { RecordWrites } from '../../shared/workspace-records.ts';
import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import type { SendDeps, SendStores } from '../../messaging/send.ts';
import { badRequest, DomainError, notFound } from '../../shared/errors.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import { changeConversationStatus, getConversation, setConversationLabels, updateConversation, type Conversation, type ConversationDeps, type HelpdeskMessage } from '../conversations/conversations.ts';
import { sendHelpdeskMessage, type HelpdeskMessageStores } from '../conversations/helpdesk-messages.ts';
import { applyLabelDelta } from '../labels/label-sets.ts';
import { parseMacroActions, referencesOf, type MacroAction } from './macro-actions.ts';
import { assertHelpdeskWritable, type WorkspacePlans } from '../plan-gate.ts';
import type { WorkspaceMembership } from '../../identity/members.ts';

/**
 * Macros (issue 7 item 8): a named, ordered list of conversation actions (macro-actions.ts) an
 * agent applies in one go. `personal` macros are seen, run, changed and deleted by their creator
 * only (any member with `helpdesk.work` makes their own); `workspace` macros are seen and run by
 * every member and managed with `helpdesk.configure` (Managers and above). Writes need the PRO plan.
 *
 * Running one applies its actions in order, through the same use cases as the conversation
 * routes, as the caller: the same permissions, events and activity messages as by hand. The
 * caller runs it in one transaction: an action that fails fails the run, which is rolled back
 * whole and answers that action's error (prefixed with its position).
 */
export const MACRO_VISIBILITIES = ['personal', 'workspace'] as const;
export type MacroVisibility = (typeof MACRO_VISIBILITIES)[number];
export const MACRO_NAME_MAX_LENGTH = 100;

export interface Macro {
  id: string;
  workspaceId: string;
  name: string;
  visibility: MacroVisibility;
  /** The creator (a personal macro is theirs alone); null once they are gone. */
  createdBy: string | null;
  actions: MacroAction[];
  createdAt: Date;
  updatedAt: Date;
}

export interface MacroStore extends RecordWrites<Macro> {
  /** The workspace's macros and `userId`'s personal ones, by name; `search` matches the name. */
  list(workspaceId: string, userId: string, request: PageRequest): Promise<Page<Macro>>;
  get(workspaceId: string, id: string): Promise<Macro | undefined>;
}

export interface MacroStores extends WorkspaceMembership {
  macros: MacroStore;
  plans: WorkspacePlans;
  /** Which of these teams are teams of the workspace. */
  workspaceTeams(workspaceId: string, teamIds: string[]): Promise<string[]>;
}

export interface MacroDeps {
  clock: Clock;
  ids: IdGen;
}

export interface MacroInput {
  name?: unknown;
  visibility?: unknown;
  actions?: unknown;
}

const macroNotFound = () => notFound('Macro not found');
const visibleTo = (macro: Macro, actor: Actor) => macro.visibility === 'workspace' || macro.createdBy === actor.userId;

/** Who may write a macro of this visibility: anyone who works the helpdesk for their own, configurers for the workspace's. */
async function mayWrite(stores: MacroStores, actor: Actor, visibility: MacroVisibility): Promise<void> {
  authorize(actor.roles, visibility === 'workspace' ? 'helpdesk.configure' : 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
}

async function checked(stores: MacroStores, actor: Actor, input: MacroInput, current?: Macro): Promise<Pick<Macro, 'name' | 'visibility' | 'actions'>> {
  const problems: string[] = [];
  let name = current?.name;
  if (input.name !== undefined || !current) {
    name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name.length < 1 || [...name].length > MACRO_NAME_MAX_LENGTH) problems.push(`body.name must be 1 to ${MACRO_NAME_MAX_LENGTH} characters`);
  }
  let visibility = current?.visibility ?? 'personal';
  if (input.visibility !== undefined) {
    if ((MACRO_VISIBILITIES as readonly unknown[]).includes(input.visibility)) visibility = input.visibility as MacroVisibility;
    else problems.push(`body.visibility must be one of ${MACRO_VISIBILITIES.join(', ')}`);
  }
  let actions = current?.actions ?? [];
  if (input.actions !== undefined || !current) {
    try {
      actions = parseMacroActions(input.actions);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      problems.push(...(error.messages ?? [error.message]));
    }
  }
  if (problems.length > 0) throw badRequest(problems);
  const { userIds, teamIds } = referencesOf(actions);
  const members = new Set(await stores.workspaceMembers(actor.workspaceId, userIds));
  const teams = new Set(await stores.workspaceTeams(actor.workspaceId, teamIds));
  actions.forEach((a, i) => {
    if (a.type === 'assign_agent' && a.userId !== null && !members.has(a.userId)) problems.push(`body.actions[${i}].userId must be a member of the workspace`);
    if (a.type === 'assign_team' && a.teamId !== null && !teams.has(a.teamId)) problems.push(`body.actions[${i}].teamId must be a team of the workspace`);
  });
  if (problems.length > 0) throw badRequest(problems);
  return { name: name!, visibility, actions };
}

export async function listMacros(stores: MacroStores, actor: Actor, request: PageRequest): Promise<Page<Macro>> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  return stores.macros.list(actor.workspaceId, actor.userId, request);
}

/** Another member's personal macro is 404, as if it did not exist. */
export async function getMacro(stores: Pick<MacroStores, 'macros'>, actor: Actor, id: string): Promise<Macro> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  const macro = await stores.macros.get(actor.workspaceId, id);
  if (!macro || !visibleTo(macro, actor)) throw macroNotFound();
  return macro;
}

export async function createMacro(stores: MacroStores, deps: MacroDeps, actor: Actor, input: MacroInput): Promise<Macro> {
  authorize(actor.roles, 'helpdesk.work', 'write');
  const fields = await checked(stores, actor, input);
  await mayWrite(stores, actor, fields.visibility);
  const now = deps.clock.now();
  const macro: Macro = { id: deps.ids.next(), workspaceId: actor.workspaceId, ...fields, createdBy: actor.userId, createdAt: now, updatedAt: now };
  await stores.macros.insert(macro);
  return macro;
}

/**
 * Fields left out keep their value; `actions` replaces the list. Making a macro `workspace` or
 * `personal` needs `helpdesk.configure` (a personal macro always stays its creator's).
 */
export async function updateMacro(stores: MacroStores, deps: MacroDeps, actor: Actor, id: string, input: MacroInput): Promise<Macro> {
  const current = await getMacro(stores, actor, id);
  await mayWrite(stores, actor, current.visibility);
  const fields = await checked(stores, actor, input, current);
  if (fields.visibility !== current.visibility) await mayWrite(stores, actor, 'workspace');
  const updated: Macro = { ...current, ...fields, updatedAt: deps.clock.now() };
  await stores.macros.update(updated);
  return updated;
}

export async function deleteMacro(stores: MacroStores, actor: Actor, id: string): Promise<void> {
  const current = await getMacro(stores, actor, id);
  await mayWrite(stores, actor, current.visibility);
  await stores.macros.delete(current.id);
}

export type MacroRunStores = HelpdeskMessageStores & { macros: MacroStore };

/**
 * Applies the macro's actions to the conversation, in order, as the caller. Answers the
 * conversation after the run and the messages the run wrote (replies, notes, activity lines).
 * A `change_status` to the status the conversation already has is a no-op (the macro states
 * where the conversation should end up); every other refusal fails the run.
 */
export async function runMacro(
  stores: MacroRunStores,
  send: { stores: SendStores; deps: SendDeps },
  deps: ConversationDeps,
  actor: Actor,
  conversationId: string,
  macroId: string,
): Promise<{ conversation: Conversation; messages: HelpdeskMessage[] }> {
  const start = await getConversation(stores, actor, conversationId);
  const macro = await getMacro(stores, actor, macroId);
  authorize(actor.roles, 'helpdesk.work', 'write');
  await assertHelpdeskWritable(stores.plans, actor.workspaceId);
  const messages: HelpdeskMessage[] = [];
  let conversation = start;
  for (const [i, action] of macro.actions.entries()) {
    try {
      conversation = await apply(stores, send, deps, actor, conversation, action, messages);
    } catch (error) {
      throw atAction(error, i, action);
    }
  }
  return { conversation, messages };
}

async function apply(
  stores: MacroRunStores,
  send: { stores: SendStores; deps: SendDeps },
  deps: ConversationDeps,
  actor: Actor,
  conversation: Conversation,
  action: MacroAction,
  messages: HelpdeskMessage[],
): Promise<Conversation> {
  const id = conversation.id;
  switch (action.type) {
    case 'assign_agent':
      return updateConversation(stores, deps, actor, id, { assigneeUserId: action.userId });
    case 'assign_team':
      return updateConversation(stores, deps, actor, id, { teamId: action.teamId });
    case 'set_priority':
      return updateConversation(stores, deps, actor, id, { priority: action.priority });
    case 'add_labels':
      return setConversationLabels(stores, deps, actor, id, [...conversation.labels, ...action.labels]);
    case 'remove_labels':
      return setConversationLabels(stores, deps, actor, id, applyLabelDelta(conversation.labels, { added: [], removed: action.labels }));
    case 'change_status': {
      if (action.status === conversation.status && action.status !== 'SNOOZED') return conversation;
      const snoozedUntil =
        action.snoozeMinutes !== undefined ? new Date(deps.clock.now().getTime() + action.snoozeMinutes * 60_000).toISOString() : (action.snoozedUntil ?? null);
      const done = await changeConversationStatus(stores, deps, actor, id, { status: action.status, snoozedUntil: action.status === 'SNOOZED' ? snoozedUntil : null });
      if (done.activity) messages.push(done.activity);
      return done.conversation;
    }
    case 'send_message':
    case 'add_private_note': {
      const message = await sendHelpdeskMessage(stores, send, deps, actor, id, { content: action.content, private: action.type === 'add_private_note' });
      messages.push(message);
      // The message moved lastActivityAt: read the conversation as it now is.
      return getConversation(stores, actor, id);
    }
  }
}

/** The failing action's error, naming it: `actions[2] (send_message): …` (a coded error stays as it is, clients branch on it). */
function atAction(error: unknown, index: number, action: MacroAction): unknown {
  if (!(error instanceof DomainError) || error.shape !== 'standard') return error;
  const prefix = `actions[${index}] (${action.type}): `;
  return new DomainError(error.kind, error.messages ? error.messages.map((m) => prefix + m) : prefix + error.message);
}

