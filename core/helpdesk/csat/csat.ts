import type { Actor } from '../../identity/identity.ts';
import { authorize } from '../../identity/roles.ts';
import { badRequest, notFound } from '../../shared/errors.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import type { Clock } from '../../shared/ports.ts';
import type { Conversation, HelpdeskMessage } from '../conversations/conversation.ts';
import { csatResponseReceived, type HelpdeskEventLog } from '../events.ts';
import { inboxNotFound, type InboxStore } from '../inboxes/inboxes.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';
import { isUuid } from '../../shared/ids.ts';
import { nextState, type TransitionTable } from '../../shared/transition-table.ts';
import type { SettingsStore } from '../../shared/workspace-records.ts';

/**
 * Customer satisfaction (spec 4.5, 5.6): when a conversation of an inbox with CSAT on is
 * resolved, the contact is sent a link to `/public/helpdesk/csat/{conversationId}` — "no token,
 * no expiry; anyone with the link may view and submit once".
 *
 * The survey of a conversation, as an explicit transition table:
 *
 * | from \ event | send                   | answer            |
 * |--------------|------------------------|-------------------|
 * | NOT_SENT     | SENT                   | refused (404)     |
 * | SENT         | refused (sent once)    | ANSWERED          |
 * | ANSWERED     | refused (sent once)    | refused (already) |
 *
 * A survey is sent at most once per conversation, whatever happens to it afterwards (reopened
 * and resolved again: no second link); it is answered at most once, and an answer changes
 * nothing afterwards. NOT_SENT is a conversation with no survey row, SENT one with a survey and
 * no answer, ANSWERED one with an answer (the stores' unique keys are the last guard).
 */
export const CSAT_STATES = ['NOT_SENT', 'SENT', 'ANSWERED'] as const;
export type CsatState = (typeof CSAT_STATES)[number];
export const CSAT_EVENTS = ['send', 'answer'] as const;
export type CsatEvent = (typeof CSAT_EVENTS)[number];

export const CSAT_TRANSITIONS: TransitionTable<CsatState, CsatEvent> = {
  NOT_SENT: { send: 'SENT' },
  SENT: { answer: 'ANSWERED' },
  ANSWERED: {},
};

/** The state after `event`, or null when the table refuses it. */
export function nextSurveyState(state: CsatState, event: CsatEvent): CsatState | null {
  return nextState(CSAT_TRANSITIONS, state, event) ?? null;
}

export function surveyState(survey: { answered: boolean } | undefined): CsatState {
  if (!survey) return 'NOT_SENT';
  return survey.answered ? 'ANSWERED' : 'SENT';
}

export const MAX_COMMENT_LENGTH = 1000;
export const MAX_SURVEY_MESSAGE_LENGTH = 1000;
export const DEFAULT_SURVEY_MESSAGE = 'Thank you for contacting us. How did we do? Please rate the help you received:';
export const RATINGS = [1, 2, 3, 4, 5] as const;

/** An inbox's CSAT setting; no row means off with the default text. */
export interface CsatSettings {
  inboxId: string;
  workspaceId: string;
  enabled: boolean;
  /** Null: DEFAULT_SURVEY_MESSAGE. */
  message: string | null;
  updatedAt: Date;
}

/** A survey sent: who held the conversation when it was resolved is what the answer rates. */
export interface CsatSurvey {
  conversationId: string;
  workspaceId: string;
  inboxId: string;
  messageId: string | null;
  assigneeUserId: string | null;
  teamId: string | null;
  sentAt: Date;
}

export interface CsatResponse {
  conversationId: string;
  workspaceId: string;
  inboxId: string;
  rating: number;
  comment: string | null;
  assigneeUserId: string | null;
  teamId: string | null;
  submittedAt: Date;
}

/** What the public page shows: the survey, the names of the workspace and inbox, the answer if any. */
export interface SurveyView {
  survey: CsatSurvey;
  workspaceName: string;
  inboxName: string;
  response: CsatResponse | null;
}

/** An answer as managers list it (with the conversation's displayId and contact). */
export interface ListedCsatResponse extends CsatResponse {
  displayId: number;
  contactId: string;
}

export interface CsatFilters {
  inboxId?: string;
  from?: Date;
  to?: Date;
}

/** By inbox id. */
export type CsatSettingsStore = SettingsStore<CsatSettings>;

export interface CsatSurveyStore {
  /** Inserts the survey unless the conversation has one (false: sent before, or being sent right now). */
  claim(survey: CsatSurvey): Promise<boolean>;
  setMessage(conversationId: string, messageId: string): Promise<void>;
  /** By conversation id alone (the link is the credential); undefined when no survey was sent. */
  view(conversationId: string): Promise<SurveyView | undefined>;
}

export interface CsatResponseStore {
  /** False when the conversation already has an answer (a concurrent submission won). */
  insert(response: CsatResponse): Promise<boolean>;
  /** Newest first; `search` matches the comment. */
  list(workspaceId: string, request: PageRequest, filters: CsatFilters): Promise<Page<ListedCsatResponse>>;
}

export interface CsatStores {
  settings: CsatSettingsStore;
  surveys: CsatSurveyStore;
  responses: CsatResponseStore;
  inboxes: InboxStore;
  plans: WorkspacePlans;
  events: HelpdeskEventLog;
}

export const surveyNotFound = () => notFound('Survey not found');

export function surveyLink(publicUrl: string, conversationId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/public/helpdesk/csat/${conversationId}`;
}

export function surveyText(message: string | null, link: string): string {
  return `${message ?? DEFAULT_SURVEY_MESSAGE}\n${link}`;
}

/** `GET …/inboxes/{id}/csat`: helpdesk configuration (Owner, Admin, Manager); any plan reads. */
export async function getCsatSettings(stores: CsatStores, actor: Actor, inboxId: string): Promise<{ inboxId: string; enabled: boolean; message: string | null }> {
  authorize(actor.roles, 'helpdesk.configure', 'read');
  if (!(await stores.inboxes.get(actor.workspaceId, inboxId))) throw inboxNotFound();
  const settings = await stores.settings.get(inboxId);
  return { inboxId, enabled: settings?.enabled ?? false, message: settings?.message ?? null };
}

/** `PUT …/inboxes/{id}/csat`: replaces the setting; a message left out or null is the default text. */
export async function setCsatSettings(
  stores: CsatStores,
  deps: { clock: Clock },
  actor: Actor,
  inboxId: string,
  input: { enabled: boolean; message?: string | null },
): Promise<{ inboxId: string; enabled: boolean; message: string | null }> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  if (!(await stores.inboxes.get(actor.workspaceId, inboxId))) throw inboxNotFound();
  const problems: string[] = [];
  if (typeof input.enabled !== 'boolean') problems.push('body.enabled must be true or false');
  const message = typeof input.message === 'string' ? input.message.trim() : null;
  if (message !== null && (message.length === 0 || message.length > MAX_SURVEY_MESSAGE_LENGTH)) problems.push(`body.message must be 1 to ${MAX_SURVEY_MESSAGE_LENGTH} characters, or null for the default`);
  if (problems.length > 0) throw badRequest(problems);
  await stores.settings.put({ inboxId, workspaceId: actor.workspaceId, enabled: input.enabled, message, updatedAt: deps.clock.now() });
  return { inboxId, enabled: input.enabled, message };
}

/** The survey's send, as the worker runs it for `helpdesk.conversation.status_changed`. */
export interface SurveySendPorts {
  settings: CsatSettingsStore;
  surveys: CsatSurveyStore;
  conversation(workspaceId: string, id: string): Promise<Conversation | undefined>;
  /** Sends `text` to the contact as the helpdesk itself, through the normal reply path. */
  reply(conversation: Conversation, text: string): Promise<HelpdeskMessage>;
}

export type SurveySendOutcome = 'sent' | 'not-resolved' | 'csat-off' | 'already-sent';

/**
 * A conversation was resolved: if its inbox has CSAT on and it is still resolved, the survey is
 * claimed (the row first: a retried job or a second resolve finds it and sends nothing) and the
 * link goes out, in one transaction with the claim.
 */
export async function sendSurveyOnResolve(
  ports: SurveySendPorts,
  deps: { clock: Clock; publicUrl: string },
  event: { accountId: string; conversationId: string; inboxId: string; toStatus: string },
): Promise<SurveySendOutcome> {
  if (event.toStatus !== 'RESOLVED') return 'not-resolved';
  const settings = await ports.settings.get(event.inboxId);
  if (!settings?.enabled) return 'csat-off';
  const conversation = await ports.conversation(event.accountId, event.conversationId);
  // Reopened before the worker got here: the next resolve sends it.
  if (!conversation || conversation.status !== 'RESOLVED') return 'not-resolved';
  const survey: CsatSurvey = {
    conversationId: conversation.id,
    workspaceId: conversation.workspaceId,
    inboxId: conversation.inboxId,
    messageId: null,
    assigneeUserId: conversation.assigneeUserId,
    teamId: conversation.teamId,
    sentAt: deps.clock.now(),
  };
  const existing = await ports.surveys.view(conversation.id);
  if (nextSurveyState(surveyState(existing && { answered: existing.response !== null }), 'send') === null) return 'already-sent';
  // Two runs at once (a retried job, two quick resolves): the claim's unique key lets one through.
  if (!(await ports.surveys.claim(survey))) return 'already-sent';
  const message = await ports.reply(conversation, surveyText(settings.message, surveyLink(deps.publicUrl, conversation.id)));
  await ports.surveys.setMessage(conversation.id, message.id);
  return 'sent';
}

/** The public page's view of a survey; 404 for an unknown id or a conversation never sent one. */
export async function openSurvey(stores: Pick<CsatStores, 'surveys'>, conversationId: string): Promise<SurveyView & { state: CsatState }> {
  const view = await stores.surveys.view(conversationId);
  if (!view) throw surveyNotFound();
  return { ...view, state: surveyState({ answered: view.response !== null }) };
}

/** The form's fields, checked: a rating 1 to 5, an optional comment of up to 1000 characters. */
export function parseCsatAnswer(form: { rating?: unknown; comment?: unknown }): { rating: number; comment: string | null } {
  const problems: string[] = [];
  const rawRating = typeof form.rating === 'string' ? form.rating.trim() : undefined;
  const rating = rawRating !== undefined && /^[1-5]$/.test(rawRating) ? Number(rawRating) : undefined;
  if (rating === undefined) problems.push('Choose a rating from 1 to 5.');
  if (form.comment !== undefined && typeof form.comment !== 'string') problems.push('The comment must be text.');
  const comment = typeof form.comment === 'string' ? form.comment.trim() : '';
  if (comment.length > MAX_COMMENT_LENGTH) problems.push(`The comment must be at most ${MAX_COMMENT_LENGTH} characters (it has ${comment.length}).`);
  if (problems.length > 0) throw badRequest(problems);
  return { rating: rating!, comment: comment === '' ? null : comment };
}

export type AnswerOutcome = { answered: true; response: CsatResponse; view: SurveyView } | { answered: false; view: SurveyView };

/**
 * The contact's answer: stored once with `helpdesk.csat.response_received`, in one transaction.
 * An answered survey answers `answered: false` and changes nothing, whatever was posted; so does
 * the loser of two submissions at once (the answer's unique key decides).
 */
export async function answerSurvey(
  stores: Pick<CsatStores, 'surveys' | 'responses' | 'events'>,
  deps: { clock: Clock },
  conversationId: string,
  form: { rating?: unknown; comment?: unknown },
): Promise<AnswerOutcome> {
  const view = await openSurvey(stores, conversationId);
  if (nextSurveyState(view.state, 'answer') === null) return { answered: false, view };
  const { rating, comment } = parseCsatAnswer(form);
  const { survey } = view;
  const response: CsatResponse = {
    conversationId: survey.conversationId,
    workspaceId: survey.workspaceId,
    inboxId: survey.inboxId,
    rating,
    comment,
    assigneeUserId: survey.assigneeUserId,
    teamId: survey.teamId,
    submittedAt: deps.clock.now(),
  };
  if (!(await stores.responses.insert(response))) return { answered: false, view: (await stores.surveys.view(conversationId)) ?? view };
  await stores.events.record(csatResponseReceived(response));
  return { answered: true, response, view: { ...view, response } };
}

/** `GET /v3/helpdesk/csat-responses`: helpdesk reports (Owner, Admin, Manager). */
export async function listCsatResponses(
  stores: Pick<CsatStores, 'responses'>,
  actor: Actor,
  request: PageRequest,
  query: { inboxId?: string; from?: string; to?: string },
): Promise<Page<ListedCsatResponse>> {
  authorize(actor.roles, 'helpdesk.reports', 'read');
  const problems: string[] = [];
  if (query.inboxId !== undefined && !isUuid(query.inboxId)) problems.push('query.inboxId must be an inbox id');
  const from = rangeEnd(query.from, 'from', problems);
  const to = rangeEnd(query.to, 'to', problems);
  if (from && to && from.getTime() > to.getTime()) problems.push('query.from must not be after query.to');
  if (problems.length > 0) throw badRequest(problems);
  return stores.responses.list(actor.workspaceId, request, { inboxId: query.inboxId?.toLowerCase(), from, to });
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

/**
 * One end of a range, inclusive (spec 2.1 "Report ranges: inclusive on both ends. Day buckets
 * are UTC days"): a day `YYYY-MM-DD` is the whole UTC day (`from` its first millisecond, `to` its
 * last); a UTC timestamp is that instant.
 */
export function rangeEnd(value: string | undefined, end: 'from' | 'to', problems: string[]): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const day = DAY.exec(value);
  let at: Date | undefined;
  if (day) {
    const start = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    const valid = new Date(start).toISOString().startsWith(value);
    at = valid ? new Date(end === 'from' ? start : start + 86_400_000 - 1) : undefined;
  } else if (INSTANT.test(value)) {
    const parsed = new Date(value);
    at = Number.isNaN(parsed.getTime()) || !parsed.toISOString().startsWith(value.slice(0, 19)) ? undefined : parsed;
  }
  if (!at) problems.push(`query.${end} must be a UTC day (YYYY-MM-DD) or an ISO 8601 UTC timestamp`);
  return at;
}
