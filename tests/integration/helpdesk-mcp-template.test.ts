import { beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { teachTemplates, type TemplateSimulator } from '../support/graph-simulator-templates.ts';
import { useMcpClients } from '../support/mcp-clients.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useTestService } from '../support/service.ts';
import { connectionInbox, conversationOfContact, eventually, setInboxMembers, withoutAutoAssignment } from '../support/helpdesk.ts';
import { utilityTemplate } from '../support/template-definitions.ts';
import { HOOK_TIMEOUT, useMember } from './helpers.ts';

/**
 * The MCP reply tool sends a template as the REST route does (issue 23): on an official
 * connection whose 24-hour window is closed, spec 3.4 refuses free text ("Free text is refused
 * with 422; only a pre-approved template may be sent"), so an assistant needs `template` too.
 * The Graph API simulator stands in for the platform.
 */

const sim = useGraphSimulator();
let platform: TemplateSimulator;
beforeAll(() => {
  platform = teachTemplates(sim);
});
const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = { userId: '', workspaceId: '', token: '' };
beforeAll(async () => {
  Object.assign(owner, await service.bootstrap({ plan: 'PRO' }));
}, HOOK_TIMEOUT);
const agent = useMember(service, owner, 'AGENT');
const clientFor = useMcpClients(service, 'helpdesk-template-tests').withApiKey;
const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

const PHONE = '447700977701';
let conversationId = '';

beforeAll(async () => {
  const { connectionId, callbackUrl } = await officialConnection(service, sim, owner.token, 'official mcp');
  const inboxId = await connectionInbox(service, owner.token, 'Official', connectionId);
  await withoutAutoAssignment(service, owner.token, inboxId);
  await setInboxMembers(service, owner.token, inboxId, [agent.userId]);
  const created = await service.call('POST', `/v3/connections/${connectionId}/templates`, { apikey: owner.token, body: utilityTemplate('reengage', 'Are you still there, {{1}}?') });
  expect(created.status).toBe(201);
  await platform.approve(created.body.externalId);
  expect((await sim.deliverIncoming(callbackUrl, { from: PHONE, name: 'Edu', type: 'text', text: { body: 'hello?' } })).status).toBe(200);
  conversationId = (await conversationOfContact(service, owner.token, PHONE)).id;
  // Test-only time travel: the contact's message is 25 hours old, the window closed.
  await service.runtime.ctx.db
    .updateTable('chats')
    .set({ last_contact_message_at: new Date(Date.now() - 25 * 3_600_000) })
    .where('connection_id', '=', connectionId)
    .where('remote_jid', '=', `${PHONE}@s.whatsapp.net`)
    .execute();
}, HOOK_TIMEOUT);

describe('reply_to_conversation with a template', () => {
  test('its input schema documents template (name, language, components) beside content', async () => {
    const client = await clientFor(owner.token);
    const tool = (await client.listTools()).tools.find((t) => t.name === 'reply_to_conversation')!;
    const properties = tool.inputSchema.properties as Record<string, any>;
    expect(Object.keys(properties)).toEqual(expect.arrayContaining(['conversationId', 'content', 'template', 'private']));
    expect(tool.inputSchema.required).toEqual(['conversationId']);
    expect(Object.keys(properties.template.properties)).toEqual(['name', 'language', 'components']);
    expect(properties.template.required).toEqual(['name', 'language']);
    expect(tool.description).toMatch(/template/);
  });

  test('the window is closed: text is a tool error naming the template; the template goes out to the contact', async () => {
    const client = await clientFor(agent.token);
    const read = await call(client, 'read_conversation', { conversationId });
    expect((read.structuredContent as any).conversation.sendWindow).toMatchObject({ open: false });

    const text = await call(client, 'reply_to_conversation', { conversationId, content: 'Still there?' });
    expect(text.isError).toBe(true);
    expect(JSON.stringify(text.content)).toMatch(/template/i);

    const template = { name: 'reengage', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: 'Edu' }] }] };
    const sent = await call(client, 'reply_to_conversation', { conversationId, template });
    expect(sent.isError).toBeFalsy();
    expect((sent.structuredContent as any).message).toMatchObject({ direction: 'outgoing', private: false, status: 'PENDING', content: 'Are you still there, Edu?' });
    const out = await eventually(async () => sim.sent.find((m) => m.body.to === PHONE && m.body.type === 'template'), 'the template on the simulator');
    expect(out.body.template).toMatchObject({ name: 'reengage', language: { code: 'en_US' }, components: template.components });
  });

  test('a template that does not fit, or one with content or private, is a tool error and sends nothing', async () => {
    const client = await clientFor(owner.token);
    const before = sim.sent.length;
    const missing = await call(client, 'reply_to_conversation', { conversationId, template: { name: 'reengage', language: 'en_US' } });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.content)).toContain('1 variable');
    const both = await call(client, 'reply_to_conversation', { conversationId, content: 'hi', template: { name: 'reengage', language: 'en_US' } });
    expect(both.isError).toBe(true);
    expect(JSON.stringify(both.content)).toContain('a reply of its own');
    const note = await call(client, 'reply_to_conversation', { conversationId, private: true, template: { name: 'reengage', language: 'en_US' } });
    expect(note.isError).toBe(true);
    const neither = await call(client, 'reply_to_conversation', { conversationId });
    expect(neither.isError).toBe(true);
    const messages = (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}/messages?limit=50`, { apikey: owner.token })).body as any[];
    expect(messages.filter((m) => m.direction === 'outgoing')).toHaveLength(1);
    expect(sim.sent.length).toBe(before);
  });
});
