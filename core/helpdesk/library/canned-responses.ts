import { workspaceReads, type WorkspaceRecordStore } from '../../shared/workspace-records.ts';
import type { Actor } from '../../identity/identity.ts';
import { badRequest, conflict, notFound } from '../../shared/errors.ts';
import type { PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import { MAX_CONTENT_LENGTH } from '../conversations/helpdesk-messages.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';

/**
 * Canned responses (issue 7 item 8): the workspace's stock replies, picked by a short code an
 * agent types in the composer (`/refund`). Every member reads them (Agents pick them); creating,
 * changing and deleting them is `helpdesk.configure` (Managers and above) on the PRO plan: they
 * speak for the business to every customer, like the inbox settings. An agent's own shortcuts
 * are personal macros (macros.ts).
 *
 * A short code is 1–50 letters, digits, `_` or `-` (it follows a `/` in the composer), unique
 * in the workspace case-insensitively (409 otherwise); the content is 1–4096 characters trimmed,
 * as a message's is.
 */
export interface CannedResponse {
  id: string;
  workspaceId: string;
  shortCode: string;
  content: string;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * `list` is in short-code order; `search` matches short code or content (substring,
 * case-insensitive). `insert` and `update` throw `duplicateShortCode()` when another response of
 * the workspace has the code.
 */
export type CannedResponseStore = WorkspaceRecordStore<CannedResponse>;

export interface CannedResponseStores {
  cannedResponses: CannedResponseStore;
  plans: WorkspacePlans;
}

export interface CannedResponseDeps {
  clock: Clock;
  ids: IdGen;
}

export const SHORT_CODE_MAX_LENGTH = 50;
const SHORT_CODE = /^[A-Za-z0-9_-]+$/;
export const duplicateShortCode = () => conflict('Another canned response of this workspace has this shortCode');
const cannedResponseNotFound = () => notFound('Canned response not found');

/** The short code as compared (unique per workspace). */
export const shortCodeKey = (shortCode: string) => shortCode.toLowerCase();

function cleanShortCode(raw: unknown, problems: string[]): string | undefined {
  const code = typeof raw === 'string' ? raw.trim().replace(/^\//, '') : '';
  if (code.length < 1 || code.length > SHORT_CODE_MAX_LENGTH || !SHORT_CODE.test(code)) {
    problems.push(`body.shortCode must be 1 to ${SHORT_CODE_MAX_LENGTH} letters, digits, _ or - (a leading / is dropped)`);
    return undefined;
  }
  return code;
}

function cleanContent(raw: unknown, problems: string[]): string | undefined {
  const content = typeof raw === 'string' ? raw.trim() : '';
  if (content.length < 1 || content.length > MAX_CONTENT_LENGTH) {
    problems.push(`body.content must be 1 to ${MAX_CONTENT_LENGTH} characters`);
    return undefined;
  }
  return content;
}

const cannedResponseReads = workspaceReads<CannedResponse>('helpdesk.work', cannedResponseNotFound);

export const listCannedResponses = (stores: CannedResponseStores, actor: Actor, request: PageRequest) => cannedResponseReads.list(stores.cannedResponses, actor, request);

export const getCannedResponse = (stores: CannedResponseStores, actor: Actor, id: string) => cannedResponseReads.get(stores.cannedResponses, actor, id);


export async function createCannedResponse(stores: CannedResponseStores, deps: CannedResponseDeps, actor: Actor, input: { shortCode?: unknown; content?: unknown }): Promise<CannedResponse> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const problems: string[] = [];
  const shortCode = cleanShortCode(input.shortCode, problems);
  const content = cleanContent(input.content, problems);
  if (problems.length > 0) throw badRequest(problems);
  const now = deps.clock.now();
  const response: CannedResponse = { id: deps.ids.next(), workspaceId: actor.workspaceId, shortCode: shortCode!, content: content!, createdBy: actor.userId, createdAt: now, updatedAt: now };
  await stores.cannedResponses.insert(response);
  return response;
}

/** Fields left out keep their value. */
export async function updateCannedResponse(
  stores: CannedResponseStores,
  deps: CannedResponseDeps,
  actor: Actor,
  id: string,
  input: { shortCode?: unknown; content?: unknown },
): Promise<CannedResponse> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const current = await stores.cannedResponses.get(actor.workspaceId, id);
  if (!current) throw cannedResponseNotFound();
  const problems: string[] = [];
  const shortCode = input.shortCode === undefined ? current.shortCode : cleanShortCode(input.shortCode, problems);
  const content = input.content === undefined ? current.content : cleanContent(input.content, problems);
  if (problems.length > 0) throw badRequest(problems);
  if (shortCode === current.shortCode && content === current.content) return current;
  const updated: CannedResponse = { ...current, shortCode: shortCode!, content: content!, updatedAt: deps.clock.now() };
  await stores.cannedResponses.update(updated);
  return updated;
}

export async function deleteCannedResponse(stores: CannedResponseStores, actor: Actor, id: string): Promise<void> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const current = await stores.cannedResponses.get(actor.workspaceId, id);
  if (!current) throw cannedResponseNotFound();
  await stores.cannedResponses.delete(current.id);
}
