import { beforeAll, describe, expect, test } from 'bun:test';
import { useTestService, useOwner } from '../support/service.ts';
import { connectedConnection, connectionInbox, conversationFromContact, eventually, injectContactMessage } from '../support/helpdesk.ts';
import { useReceiver } from '../support/webhook-receiver.ts';
import { verifyDelivery } from '../../core/webhooks/signature.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Campaigns (issue 8): create with each kind of audience, credits reserved up front and refused
 * when the plan cannot cover them, invalid / repeated / opted-out numbers, personalisation, pause,
 * resume, cancel with refund, the recipient list and progress, opt-out by stop word.
 */
let connectionId: string;

const service = useTestService({ env: { CAMPAIGN_PACER_MAX_SLEEP_SECONDS: '1', PLAN_PRO_MESSAGES: '60' } });
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  connectionId = await connectedConnection(service, owner.token, 'Campaign line');
}, HOOK_TIMEOUT);
const receiver = useReceiver();

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });
const phone = (i: number) => `+55 11 9${String(70000000 + i)}`;
const digits = (i: number) => `55119${String(70000000 + i)}`;

async function credits(): Promise<number> {
  const summary = await call('GET', '/v3/summary');
  return summary.body.messages.available ?? summary.body.messages.remaining;
}

async function finished(id: string, status = 'COMPLETED') {
  return eventually(async () => {
    const found = await call('GET', `/v3/campaigns/${id}`);
    return found.body.status === status ? found.body : undefined;
  }, `campaign ${status}`);
}

describe('a campaign to a list of numbers', () => {
  test('reserves, sends each recipient once with their variables, and completes', async () => {
    const before = await credits();
    const created = await call('POST', '/v3/campaigns', {
      name: 'Welcome',
      connectionId,
      message: { text: 'Hello {{name|friend}}, your code is {{code}}' },
      audience: {
        recipients: [
          { phone: phone(1), variables: { name: 'Ana', code: 'A1' } },
          { phone: phone(2), variables: { code: 'B2' } },
          { phone: phone(1), variables: { name: 'again', code: 'X' } },
          { phone: 'not a number', variables: { code: 'C' } },
          { phone: phone(3) },
        ],
      },
      pace: { messagesPerMinute: null },
    });
    expect(created.status).toBe(201);
    expect(created.body.duplicates).toBe(1);
    expect(created.body.progress.total).toBe(4);
    expect(created.body.progress.invalid).toBe(2);
    expect(created.body.credits.reserved).toBe(2);
    expect(await credits()).toBe(before - 2);

    const done = await finished(created.body.id);
    expect(done.progress.sent).toBe(2);
    expect(done.credits).toEqual({ reserved: 2, consumed: 2, refunded: 0, held: 0 });
    const recipients = await call('GET', `/v3/campaigns/${created.body.id}/recipients?per_page=10`);
    expect(recipients.body.data.map((r: any) => [r.phone, r.status])).toEqual([
      [digits(1), 'SENT'],
      [digits(2), 'SENT'],
      ['not a number', 'INVALID'],
      [digits(3), 'INVALID'],
    ]);
    expect(recipients.body.data[3].error).toContain('"code"');
    const history = await call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${digits(2)}@s.whatsapp.net`);
    expect(JSON.stringify(history.body)).toContain('Hello friend, your code is B2');
  }, 60_000);
});

const create = (body: Record<string, unknown>) =>
  call('POST', '/v3/campaigns', { name: 'Test', connectionId, message: { text: 'Hi' }, pace: { messagesPerMinute: null }, ...body });

describe('credits are reserved up front (spec 8)', () => {
  test('a campaign the plan cannot cover is refused with USER_PLAN_EXCEEDED_MESSAGES and nothing is created', async () => {
    const before = await credits();
    const listed = (await call('GET', '/v3/campaigns?per_page=100')).body.total;
    const refused = await create({ name: 'Too big', audience: { numbers: Array.from({ length: before + 1 }, (_, i) => phone(1000 + i)) } });
    // Spec 8: "if the plan cannot cover every recipient the campaign is not created".
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('USER_PLAN_EXCEEDED_MESSAGES');
    expect((await call('GET', '/v3/campaigns?per_page=100')).body.total).toBe(listed);
    expect(await credits()).toBe(before);
  });

  test('a draft holds no credits until it is launched; an empty audience cannot be launched', async () => {
    const before = await credits();
    const draft = await create({ name: 'Draft', draft: true, audience: { numbers: [phone(20), phone(21)] } });
    expect(draft.status).toBe(201);
    expect(draft.body.status).toBe('DRAFT');
    expect(draft.body.credits.reserved).toBe(0);
    expect(await credits()).toBe(before);
    const launched = await call('POST', `/v3/campaigns/${draft.body.id}/launch`);
    expect(launched.status).toBe(201);
    expect(launched.body.credits.reserved).toBe(2);
    await finished(draft.body.id);
    expect(await credits()).toBe(before - 2);
    expect((await call('POST', `/v3/campaigns/${draft.body.id}/launch`)).status).toBe(409);

    const hopeless = await create({ name: 'Nobody', draft: true, audience: { numbers: ['123', 'abc'] } });
    expect(hopeless.body.progress.invalid).toBe(2);
    const refused = await call('POST', `/v3/campaigns/${hopeless.body.id}/launch`);
    expect(refused.status).toBe(422);
    expect((await call('DELETE', `/v3/campaigns/${hopeless.body.id}`)).status).toBe(200);
    expect((await call('GET', `/v3/campaigns/${hopeless.body.id}`)).body.message).toBe('CAMPAIGN_NOT_FOUND');
  });
});

describe('audiences', () => {
  test('a CSV with variables (quoted cells, a header row, ; or ,) personalises each message', async () => {
    const csv = 'Phone;First name;Plan\n' + `"${phone(30)}";"Ana; Maria";Gold\n` + `${phone(31)};Bruno;"Silver ""plus"""\n`;
    const created = await create({ name: 'CSV', message: { text: 'Dear {{First name}}, your {{Plan}} plan' }, audience: { csv } });
    expect(created.status).toBe(201);
    expect(created.body.credits.reserved).toBe(2);
    await finished(created.body.id);
    const recipients = (await call('GET', `/v3/campaigns/${created.body.id}/recipients`)).body.data;
    expect(recipients.map((r: any) => r.variables)).toEqual([
      { 'First name': 'Ana; Maria', Plan: 'Gold' },
      { 'First name': 'Bruno', Plan: 'Silver "plus"' },
    ]);
    const chat = await call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${digits(31)}@s.whatsapp.net`);
    expect(JSON.stringify(chat.body)).toContain('Dear Bruno, your Silver \\"plus\\" plan');
  });

  test('bad input answers 400 naming every problem, and nothing is created', async () => {
    const listed = (await call('GET', '/v3/campaigns?per_page=100')).body.total;
    const answers = await Promise.all([
      create({ audience: {} }),
      create({ audience: { numbers: [phone(1)], csv: 'phone\n1' } }),
      create({ audience: { csv: 'phone' } }),
      create({ audience: { numbers: [] } }),
      create({ message: { text: 'a', image: { url: 'https://x.example/a.png' } }, audience: { numbers: [phone(1)] } }),
      create({ pace: { messagesPerMinute: 0 }, audience: { numbers: [phone(1)] } }),
      create({ pace: { quietHours: { from: '25:00', to: '08:00', timezone: 'Mars/Base' } }, audience: { numbers: [phone(1)] } }),
      create({ schedule: { startAt: '2027-01-01T09:00' }, audience: { numbers: [phone(1)] } }),
      create({ webhook: { url: 'ftp://x', secret: 'short' }, audience: { numbers: [phone(1)] } }),
      create({ audience: { helpdeskContacts: { labels: [] } } }),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe('Bad Request');
    }
    expect(answers[6]!.body.message.length).toBe(2);
    expect(answers[8]!.body.message.length).toBe(2);
    expect((await create({ connectionId: '00000000-0000-7000-8000-000000000000', audience: { numbers: [phone(1)] } })).body.message).toBe('CONNECTION_NOT_FOUND');
    expect((await call('GET', '/v3/campaigns?per_page=100')).body.total).toBe(listed);
  });
});

describe('helpdesk contacts by label (issue 8 item 1, with the helpdesk plugin on)', () => {
  test('contacts of conversations labelled vip receive the campaign, with their name as a variable', async () => {
    const line = await connectedConnection(service, owner.token, 'Helpdesk line');
    await connectionInbox(service, owner.token, 'Support', line);
    const vip = await conversationFromContact(service, owner.token, line, digits(100), { text: 'hello', pushName: 'Vera' });
    const other = await conversationFromContact(service, owner.token, line, digits(101), { text: 'hi', pushName: 'Otto' });
    expect((await call('POST', `/v3/helpdesk/conversations/${vip.id}/labels`, { labels: ['VIP'] })).status).toBe(201);
    expect((await call('POST', `/v3/helpdesk/conversations/${other.id}/labels`, { labels: ['billing'] })).status).toBe(201);

    const created = await create({ connectionId: line, message: { text: 'Dear {{name|customer}}' }, audience: { helpdeskContacts: { labels: ['vip'] } } });
    expect(created.status).toBe(201);
    expect(created.body.progress.total).toBe(1);
    await finished(created.body.id);
    const recipients = (await call('GET', `/v3/campaigns/${created.body.id}/recipients`)).body.data;
    expect(recipients.map((r: any) => r.phone)).toEqual([digits(100)]);
    const chat = await call('GET', `/v3/connections/${line}/chats/messages?chat=${digits(100)}@s.whatsapp.net`);
    expect(JSON.stringify(chat.body)).toContain("Dear Vera");
    // No contact carries the label: nothing to send to.
    expect((await create({ connectionId: line, audience: { helpdeskContacts: { labels: ['nobody'] } } })).status).toBe(400);
  }, 60_000);
});

describe('pause, resume and the schedule', () => {
  test('a paused campaign sends nothing until resumed; a scheduled one waits for its time', async () => {
    const slow = await create({ name: 'Slow', audience: { numbers: [phone(40), phone(41), phone(42)] }, pace: { messagesPerMinute: 1, jitterSeconds: 0 } });
    expect(slow.status).toBe(201);
    const first = await eventually(async () => {
      const c = (await call('GET', `/v3/campaigns/${slow.body.id}`)).body;
      return c.progress.sent === 1 ? c : undefined;
    }, 'the first send');
    expect(first.progress.queued).toBe(2);
    const paused = await call('POST', `/v3/campaigns/${slow.body.id}/pause`);
    expect(paused.body.status).toBe('PAUSED');
    expect((await call('POST', `/v3/campaigns/${slow.body.id}/pause`)).status).toBe(409);
    // Paused: the pacer sends nothing more, however long it waits. A sleep: the pacer wakes at least twice (max sleep 1 s).
    await Bun.sleep(2_500);
    expect((await call('GET', `/v3/campaigns/${slow.body.id}`)).body.progress).toMatchObject({ sent: 1, queued: 2 });
    const resumed = await call('POST', `/v3/campaigns/${slow.body.id}/resume`);
    expect(resumed.body.status).toBe('RUNNING');
    expect((await call('POST', `/v3/campaigns/${slow.body.id}/resume`)).status).toBe(409);
    const cancelled = await call('POST', `/v3/campaigns/${slow.body.id}/cancel`);
    expect(cancelled.body.refunded).toBe(2);
    expect(cancelled.body.credits).toMatchObject({ reserved: 3, consumed: 1, refunded: 2, held: 0 });

    const later = await create({ name: 'Later', audience: { numbers: [phone(43)] }, schedule: { startAt: '2099-06-01T09:00', timezone: 'Europe/Paris' } });
    expect(later.body.status).toBe('SCHEDULED');
    expect(later.body.schedule).toEqual({ startAt: '2099-06-01T07:00:00.000Z', timezone: 'Europe/Paris' });
    expect(later.body.credits.reserved).toBe(1);
    const cancelledLater = await call('POST', `/v3/campaigns/${later.body.id}/cancel`);
    expect(cancelledLater.body).toMatchObject({ status: 'CANCELLED', refunded: 1 });
    expect((await call('DELETE', `/v3/campaigns/${later.body.id}`)).status).toBe(200);
  }, 60_000);

  test('a campaign on a connection that is not connected waits, paused by the service, and goes on once it connects', async () => {
    const line = await call('POST', '/v3/connections', { name: 'Not yet paired' });
    const created = await create({ connectionId: line.body.id, audience: { numbers: [phone(120)] } });
    expect(created.status).toBe(201);
    await finished(created.body.id, 'PAUSED').then((c) => expect(c.statusReason).toBe('connection_not_connected'));
    expect((await call('POST', `/v3/connections/${line.body.id}/connect`)).body.status).toBe('CONNECTED');
    const done = await finished(created.body.id);
    expect(done.progress.sent).toBe(1);
    expect(done.statusReason).toBeNull();
    await call('DELETE', `/v3/connections/${line.body.id}`);
  }, 60_000);

  test('deleting the connection fails its active campaigns and gives every reserved credit back', async () => {
    const doomedLine = await connectedConnection(service, owner.token, 'Doomed line');
    const before = await credits();
    const created = await create({ connectionId: doomedLine, audience: { numbers: [phone(50), phone(51)] }, pace: { messagesPerMinute: 1, jitterSeconds: 0 } });
    await eventually(async () => ((await call('GET', `/v3/campaigns/${created.body.id}`)).body.progress.sent === 1 ? true : undefined), 'the first send');
    expect((await call('DELETE', `/v3/connections/${doomedLine}`)).status).toBe(200);
    const failed = await finished(created.body.id, 'FAILED');
    expect(failed.statusReason).toBe('connection_deleted');
    expect(failed.credits).toMatchObject({ reserved: 2, consumed: 1, refunded: 1, held: 0 });
    expect(await credits()).toBe(before - 1);
  }, 60_000);
});

describe('opt-out and replies', () => {
  test('a contact who replies STOP is excluded from later campaigns; any reply counts as replied', async () => {
    const first = await create({ name: 'First', audience: { numbers: [phone(60), phone(61)] } });
    await finished(first.body.id);
    expect((await injectContactMessage(service, owner.token, connectionId, { from: digits(60), text: 'Stop!' })).status).toBe(201);
    expect((await injectContactMessage(service, owner.token, connectionId, { from: digits(61), text: 'thanks' })).status).toBe(201);
    await eventually(async () => ((await call('GET', `/v3/campaigns/${first.body.id}`)).body.progress.replied === 2 ? true : undefined), 'both replies');

    const second = await create({ name: 'Second', audience: { numbers: [phone(60), phone(61)] } });
    expect(second.body.progress).toMatchObject({ optedOut: 1, queued: 1 });
    expect(second.body.credits.reserved).toBe(1);
    const recipients = (await call('GET', `/v3/campaigns/${second.body.id}/recipients?status=OPTED_OUT`)).body.data;
    expect(recipients.map((r: any) => r.phone)).toEqual([digits(60)]);
  }, 60_000);
});

describe('replies on a line that never had a campaign', () => {
  test('a stop word there still opts the number out; any other message there is not even logged', async () => {
    const support = await connectedConnection(service, owner.token, 'Support line');
    expect((await injectContactMessage(service, owner.token, support, { from: digits(130), text: 'STOP' })).status).toBe(201);
    expect((await injectContactMessage(service, owner.token, support, { from: digits(131), text: 'hello there' })).status).toBe(201);
    await eventually(async () => ((await call('GET', `/v3/campaigns/opt-outs?s=${digits(130)}`)).body.data.length === 1 ? true : undefined), 'the opt-out');
    // No campaign was made on the line and no webhook reads it: only the stop word waited for the plugins.
    const logged = await service.runtime.ctx.db.selectFrom('events').select('remote_jid').where('connection_id', '=', support).where('event', '=', 'messages.upsert').execute();
    expect(logged.map((e) => e.remote_jid)).toEqual([`${digits(130)}@s.whatsapp.net`]);
    const second = await create({ name: 'After the stop word', audience: { numbers: [phone(130), phone(131)] } });
    expect(second.body.progress).toMatchObject({ optedOut: 1, queued: 1 });
  }, 60_000);
});

describe('the opt-out list', () => {
  test('a number added by hand is left out; taken off the list, it receives campaigns again', async () => {
    const added = await call('POST', '/v3/campaigns/opt-outs', { phone: phone(110), reason: 'asked by email' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ phone: digits(110), reason: 'asked by email' });
    expect((await call('POST', '/v3/campaigns/opt-outs', { phone: 'nope' })).status).toBe(400);
    const listed = await call('GET', `/v3/campaigns/opt-outs?s=${digits(110)}`);
    expect(listed.body.data.map((o: any) => o.phone)).toEqual([digits(110)]);
    expect((await create({ audience: { numbers: [phone(110)] } })).status).toBe(422);

    expect((await call('DELETE', `/v3/campaigns/opt-outs/${digits(110)}`)).status).toBe(200);
    expect((await call('DELETE', `/v3/campaigns/opt-outs/${digits(110)}`)).status).toBe(404);
    const again = await create({ audience: { numbers: [phone(110)] } });
    expect(again.status).toBe(201);
    expect(again.body.progress.queued + again.body.progress.sending + again.body.progress.sent).toBe(1);
  });
});

describe('campaign events', () => {
  test('started, progress and completed reach the webhook, signed like connection webhooks', async () => {
    const secret = 'campaign-secret-0123456789';
    const created = await create({ name: 'Hooked', audience: { numbers: [phone(70), phone(71)] }, webhook: { url: receiver.url('/campaign-hook'), secret } });
    expect(created.body.webhook).toEqual({ url: receiver.url('/campaign-hook'), signed: true });
    await finished(created.body.id);
    const hits = await receiver.waitFor('/campaign-hook', 3);
    const events = hits.map((h) => h.json.event);
    expect(events).toEqual(['campaign.started', 'campaign.progress', 'campaign.completed']);
    for (const hit of hits) {
      expect(verifyDelivery(secret, hit.text, { signature: hit.headers.get('x-switchboard-signature-256'), timestamp: hit.headers.get('x-switchboard-timestamp') }, Math.floor(Date.now() / 1000))).toBe(true);
      expect(hit.json.campaignId).toBe(created.body.id);
    }
    expect(hits[2]!.json.data.progress).toMatchObject({ total: 2, sent: 2 });
    const history = await call('GET', `/v3/campaigns/${created.body.id}/deliveries`);
    expect(history.body.total).toBe(3);
  }, 60_000);
});

describe('who may run campaigns (spec 2.14: send messages and campaigns — Owner, Admin, Manager)', () => {
  test('a Manager creates and reads campaigns; an Agent may not', async () => {
    const manager = await memberWithToken(service, owner, 'MANAGER');
    const agent = await memberWithToken(service, owner, 'AGENT');
    const byManager = await service.call('POST', '/v3/campaigns', { apikey: manager.token, body: { name: 'M', connectionId, message: { text: 'x' }, audience: { numbers: [phone(80)] } } });
    expect(byManager.status).toBe(201);
    expect((await service.call('GET', `/v3/campaigns/${byManager.body.id}`, { apikey: manager.token })).status).toBe(200);
    const byAgent = await service.call('POST', '/v3/campaigns', { apikey: agent.token, body: { name: 'A', connectionId, message: { text: 'x' }, audience: { numbers: [phone(81)] } } });
    expect(byAgent.status).toBe(403);
    expect((await service.call('GET', `/v3/campaigns/${byManager.body.id}`, { apikey: agent.token })).status).toBe(403);
    await call('POST', `/v3/campaigns/${byManager.body.id}/cancel`);
  });
});

describe('MCP tools (issue 8 item 6: create and watch a campaign)', () => {
  test('create_campaign then get_campaign until it completes', async () => {
    const client = new Client({ name: 'campaign-tests', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/v3/mcp`), { requestInit: { headers: { apikey: owner.token } } }));
    try {
      const created = (await client.callTool({
        name: 'create_campaign',
        arguments: { name: 'From an assistant', connectionId, text: 'Hello {{name}}', recipients: [{ phone: phone(90), variables: { name: 'Eva' } }], messagesPerMinute: 60 },
      })) as CallToolResult;
      expect(created.isError).toBeFalsy();
      const id = (created.structuredContent as any).campaign.id;
      const watched = await eventually(async () => {
        const got = (await client.callTool({ name: 'get_campaign', arguments: { campaignId: id } })) as CallToolResult;
        return (got.structuredContent as any).campaign.status === 'COMPLETED' ? got : undefined;
      }, 'the campaign to complete through MCP');
      expect((watched.content[0] as any).text).toContain('1 sent');
    } finally {
      await client.close();
    }
  }, 60_000);
});
