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
    // A sandbox line keeps no send window.
    expect((read.structuredContent as any).conversation.sendWindow).toBeNull();

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

describe('list_conversations takes the inbox list’s parameters (view, s, labels, priority, sort, cursor/limit)', () => {
  test('the same filters, search, sorts and keyset pages as GET /v3/helpdesk/conversations; an unknown label is a tool error', async () => {
    const phones = ['5511944449001', '5511944449002', '5511944449003'];
    const names = ['Quokka Alpha', 'Quokka Bravo', 'Quokka Charlie'];
    for (const [i, from] of phones.entries()) {
      expect((await injectContactMessage(service, owner.token, hd.connectionId, { from, text: 'zanzibar parcel', pushName: names[i] })).status).toBe(201);
    }
    const client = await clientFor(owner.token);
    const list = async (args: Record<string, unknown>) => {
      const result = await call(client, 'list_conversations', args);
      expect(result.isError).toBeFalsy();
      return result.structuredContent as any;
    };
    const found = await eventually(async () => {
      const page = await list({ s: 'zanzibar', sort: 'created', limit: 10 });
      return page.conversations.length === 3 ? page.conversations : undefined;
    }, 'the three conversations');
    // The worker may open them in any order: each is told by its contact.
    const [bravo] = (await list({ s: 'quokka bravo' })).conversations;
    expect((await list({ s: 'quokka bravo' })).conversations).toHaveLength(1);
    expect((await service.call('GET', `/v3/helpdesk/contacts/${bravo.contactId}`, { apikey: owner.token })).body.name).toBe('Quokka Bravo');
    const urgent = found.find((c: any) => c.id !== bravo.id);
    const rest = (path: string, body: unknown) => service.call(path.endsWith('labels') ? 'POST' : 'PATCH', path, { apikey: owner.token, body });
    expect((await rest(`/v3/helpdesk/conversations/${bravo.id}/labels`, { labels: ['Wombat'] })).status).toBe(201);
    expect((await rest(`/v3/helpdesk/conversations/${urgent.id}`, { priority: 'URGENT', assigneeUserId: owner.userId })).status).toBe(200);

    expect((await list({ s: 'zanzibar', labels: ['wombat'] })).conversations.map((c: any) => c.id)).toEqual([bravo.id]);
    expect((await list({ s: 'zanzibar', priority: ['URGENT', 'HIGH'] })).conversations.map((c: any) => c.id)).toEqual([urgent.id]);
    expect((await list({ s: 'zanzibar', view: 'mine' })).conversations.map((c: any) => c.id)).toEqual([urgent.id]);
    expect((await list({ s: 'zanzibar', sort: 'priority' })).conversations[0].id).toBe(urgent.id);

    // Keyset pages, one at a time: every conversation once, in order, then no cursor.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await list({ s: 'zanzibar', sort: 'created', limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...page.conversations.map((c: any) => c.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(found.map((c: any) => c.id));

    const unknown = await call(client, 'list_conversations', { labels: ['no-such-label'] });
    expect(unknown.isError).toBe(true);
    expect(JSON.stringify(unknown.content)).toContain('unknown labels');
    const badSort = await call(client, 'list_conversations', { sort: 'sideways' });
    expect(badSort.isError).toBe(true);
  }, 40_000);
});
