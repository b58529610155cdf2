import { beforeAll, expect } from 'bun:test';
import { memberWithToken } from '../integration/helpers.ts';
import { connectedConnection } from './connections.ts';
import { HOOK_TIMEOUT, type TestService } from './service.ts';
import { eventually } from './wait.ts';

export { eventually, subscribersDone, workerSettled } from './wait.ts';
export { connectedConnection };

/**
 * Set-up and polling shared by the helpdesk integration tests (no test cases here): sandbox
 * connections bound to inboxes, sandbox contacts writing in, waiting for the worker to open
 * their conversations, and reading back the helpdesk events the use cases recorded.
 */

export type Owner = { userId: string; workspaceId: string; token: string };
export type Member = { userId: string; email: string; token: string };

/** A CONNECTION inbox bound to `connectionId` (201); answers its id. */
export async function connectionInbox(service: TestService, apikey: string, name: string, connectionId: string): Promise<string> {
  const inbox = await service.call('POST', '/v3/helpdesk/inboxes', { apikey, body: { name, channelType: 'CONNECTION', connectionId } });
  expect(inbox.status).toBe(201);
  return inbox.body.id;
}

/** Replaces the members of an inbox (200). */
export async function setInboxMembers(service: TestService, apikey: string, inboxId: string, userIds: string[]): Promise<void> {
  expect((await service.call('PUT', `/v3/helpdesk/inboxes/${inboxId}/members`, { apikey, body: { userIds } })).status).toBe(200);
}

/** A PRO owner whose connected sandbox connection is bound to a CONNECTION inbox. */
export interface HelpdeskLine {
  owner: Owner;
  connectionId: string;
  inboxId: string;
}

export async function helpdeskLine(service: TestService, names: { connection: string; inbox: string }): Promise<HelpdeskLine> {
  const owner = await service.bootstrap({ plan: 'PRO' });
  const connectionId = await connectedConnection(service, owner.token, names.connection);
  const inboxId = await connectionInbox(service, owner.token, names.inbox, connectionId);
  return { owner, connectionId, inboxId };
}

/** A helpdesk line whose inbox has an Agent member (with a token of their own). */
export interface HelpdeskWorkspace extends HelpdeskLine {
  agent: Member;
}

export async function helpdeskWorkspace(service: TestService, names: { connection: string; inbox: string }): Promise<HelpdeskWorkspace> {
  const line = await helpdeskLine(service, names);
  const agent = await memberWithToken(service, line.owner, 'AGENT');
  await setInboxMembers(service, line.owner.token, line.inboxId, [agent.userId]);
  return { ...line, agent };
}

/**
 * The helpdesk line of a test file (`helpdeskLine`), set up before its tests by a hook registered
 * after the service's. Answers it at once: `owner` is filled in place, the ids are read from it.
 */
export function useHelpdeskLine(service: TestService, names: { connection: string; inbox: string }): HelpdeskLine {
  const line: HelpdeskLine = { owner: {} as Owner, connectionId: '', inboxId: '' };
  beforeAll(async () => {
    const made = await helpdeskLine(service, names);
    Object.assign(line.owner, made.owner);
    line.connectionId = made.connectionId;
    line.inboxId = made.inboxId;
  }, HOOK_TIMEOUT);
  return line;
}

/**
 * The helpdesk workspace of a test file (`helpdeskWorkspace`), set up before its tests by a hook
 * registered after the service's. Answers it at once: `owner` and `agent` are filled in place
 * (so a file may take them out of it at once); `connectionId` and `inboxId` are read from it.
 * `manualAssignment` switches round-robin off, for files whose assignments are all their own.
 */
export function useHelpdeskWorkspace(
  service: TestService,
  options: { connection: string; inbox: string; manualAssignment?: boolean },
): HelpdeskWorkspace {
  const workspace: HelpdeskWorkspace = { owner: {} as Owner, agent: {} as Member, connectionId: '', inboxId: '' };
  beforeAll(async () => {
    const made = await helpdeskWorkspace(service, options);
    Object.assign(workspace.owner, made.owner);
    Object.assign(workspace.agent, made.agent);
    workspace.connectionId = made.connectionId;
    workspace.inboxId = made.inboxId;
    if (options.manualAssignment) await withoutAutoAssignment(service, made.owner.token, made.inboxId);
  }, HOOK_TIMEOUT);
  return workspace;
}

/** Another connected line of the workspace with its CONNECTION inbox, the workspace's Agent a member there too. */
export async function anotherLine(service: TestService, workspace: HelpdeskWorkspace, names: { connection: string; inbox: string }): Promise<{ connectionId: string; inboxId: string }> {
  const connectionId = await connectedConnection(service, workspace.owner.token, names.connection);
  const inboxId = await connectionInbox(service, workspace.owner.token, names.inbox, connectionId);
  await setInboxMembers(service, workspace.owner.token, inboxId, [workspace.agent.userId]);
  return { connectionId, inboxId };
}

/** A message from a sandbox contact (`from`, a phone) on the connection, as the network would deliver it; answers the raw response. */
export function injectContactMessage(service: TestService, apikey: string, connectionId: string, message: { from: string } & Record<string, unknown>) {
  return service.call('POST', `/v3/connections/${connectionId}/sandbox/messages`, { apikey, body: message });
}

/** The conversation of the contact with this phone passing `predicate`, once the worker has run the subscriber. */
export async function conversationOfContact(service: TestService, apikey: string, phone: string, predicate: (c: any) => boolean = () => true): Promise<any> {
  const contact = await eventually(async () => (await service.call('GET', `/v3/helpdesk/contacts?s=${phone}`, { apikey })).body.data?.[0], `contact ${phone}`);
  return eventually(async () => {
    const list = (await service.call('GET', '/v3/helpdesk/conversations?per_page=100', { apikey })).body.data as any[];
    return list.find((c) => c.contactId === contact.id && predicate(c));
  }, `conversation of ${phone}`);
}

/** A sandbox contact writes (201) on the connection; answers the conversation that opened. */
export async function conversationFromContact(service: TestService, apikey: string, connectionId: string, phone: string, message: Record<string, unknown>): Promise<any> {
  expect((await injectContactMessage(service, apikey, connectionId, { from: phone, ...message })).status).toBe(201);
  return conversationOfContact(service, apikey, phone);
}

/** The messages of a conversation (oldest first, up to 100), once there are at least `count`. */
export function messagesUntil(service: TestService, apikey: string, conversationId: string, count: number): Promise<any[]> {
  return eventually(async () => {
    const list = (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}/messages?limit=100`, { apikey })).body as any[];
    return list.length >= count ? list : undefined;
  }, `${count} messages`);
}

/** The message of a conversation, as REST lists it, once it passes `done`. */
export function messageWhen(
  service: TestService,
  apikey: string,
  conversationId: string,
  messageId: string,
  done: (m: any) => boolean,
  { what = `message ${messageId}`, timeoutMs }: { what?: string; timeoutMs?: number } = {},
): Promise<any> {
  return eventually(async () => {
    const list = (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}/messages?limit=100`, { apikey })).body as any[];
    return list.find((m) => m.id === messageId && done(m));
  }, what, timeoutMs);
}

/**
 * What the connection sent to the contact's chat (`chat`, a phone): the first outbound message
 * whose JSON contains `text`, once the network took it (a PENDING message is in the history
 * before the worker has sent it, and has no network id a receipt could name yet).
 */
export function sentToContact(service: TestService, apikey: string, connectionId: string, chat: string, text: string): Promise<any> {
  return eventually(async () => {
    const history = await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${chat}`, { apikey });
    return history.body?.find?.((m: any) => m.direction === 'outbound' && m.status !== 'PENDING' && JSON.stringify(m).includes(text));
  }, `the message to ${chat}`);
}

/**
 * The data of the helpdesk events of this type recorded for the workspace, oldest first (the
 * `events` table; a helpdesk event names no connection, which this checks).
 */
export async function helpdeskEvents(service: TestService, workspaceId: string, type: string): Promise<any[]> {
  const rows = await service.runtime.ctx.db
    .selectFrom('events')
    .select(['payload', 'connection_id'])
    .where('workspace_id', '=', workspaceId)
    .where('event', '=', type)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  for (const row of rows) expect(row.connection_id).toBeNull();
  return rows.map((r) => (typeof r.payload === 'string' ? JSON.parse(r.payload) : (r.payload as any)).data);
}

/** Switches round-robin off for the inbox (200): its new conversations stay unassigned until someone assigns them. */
export async function withoutAutoAssignment(service: TestService, apikey: string, inboxId: string): Promise<void> {
  expect((await service.call('PUT', `/v3/helpdesk/inboxes/${inboxId}/assignment`, { apikey, body: { enabled: false } })).status).toBe(200);
}
