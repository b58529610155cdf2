import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from '../support/service.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * The helpdesk's MCP tools (issue 6; spec 1.7, 2.7): an assistant works the shared inbox through
 * `/v3/mcp` with the same rules as REST — Agents see only their inboxes, writes need the PRO plan.
 */

let service: TestService;
let owner: { userId: string; workspaceId: string; token: string };
let agent: { userId: string; token: string };
let outsider: { userId: string; token: string };
let connectionId: string;
const clients: Client[] = [];

beforeAll(async () => {
  service = await startTestService();
  owner = await service.bootstrap({ plan: 'PRO' });
  agent = await memberWithToken(service, owner, 'AGENT');
  outsider = await memberWithToken(service, owner, 'AGENT');
  const created = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'mcp line' } });
  connectionId = created.body.id;
  await service.call('POST', `/v3/connections/${connectionId}/connect`, { apikey: owner.token });
  const inbox = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: owner.token, body: { name: 'Support', channelType: 'CONNECTION', connectionId } });
  await service.call('PUT', `/v3/helpdesk/inboxes/${inbox.body.id}/members`, { apikey: owner.token, body: { userIds: [agent.userId] } });
}, HOOK_TIMEOUT);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await service?.stop();
}, HOOK_TIMEOUT);

async function clientFor(apikey: string): Promise<Client> {
  const client = new Client({ name: 'helpdesk-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/v3/mcp`), { requestInit: { headers: { apikey } } }));
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

async function conversationOfContact(client: Client): Promise<any> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const listed = await call(client, 'list_conversations', {});
    const found = (listed.structuredContent as any).conversations[0];
    if (found) return found;
    if (Date.now() > deadline) throw new Error('no conversation');
    await Bun.sleep(100);
  }
}

describe('helpdesk MCP tools', () => {
  test('the five tools are listed with their scopes\' read/write hints', async () => {
    const client = await clientFor(owner.token);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['list_conversations', 'read_conversation', 'reply_to_conversation', 'assign_conversation', 'set_conversation_status']) expect(names).toContain(name);
    expect(tools.find((t) => t.name === 'read_conversation')!.annotations?.readOnlyHint).toBe(true);
  });

  test('an assistant lists, reads, replies, assigns and resolves; the contact gets the reply', async () => {
    await service.call('POST', `/v3/connections/${connectionId}/sandbox/messages`, { apikey: owner.token, body: { from: '5511944440001', text: 'where is my order?', pushName: 'Bia' } });
    const client = await clientFor(agent.token);
    const conversation = await conversationOfContact(client);
    expect(conversation.status).toBe('OPEN');

    const read = await call(client, 'read_conversation', { conversationId: conversation.id });
    expect(read.isError).toBeFalsy();
    expect((read.structuredContent as any).messages.map((m: any) => m.content)).toEqual(['where is my order?']);

    const reply = await call(client, 'reply_to_conversation', { conversationId: conversation.id, content: 'It ships today.' });
    expect(reply.isError).toBeFalsy();
    expect((reply.structuredContent as any).message).toMatchObject({ direction: 'outgoing', status: 'PENDING', content: 'It ships today.' });

    const assigned = await call(client, 'assign_conversation', { conversationId: conversation.id, assigneeUserId: agent.userId });
    expect((assigned.structuredContent as any).conversation.assigneeUserId).toBe(agent.userId);

    const resolved = await call(client, 'set_conversation_status', { conversationId: conversation.id, status: 'RESOLVED' });
    expect((resolved.structuredContent as any)).toMatchObject({ changed: true, conversation: { status: 'RESOLVED' } });

    // The reply went out on the connection to the contact.
    const deadline = Date.now() + 20_000;
    let sent: any;
    while (!sent && Date.now() < deadline) {
      const history = await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=5511944440001`, { apikey: owner.token });
      sent = history.body?.find?.((m: any) => m.direction === 'outbound' && JSON.stringify(m).includes('It ships today.'));
      if (!sent) await Bun.sleep(100);
    }
    expect(sent).toBeDefined();
  }, 40_000);

  test('an Agent outside the inbox sees nothing and reaches nothing; a bad status is a tool error', async () => {
    const client = await clientFor(owner.token);
    const conversation = await conversationOfContact(client);
    const stranger = await clientFor(outsider.token);
    expect(((await call(stranger, 'list_conversations', {})).structuredContent as any).total).toBe(0);
    const denied = await call(stranger, 'read_conversation', { conversationId: conversation.id });
    expect(denied.isError).toBe(true);
    expect(JSON.stringify(denied.content)).toContain('not found');
    const refused = await call(client, 'set_conversation_status', { conversationId: conversation.id, status: 'SNOOZED' });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('snoozedUntil');
  });
});
