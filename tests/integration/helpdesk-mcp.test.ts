import { describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { useTestService } from '../support/service.ts';
import { eventually, injectContactMessage, sentToContact, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { useMcpClients } from '../support/mcp-clients.ts';
import { useMember } from './helpers.ts';

/**
 * The helpdesk's MCP tools (issue 6; spec 1.7, 2.7): an assistant works the shared inbox through
 * `/v3/mcp` with the same rules as REST — Agents see only their inboxes, writes need the PRO plan.
 */


const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'mcp line', inbox: 'Support' });
const { owner, agent } = hd;
const outsider = useMember(service, owner, 'AGENT');

const clientFor = useMcpClients(service, 'helpdesk-tests').withApiKey;

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

/** The first conversation `list_conversations` shows, once the worker has opened one. */
const listedConversation = (client: Client) => eventually(async () => ((await call(client, 'list_conversations', {})).structuredContent as any).conversations[0], 'a conversation');

describe('helpdesk MCP tools', () => {
  test('the five tools are listed with their scopes\' read/write hints', async () => {
    const client = await clientFor(owner.token);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['list_conversations', 'read_conversation', 'reply_to_conversation', 'assign_conversation', 'set_conversation_status']) expect(names).toContain(name);
    expect(tools.find((t) => t.name === 'read_conversation')!.annotations?.readOnlyHint).toBe(true);
  });

  test('an assistant lists, reads, replies, assigns and resolves; the contact gets the reply', async () => {
    await injectContactMessage(service, owner.token, hd.connectionId, { from: '5511944440001', text: 'where is my order?', pushName: 'Bia' });
    const client = await clientFor(agent.token);
    const conversation = await listedConversation(client);
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
    const sent = await sentToContact(service, owner.token, hd.connectionId, '5511944440001', 'It ships today.');
    expect(sent).toBeDefined();
  }, 40_000);

  test('an Agent outside the inbox sees nothing and reaches nothing; a bad status is a tool error', async () => {
    const client = await clientFor(owner.token);
    const conversation = await listedConversation(client);
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
