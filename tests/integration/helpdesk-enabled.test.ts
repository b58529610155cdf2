import { describe, expect, test } from 'bun:test';
import { type TestService, useTestService } from '../support/service.ts';
import { conversationFromContact, conversationOfContact, helpdeskLine, injectContactMessage, messagesUntil } from '../support/helpdesk.ts';
import { expectStandardError } from './helpers.ts';

/**
 * Issue 20, item 17. Spec 2.3: the workspace item has "`helpdeskEnabled` | boolean"; it must read
 * `true` while the helpdesk works for the workspace (the helpdesk plugin is loaded: `PLUGINS`),
 * and `false` where it does not. Spec 3.1: "States: `OPEN`, `PENDING`, `SNOOZED`, `RESOLVED`.
 * Transitions: not shown"; our choice: a message after RESOLVED opens a new conversation.
 */

const service = useTestService();
const bare = useTestService({ env: { PLUGINS: 'campaigns' } });

const accounts = async (target: TestService, apikey: string) => {
  const res = await target.call('GET', '/v3/accounts', { apikey });
  expect(res.status).toBe(200);
  return res.body as Array<{ id: string; isPersonal: boolean; helpdeskEnabled: boolean }>;
};

describe('helpdeskEnabled (spec 2.3)', () => {
  test('reads true for every workspace of an installation whose helpdesk works, Free plan included', async () => {
    const pro = await service.bootstrap({ plan: 'PRO' });
    const inbox = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: pro.token, body: { name: 'Support', channelType: 'API' } });
    expect(inbox.status).toBe(201); // the helpdesk works here ...
    const listed = await accounts(service, pro.token);
    expect(listed.find((w) => w.id === pro.workspaceId)!.helpdeskEnabled).toBe(true); // ... and says so
    expect(listed.find((w) => w.isPersonal)!.helpdeskEnabled).toBe(true);

    // A Free workspace reads the helpdesk (writing needs PRO, which GET /v3/summary tells).
    const free = await service.bootstrap({ plan: 'FREE' });
    expect((await service.call('GET', '/v3/helpdesk/conversations', { apikey: free.token })).status).toBe(200);
    expect((await accounts(service, free.token)).every((w) => w.helpdeskEnabled)).toBe(true);
  });

  test('PATCH /v3/accounts/{id}: true is accepted; false is a 409 that changes nothing (the helpdesk is on for the installation)', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    const on = await service.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: owner.token, body: { helpdeskEnabled: true } });
    expect(on.status).toBe(200);
    expect(on.body.helpdeskEnabled).toBe(true);
    const off = await service.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: owner.token, body: { helpdeskEnabled: false, name: 'Not renamed' } });
    expectStandardError(off, 409, 'Conflict');
    expect(off.body.message).toContain('PLUGINS');
    const after = (await accounts(service, owner.token)).find((w) => w.id === owner.workspaceId)!;
    expect(after).toMatchObject({ helpdeskEnabled: true });
    expect((after as any).name).not.toBe('Not renamed');
    expect((await service.call('GET', '/v3/helpdesk/conversations', { apikey: owner.token })).status).toBe(200);
    // A rename alone still works.
    const renamed = await service.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: owner.token, body: { name: 'Renamed' } });
    expect(renamed.body).toMatchObject({ name: 'Renamed', helpdeskEnabled: true });
  });

  test('without the helpdesk plugin it reads false, and asking for true is a 409', async () => {
    const owner = await bare.bootstrap({ plan: 'PRO' });
    expect((await bare.call('GET', '/v3/helpdesk/conversations', { apikey: owner.token })).status).toBe(404);
    expect((await accounts(bare, owner.token)).every((w) => w.helpdeskEnabled === false)).toBe(true);
    expectStandardError(await bare.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: owner.token, body: { helpdeskEnabled: true } }), 409, 'Conflict');
    const off = await bare.call('PATCH', `/v3/accounts/${owner.workspaceId}`, { apikey: owner.token, body: { helpdeskEnabled: false } });
    expect(off.status).toBe(200);
    expect(off.body.helpdeskEnabled).toBe(false);
  });
});

describe('a message after RESOLVED (spec 3.1)', () => {
  test('opens a new OPEN conversation; the resolved one stays RESOLVED with its messages', async () => {
    const { owner, connectionId } = await helpdeskLine(service, { connection: 'resolved line', inbox: 'Resolved inbox' });
    const phone = '5511955550001';
    const first = await conversationFromContact(service, owner.token, connectionId, phone, { text: 'my order is late' });
    expect(first.status).toBe('OPEN');
    const resolved = await service.call('POST', `/v3/helpdesk/conversations/${first.id}/status`, { apikey: owner.token, body: { status: 'RESOLVED' } });
    expect(resolved.body.status).toBe('RESOLVED');
    const before = await messagesUntil(service, owner.token, first.id, 2); // the message and the activity line

    expect((await injectContactMessage(service, owner.token, connectionId, { from: phone, text: 'now it arrived broken' })).status).toBe(201);
    const second = await conversationOfContact(service, owner.token, phone, (c) => c.id !== first.id);
    expect(second.status).toBe('OPEN');
    expect(second.displayId).toBeGreaterThan(first.displayId);
    expect((await messagesUntil(service, owner.token, second.id, 1)).map((m: any) => m.content)).toEqual(['now it arrived broken']);

    const old = await service.call('GET', `/v3/helpdesk/conversations/${first.id}`, { apikey: owner.token });
    expect(old.body.status).toBe('RESOLVED');
    const oldMessages = (await service.call('GET', `/v3/helpdesk/conversations/${first.id}/messages?limit=100`, { apikey: owner.token })).body as any[];
    expect(oldMessages.map((m) => m.id)).toEqual(before.map((m: any) => m.id));
  });
});
