import { badRequest } from '../../shared/errors.ts';
import { PRIORITIES, type Priority } from '../conversations/conversation.ts';
import { MAX_CONTENT_LENGTH } from '../conversations/helpdesk-messages.ts';
import { normaliseLabels } from '../labels/label-sets.ts';

/**
 * The actions a macro applies to a conversation, in order (issue 7 item 8; shapes ours). Each is
 * what an agent could do by hand through the conversation routes:
 *
 * | type               | fields                                              | as by hand                          |
 * |--------------------|-----------------------------------------------------|-------------------------------------|
 * | `assign_agent`     | `userId` (null unassigns)                           | PATCH `assigneeUserId`              |
 * | `assign_team`      | `teamId` (null clears)                              | PATCH `teamId`                      |
 * | `add_labels`       | `labels` (1–100)                                    | POST …/labels with the labels added |
 * | `remove_labels`    | `labels` (1–100)                                    | POST …/labels with them taken off   |
 * | `set_priority`     | `priority` (null clears)                            | PATCH `priority`                    |
 * | `change_status`    | `status`; with SNOOZED one of `snoozedUntil`, `snoozeMinutes` | POST …/status             |
 * | `send_message`     | `content`                                           | POST …/messages                     |
 * | `add_private_note` | `content`                                           | POST …/messages `private: true`     |
 *
 * `snoozeMinutes` snoozes for that long from the moment the macro runs (a stored macro is reused,
 * so a fixed `snoozedUntil` soon lies in the past).
 */
export const MACRO_ACTION_TYPES = ['assign_agent', 'assign_team', 'add_labels', 'remove_labels', 'set_priority', 'change_status', 'send_message', 'add_private_note'] as const;
export type MacroActionType = (typeof MACRO_ACTION_TYPES)[number];
export const MACRO_STATUSES = ['OPEN', 'PENDING', 'RESOLVED', 'SNOOZED'] as const;
export type MacroStatus = (typeof MACRO_STATUSES)[number];
export const MAX_MACRO_ACTIONS = 20;
export const MAX_SNOOZE_MINUTES = 366 * 24 * 60;

export type MacroAction =
  | { type: 'assign_agent'; userId: string | null }
  | { type: 'assign_team'; teamId: string | null }
  | { type: 'add_labels'; labels: string[] }
  | { type: 'remove_labels'; labels: string[] }
  | { type: 'set_priority'; priority: Priority | null }
  | { type: 'change_status'; status: MacroStatus; snoozedUntil?: string; snoozeMinutes?: number }
  | { type: 'send_message'; content: string }
  | { type: 'add_private_note'; content: string };

/** The fields each action takes besides `type` (anything else is refused, so a typo is not lost silently). */
const FIELDS: Record<MacroActionType, readonly string[]> = {
  assign_agent: ['userId'],
  assign_team: ['teamId'],
  add_labels: ['labels'],
  remove_labels: ['labels'],
  set_priority: ['priority'],
  change_status: ['status', 'snoozedUntil', 'snoozeMinutes'],
  send_message: ['content'],
  add_private_note: ['content'],
};

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The actions checked and normalised (labels trimmed and unique, content trimmed); throws one 400
 * naming every broken rule as `body.actions[i]…`. References (members, teams) are checked by
 * the caller, who can reach the workspace.
 */
export function parseMacroActions(raw: unknown): MacroAction[] {
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > MAX_MACRO_ACTIONS) throw badRequest([`body.actions must be a list of 1 to ${MAX_MACRO_ACTIONS} actions`]);
  const problems: string[] = [];
  const actions = raw.map((item, i) => parseAction(item, `body.actions[${i}]`, problems));
  if (problems.length > 0) throw badRequest(problems);
  return actions as MacroAction[];
}

function parseAction(item: unknown, at: string, problems: string[]): MacroAction | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return void problems.push(`${at} must be an object`);
  const a = item as Record<string, unknown>;
  const type = a.type;
  if (typeof type !== 'string' || !(MACRO_ACTION_TYPES as readonly string[]).includes(type)) {
    return void problems.push(`${at}.type must be one of ${MACRO_ACTION_TYPES.join(', ')}`);
  }
  const t = type as MacroActionType;
  const before = problems.length;
  for (const key of Object.keys(a)) if (key !== 'type' && !FIELDS[t].includes(key)) problems.push(`${at}.${key} is not a field of ${t}`);
  const idOrNull = (key: string): string | null | undefined => {
    const v = a[key];
    if (v === null || (typeof v === 'string' && v.trim() !== '')) return v === null ? null : (v as string).trim();
    problems.push(`${at}.${key} must be an id or null`);
    return undefined;
  };
  const labels = (): string[] => {
    const v = a.labels;
    if (!Array.isArray(v) || v.length < 1 || v.length > 100 || v.some((l) => typeof l !== 'string')) {
      problems.push(`${at}.labels must be a list of 1 to 100 labels`);
      return [];
    }
    try {
      return normaliseLabels(v as string[]);
    } catch (error) {
      problems.push(`${at}.labels: ${(error as Error).message}`);
      return [];
    }
  };
  const content = (): string => {
    const v = typeof a.content === 'string' ? a.content.trim() : '';
    if (v.length < 1 || v.length > MAX_CONTENT_LENGTH) problems.push(`${at}.content must be 1 to ${MAX_CONTENT_LENGTH} characters`);
    return v;
  };
  let action: MacroAction;
  switch (t) {
    case 'assign_agent':
      action = { type: t, userId: idOrNull('userId')! };
      break;
    case 'assign_team':
      action = { type: t, teamId: idOrNull('teamId')! };
      break;
    case 'add_labels':
    case 'remove_labels':
      action = { type: t, labels: labels() };
      break;
    case 'set_priority': {
      const p = a.priority;
      if (p !== null && !(PRIORITIES as readonly unknown[]).includes(p)) problems.push(`${at}.priority must be one of ${PRIORITIES.join(', ')} or null`);
      action = { type: t, priority: p as Priority | null };
      break;
    }
    case 'change_status':
      action = statusAction(a, at, problems);
      break;
    case 'send_message':
    case 'add_private_note':
      action = { type: t, content: content() };
      break;
  }
  return problems.length === before ? action : undefined;
}

function statusAction(a: Record<string, unknown>, at: string, problems: string[]): MacroAction {
  const status = a.status;
  if (!(MACRO_STATUSES as readonly unknown[]).includes(status)) problems.push(`${at}.status must be one of ${MACRO_STATUSES.join(', ')}`);
  const until = a.snoozedUntil;
  const minutes = a.snoozeMinutes;
  const action: Extract<MacroAction, { type: 'change_status' }> = { type: 'change_status', status: status as MacroStatus };
  if (status !== 'SNOOZED') {
    if (until !== undefined || minutes !== undefined) problems.push(`${at}: snoozedUntil and snoozeMinutes are only for status SNOOZED`);
    return action;
  }
  if ((until === undefined) === (minutes === undefined)) {
    problems.push(`${at}: status SNOOZED needs exactly one of snoozedUntil and snoozeMinutes`);
  } else if (until !== undefined) {
    if (typeof until !== 'string' || !ISO_DATE_TIME.test(until) || Number.isNaN(Date.parse(until))) problems.push(`${at}.snoozedUntil must be an ISO 8601 date-time`);
    else action.snoozedUntil = new Date(until).toISOString();
  } else if (typeof minutes !== 'number' || !Number.isInteger(minutes) || minutes < 1 || minutes > MAX_SNOOZE_MINUTES) {
    problems.push(`${at}.snoozeMinutes must be an integer from 1 to ${MAX_SNOOZE_MINUTES}`);
  } else {
    action.snoozeMinutes = minutes;
  }
  return action;
}

/** The members and teams the actions name (to check they belong to the workspace). */
export function referencesOf(actions: readonly MacroAction[]): { userIds: string[]; teamIds: string[] } {
  const userIds = new Set<string>();
  const teamIds = new Set<string>();
  for (const a of actions) {
    if (a.type === 'assign_agent' && a.userId !== null) userIds.add(a.userId);
    if (a.type === 'assign_team' && a.teamId !== null) teamIds.add(a.teamId);
  }
  return { userIds: [...userIds], teamIds: [...teamIds] };
}
