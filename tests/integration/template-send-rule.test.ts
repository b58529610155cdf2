import { beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { teachTemplates, type TemplateSimulator } from '../support/graph-simulator-templates.ts';
import { useMcpClients } from '../support/mcp-clients.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { utilityTemplate } from '../support/template-definitions.ts';
import { expectStandardError, HOOK_TIMEOUT, UUID } from './helpers.ts';

/**
 * One rule in one place (issue 21 item 3): "v3 routes, v2 routes, MCP tools … reach sending
 * through the same core use case with the same checks; a rule like the template status check
 * lives in that use case". Spec 3.5 (templates reach `APPROVED` before they may be sent): a
 * template known on the connection that is not APPROVED is refused with the same 422 and the
 * same message by v3 (`send-template` and the generic send), v2 and the MCP `send_message`
 * tool (driven by the SDK's own client), and a campaign with it is refused when created or when
 * its draft is launched; an APPROVED one is accepted by all of them.
 */

let platform: TemplateSimulator;
let connectionId: string;
let mcp: Client;

const sim = useGraphSimulator();

beforeAll(() => {
  platform = teachTemplates(sim);
});

const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = useOwner(service, { plan: 'PRO' });
const mcpClients = useMcpClients(service, 'switchboard-tests');

beforeAll(async () => {
  ({ connectionId } = await officialConnection(service, sim, owner.token));
  mcp = await mcpClients.withApiKey(owner.token);
}, HOOK_TIMEOUT);

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });
const to = '447700900777';
const components = [{ type: 'body', parameters: [{ type: 'text', text: '42' }] }];

let counter = 0;
async function template(status: 'PENDING' | 'REJECTED' | 'PAUSED' | 'APPROVED'): Promise<{ name: string; externalId: string }> {
  const name = `rule_${status.toLowerCase()}_${Date.now() % 100_000}_${++counter}`;
  const created = await call('POST', `/v3/connections/${connectionId}/templates`, utilityTemplate(name, 'Your code is {{1}}'));
  expect(created.status).toBe(201);
  if (status === 'APPROVED') await platform.approve(created.body.externalId);
  if (status === 'REJECTED') await platform.reject(created.body.externalId, 'INVALID_FORMAT');
  if (status === 'PAUSED') {
    await platform.approve(created.body.externalId);
    await platform.pause(created.body.externalId);
  }
  const stored = await service.runtime.ctx.db.selectFrom('templates').select('status').where('id', '=', created.body.id).executeTakeFirstOrThrow();
  expect(stored.status).toBe(status);
  return { name, externalId: created.body.externalId };
}

/** The same send on every surface: its HTTP-like outcome (status, message, message id when accepted). */
const surfaces = {
  'v3 send-template': async (name: string) => {
    const res = await call('POST', `/v3/connections/${connectionId}/chats/messages/send-template`, { to, name, language: 'en_US', components });
    return { status: res.status, message: res.body.message, id: res.body.id };
  },
  'v3 send': async (name: string) => {
    const res = await call('POST', `/v3/connections/${connectionId}/chats/messages`, { to, template: { name, language: 'en_US', components } });
    return { status: res.status, message: res.body.message, id: res.body.id };
  },
  v2: async (name: string) => {
    const res = await call('POST', `/v2/connections/${connectionId}/chats/${to}/messages`, { template: { name, language: 'en_US', components } });
    return { status: res.status, message: res.body.message, id: res.body.id };
  },
  'MCP send_message': async (name: string) => {
    const result = (await mcp.callTool({ name: 'send_message', arguments: { connectionId, to, template: { name, language: 'en_US', components } } })) as CallToolResult;
    const structured = result.structuredContent as any;
    if (result.isError) return { status: structured.error.status as number, message: structured.error.message as string, id: undefined };
    return { status: 201, message: undefined, id: structured.messageId as string };
  },
};

const campaign = (name: string, draft = false) =>
  call('POST', '/v3/campaigns', {
    name: `rule ${name}`,
    connectionId,
    draft,
    message: { template: { name, language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: '{{code}}' }] }] } },
    audience: { recipients: [{ phone: '+447700900778', variables: { code: '42' } }] },
  });

const messageCount = async () =>
  Number((await service.runtime.ctx.db.selectFrom('messages').select((eb) => eb.fn.countAll().as('n')).where('connection_id', '=', connectionId).executeTakeFirstOrThrow()).n);

describe('the template status rule on every surface', () => {
  for (const status of ['PENDING', 'REJECTED', 'PAUSED'] as const) {
    test(`a ${status} template is refused with the same 422 and message by v3, v2, MCP and campaigns; nothing is stored or sent`, async () => {
      const { name } = await template(status);
      const expected = `Template ${name} (en_US) is ${status}; only an APPROVED template can be sent`;
      const before = { messages: await messageCount(), sent: sim.sent.length };
      for (const [surface, send] of Object.entries(surfaces)) {
        const outcome = await send(name);
        expect({ surface, ...outcome }).toEqual({ surface, status: 422, message: expected, id: undefined });
      }
      const refusedCampaign = await campaign(name);
      expect({ status: refusedCampaign.status, message: refusedCampaign.body.message }).toEqual({ status: 422, message: expected });
      // The v3 answer is the standard error shape (spec 2.x).
      expectStandardError(await call('POST', `/v3/connections/${connectionId}/chats/messages`, { to, template: { name, language: 'en_US' } }), 422, 'Unprocessable Entity');
      expect(await messageCount()).toBe(before.messages);
      expect(sim.sent.length).toBe(before.sent);
    });
  }

  test('an APPROVED template is accepted by v3, v2, MCP and campaigns alike', async () => {
    const { name } = await template('APPROVED');
    const before = await messageCount();
    for (const [surface, send] of Object.entries(surfaces)) {
      const outcome = await send(name);
      expect({ surface, status: outcome.status }).toEqual({ surface, status: 201 });
      expect(outcome.id).toMatch(UUID);
    }
    expect(await messageCount()).toBe(before + Object.keys(surfaces).length);
    expect((await campaign(name)).status).toBe(201);
  });

  test('a draft campaign whose template stopped being APPROVED is refused at launch with the same 422', async () => {
    const { name, externalId } = await template('APPROVED');
    const draft = await campaign(name, true);
    expect(draft.status).toBe(201);
    await platform.pause(externalId);
    const launched = await call('POST', `/v3/campaigns/${draft.body.id}/launch`);
    expectStandardError(launched, 422, 'Unprocessable Entity');
    expect(launched.body.message).toBe(`Template ${name} (en_US) is PAUSED; only an APPROVED template can be sent`);
    expect((await call('GET', `/v3/campaigns/${draft.body.id}`)).body.status).toBe('DRAFT');
  });

  test('an APPROVED template whose variables do not fit is 400 on MCP as on v3 (the same component check)', async () => {
    const { name } = await template('APPROVED');
    const misfit = { to, template: { name, language: 'en_US', components: [{ type: 'body', parameters: [] }] } };
    const v3 = await call('POST', `/v3/connections/${connectionId}/chats/messages`, misfit);
    expectStandardError(v3, 400, 'Bad Request');
    const result = (await mcp.callTool({ name: 'send_message', arguments: { connectionId, ...misfit } })) as CallToolResult;
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as any).error;
    expect(error.status).toBe(400);
    expect(error.details ?? [error.message]).toEqual(v3.body.message);
  });
});
