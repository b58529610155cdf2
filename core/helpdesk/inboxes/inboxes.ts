import type { RecordWrites } from '../../shared/workspace-records.ts';
import type { Actor } from '../../identity/identity.ts';
import { authorize, can } from '../../identity/roles.ts';
import { badRequest, coded, conflict, notFound } from '../../shared/errors.ts';
import type { Page, PageRequest } from '../../shared/pagination.ts';
import type { Clock, IdGen, Random } from '../../shared/ports.ts';
import { base64url } from '../../tokens/secret.ts';
import { assertHelpdeskConfigurable, type WorkspacePlans } from '../plan-gate.ts';
import { assertOutboundAllowed, type OutboundPolicy } from '../../shared/outbound-policy.ts';
import { onlyWorkspaceMembers, type WorkspaceMembership } from '../../identity/members.ts';

/** Spec 2.10: an inbox is bound to a connection, or is an API channel the customer's app feeds. */
export const CHANNEL_TYPES = ['CONNECTION', 'API'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export interface Inbox {
  id: string;
  workspaceId: string;
  name: string;
  channelType: ChannelType;
  /** Set for CONNECTION inboxes (null if the connection was deleted since); null for API inboxes. */
  connectionId: string | null;
  /** IANA zone name (spec 2.1). */
  timezone: string;
  /** API inboxes: where outgoing messages are POSTed (spec 6.6). */
  webhookUrl: string | null;
  /** API inboxes: inbound calls must be signed (spec 5.6). */
  hmacMandatory: boolean;
  /** API inboxes: the inbound credential (`inboundWebhookSecret`, later `channelConfig.hmacToken`). */
  inboundSecret: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface InboxMember {
  userId: string;
  name: string;
  email: string;
}

export interface InboxStore extends RecordWrites<Inbox> {
  get(workspaceId: string, id: string): Promise<Inbox | undefined>;
  /** `onlyFor`: the inboxes this user is a member of (an Agent's view); undefined: all. */
  list(workspaceId: string, request: PageRequest, onlyFor?: string): Promise<Page<Inbox>>;
  /** Whether another inbox of the workspace is bound to the connection. */
  connectionTaken(workspaceId: string, connectionId: string, exceptInboxId?: string): Promise<boolean>;
  isMember(inboxId: string, userId: string): Promise<boolean>;
  members(inboxId: string): Promise<InboxMember[]>;
  setMembers(inboxId: string, userIds: string[]): Promise<void>;
}

export interface InboxStores extends WorkspaceMembership {
  inboxes: InboxStore;
  plans: WorkspacePlans;
  /** Whether the connection belongs to the workspace. */
  connectionInWorkspace(workspaceId: string, connectionId: string): Promise<boolean>;
}

export interface InboxDeps {
  clock: Clock;
  ids: IdGen;
  random: Random;
  /** Whether a name is an IANA time zone (the runtime's zone database lives in an adapter). */
  isTimeZone(name: string): boolean;
  outbound: OutboundPolicy;
}

export interface InboxInput {
  name: string;
  channelType: ChannelType;
  connectionId?: string;
  timezone?: string;
  webhookUrl?: string | null;
  hmacMandatory?: boolean;
}

export type InboxPatch = Partial<Pick<InboxInput, 'name' | 'timezone' | 'webhookUrl' | 'hmacMandatory'>>;

export const inboxNotFound = () => notFound('Inbox not found');
const connectionNotFound = (id: string) => coded('not_found', 'CONNECTION_NOT_FOUND', `No connection ${id} in this workspace`);

/** Owners, Admins and Managers configure inboxes and see them all; Agents see their own. */
export function seesEveryInbox(actor: Actor): boolean {
  return can(actor.roles, 'helpdesk.configure', 'read');
}

/** May this member read the inbound credential (`channelConfig.hmacToken`)? */
export function readsInboxSecrets(actor: Actor): boolean {
  return can(actor.roles, 'helpdesk.configure', 'write');
}

export async function createInbox(stores: InboxStores, deps: InboxDeps, actor: Actor, input: InboxInput): Promise<Inbox> {
  await assertHelpdeskConfigurable(stores.plans, actor);
  const problems: string[] = [];
  const name = checkName(input.name, problems);
  const timezone = input.timezone ?? 'UTC';
  checkTimezone(deps, timezone, problems);
  const api = input.channelType === 'API';
  if (api && input.connectionId !== undefined) problems.push('body.connectionId is only for CONNECTION inboxes');
  if (!api && input.connectionId === undefined) problems.push('body.connectionId is required for a CONNECTION inbox');
  if (!api && (input.webhookUrl != null || input.hmacMandatory !== undefined)) problems.push('body.webhookUrl and body.hmacMandatory are only for API inboxes');
  if (input.webhookUrl != null) checkUrl(input.webhookUrl, problems);
  if (problems.length > 0) throw badRequest(problems);
  if (input.webhookUrl != null) await assertOutboundAllowed(deps.outbound, 'body.webhookUrl', input.webhookUrl);
  if (!api) await assertConnectionFree(stores, actor.workspaceId, input.connectionId!);
  const now = deps.clock.now();
  const inbox: Inbox = {
    id: deps.ids.next(),
    workspaceId: actor.workspaceId,
    name,
    channelType: input.channelType,
    connectionId: api ? null : input.connectionId!,
    timezone,
    webhookUrl: api ? input.webhookUrl ?? null : null,
    hmacMandatory: api ? input.hmacMandatory ?? false : false,
    inboundSecret: api ? `hdsec_${base64url(deps.random.bytes(32))}` : null,
    createdAt: now,
    updatedAt: now,
  };
  await stores.inboxes.insert(inbox);
  return inbox;
}

export async function listInboxes(stores: InboxStores, actor: Actor, request: PageRequest): Promise<Page<Inbox>> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  return stores.inboxes.list(actor.workspaceId, request, seesEveryInbox(actor) ? undefined : actor.userId);
}

/** An inbox the actor may see; 404 otherwise (never 403: spec 2.14, 7.1). */
export async function visibleInbox(stores: Pick<InboxStores, 'inboxes'>, actor: Actor, id: string): Promise<Inbox> {
  authorize(actor.roles, 'helpdesk.work', 'read');
  const inbox = await stores.inboxes.get(actor.workspaceId, id);
  if (!inbox) throw inboxNotFound();
  if (!seesEveryInbox(actor) && !(await stores.inboxes.isMember(inbox.id, actor.userId))) throw inboxNotFound();
  return inbox;
}

export const getInbox = visibleInbox;

export async function updateInbox(stores: InboxStores, deps: InboxDeps, actor: Actor, id: string, patch: InboxPatch): Promise<Inbox> {
  const inbox = await visibleInbox(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const problems: string[] = [];
  const name = patch.name === undefined ? inbox.name : checkName(patch.name, problems);
  const timezone = patch.timezone ?? inbox.timezone;
  if (patch.timezone !== undefined) checkTimezone(deps, patch.timezone, problems);
  if (inbox.channelType !== 'API' && (patch.webhookUrl != null || patch.hmacMandatory !== undefined)) {
    problems.push('body.webhookUrl and body.hmacMandatory are only for API inboxes');
  }
  if (patch.webhookUrl != null) checkUrl(patch.webhookUrl, problems);
  if (problems.length > 0) throw badRequest(problems);
  if (patch.webhookUrl != null) await assertOutboundAllowed(deps.outbound, 'body.webhookUrl', patch.webhookUrl);
  const updated: Inbox = {
    ...inbox,
    name,
    timezone,
    webhookUrl: patch.webhookUrl === undefined ? inbox.webhookUrl : patch.webhookUrl,
    hmacMandatory: patch.hmacMandatory ?? inbox.hmacMandatory,
    updatedAt: deps.clock.now(),
  };
  await stores.inboxes.update(updated);
  return updated;
}

export async function deleteInbox(stores: InboxStores, actor: Actor, id: string): Promise<void> {
  const inbox = await visibleInbox(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  await stores.inboxes.delete(inbox.id);
}

export async function listInboxMembers(stores: InboxStores, actor: Actor, id: string): Promise<InboxMember[]> {
  const inbox = await visibleInbox(stores, actor, id);
  return stores.inboxes.members(inbox.id);
}

/** Replaces the inbox's members; every user must be a member of the workspace. */
export async function setInboxMembers(stores: InboxStores, actor: Actor, id: string, userIds: string[]): Promise<InboxMember[]> {
  const inbox = await visibleInbox(stores, actor, id);
  await assertHelpdeskConfigurable(stores.plans, actor);
  const wanted = await onlyWorkspaceMembers(stores, actor.workspaceId, userIds);
  await stores.inboxes.setMembers(inbox.id, wanted);
  return stores.inboxes.members(inbox.id);
}

async function assertConnectionFree(stores: InboxStores, workspaceId: string, connectionId: string): Promise<void> {
  if (!(await stores.connectionInWorkspace(workspaceId, connectionId))) throw connectionNotFound(connectionId);
  if (await stores.inboxes.connectionTaken(workspaceId, connectionId)) throw conflict('Another inbox of the workspace is already bound to this connection');
}

function checkName(name: string, problems: string[]): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 120) problems.push('body.name must be 1 to 120 characters');
  return trimmed;
}

function checkTimezone(deps: InboxDeps, timezone: string, problems: string[]): void {
  if (!deps.isTimeZone(timezone)) problems.push('body.timezone must be an IANA time zone name, such as America/Sao_Paulo');
}

function checkUrl(value: string, problems: string[]): void {
  let ok = false;
  try {
    const url = new URL(value);
    ok = url.protocol === 'http:' || url.protocol === 'https:';
  } catch {}
  if (!ok) problems.push('body.webhookUrl must be an absolute http(s) URL');
}
