import { describe, expect, test } from 'bun:test';
import { useOwner, useTestService } from '../support/service.ts';
import { workerSettled } from '../support/wait.ts';
import {
  conversationFromContact,
  helpdeskEvents,
  messagesUntil,
  sentToContact,
  useHelpdeskWorkspace,
} from '../support/helpdesk.ts';
import { expectStandardError, useMember, UUID } from './helpers.ts';

/**
 * Canned responses and macros (issue 7 item 8; shapes ours): stock replies by short code, and
 * named lists of conversation actions run at once, as the caller would by hand, all or nothing.
 */

const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'macros line', inbox: 'Billing', manualAssignment: true });
const manager = useMember(service, hd.owner, 'MANAGER');
/** An Agent of the workspace outside the inbox. */
const outsider = useMember(service, hd.owner, 'AGENT');
const free = useOwner(service, { plan: 'FREE' });

const call = (method: string, path: string, apikey: string, body?: unknown) => service.call(method, path, { apikey, body });
const conversation = async (id: string) => (await call('GET', `/v3/helpdesk/conversations/${id}`, hd.owner.token)).body;
const eventsOf = async (type: string, conversationId: string) => (await helpdeskEvents(service, hd.owner.workspaceId, type)).filter((e) => e.conversationId === conversationId);

describe('canned responses', () => {
  test('created by Managers and above (PRO), read by everyone; short codes unique case-insensitively (409); search; change; delete', async () => {
    const created = await call('POST', '/v3/helpdesk/canned-responses', hd.owner.token, { shortCode: '/refund', content: '  Refunds take five working days.  ' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      shortCode: 'refund',
      content: 'Refunds take five working days.',
      createdBy: hd.owner.userId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const other = await call('POST', '/v3/helpdesk/canned-responses', manager.token, { shortCode: 'hours', content: 'We answer from 9 to 18.' });
    expect(other.status).toBe(201);

    expectStandardError(await call('POST', '/v3/helpdesk/canned-responses', manager.token, { shortCode: 'REFUND', content: 'x' }), 409, 'Conflict');
    const bad = await call('POST', '/v3/helpdesk/canned-responses', hd.owner.token, { shortCode: 'two words', content: '   ' });
    expectStandardError(bad, 400, 'Bad Request');
    expect(bad.body.message).toHaveLength(2);
    expectStandardError(await call('POST', '/v3/helpdesk/canned-responses', hd.agent.token, { shortCode: 'mine', content: 'x' }), 403, 'Forbidden');
    const unpaid = await call('POST', '/v3/helpdesk/canned-responses', free.token, { shortCode: 'x', content: 'x' });
    expect(unpaid.status).toBe(403);
    expect(unpaid.body.message).toBe('HELPDESK_PLAN_REQUIRED');
    expect((await call('GET', '/v3/helpdesk/canned-responses', free.token)).status).toBe(200);

    // Every member reads; by short code; `s` searches short code and content.
    const listed = await call('GET', '/v3/helpdesk/canned-responses', hd.agent.token);
    expect(listed.body.data.map((c: any) => c.shortCode)).toEqual(['hours', 'refund']);
    expect(listed.body.total).toBe(2);
    const search = async (s: string) => (await call('GET', `/v3/helpdesk/canned-responses?s=${encodeURIComponent(s)}`, hd.agent.token)).body.data.map((c: any) => c.shortCode);
    expect(await search('FIVE')).toEqual(['refund']);
    expect(await search('hou')).toEqual(['hours']);
    expect(await search('nothing like it')).toEqual([]);
    expect(await search('%')).toEqual([]);

    const renamed = await call('PATCH', `/v3/helpdesk/canned-responses/${created.body.id}`, manager.token, { content: 'Refunds take three days.' });
    expect(renamed.body).toMatchObject({ shortCode: 'refund', content: 'Refunds take three days.' });
    expectStandardError(await call('PATCH', `/v3/helpdesk/canned-responses/${created.body.id}`, manager.token, { shortCode: 'Hours' }), 409, 'Conflict');
    expect((await call('PATCH', `/v3/helpdesk/canned-responses/${created.body.id}`, manager.token, { shortCode: 'Refund' })).body.shortCode).toBe('Refund');
    expectStandardError(await call('DELETE', `/v3/helpdesk/canned-responses/${created.body.id}`, hd.agent.token), 403, 'Forbidden');
    expect((await call('DELETE', `/v3/helpdesk/canned-responses/${created.body.id}`, manager.token)).body).toEqual({ id: created.body.id, deleted: true });
    expectStandardError(await call('GET', `/v3/helpdesk/canned-responses/${created.body.id}`, hd.agent.token), 404, 'Not Found');
    // The short code is free again.
    expect((await call('POST', '/v3/helpdesk/canned-responses', manager.token, { shortCode: 'refund', content: 'Again.' })).status).toBe(201);
  });
});

describe('macros', () => {
  test('bad actions are refused with every broken rule named', async () => {
    const res = await call('POST', '/v3/helpdesk/macros', hd.owner.token, {
      name: 'Broken',
      actions: [
        { type: 'fly_away' },
        { type: 'add_labels', labels: [] },
        { type: 'change_status', status: 'SNOOZED' },
        { type: 'assign_agent', userId: crypto.randomUUID() },
        { type: 'send_message', content: 'hi', private: true },
      ],
    });
    expectStandardError(res, 400, 'Bad Request');
    const text = JSON.stringify(res.body.message);
    for (const part of ['body.actions[0].type', 'body.actions[1].labels', 'body.actions[2]', 'body.actions[4].private']) expect(text).toContain(part);
    // Member and team references are checked once the shapes are right.
    const unknown = await call('POST', '/v3/helpdesk/macros', hd.owner.token, { name: 'Who', actions: [{ type: 'assign_agent', userId: crypto.randomUUID() }, { type: 'assign_team', teamId: crypto.randomUUID() }] });
    expect(unknown.body.message).toEqual(['body.actions[0].userId must be a member of the workspace', 'body.actions[1].teamId must be a team of the workspace']);
    expectStandardError(await call('POST', '/v3/helpdesk/macros', hd.owner.token, { name: 'Empty', actions: [] }), 400, 'Bad Request');
  });

  test('personal macros are their creator\'s alone; workspace macros are managed by Managers and above', async () => {
    const mine = await call('POST', '/v3/helpdesk/macros', hd.agent.token, { name: 'My follow-up', actions: [{ type: 'add_private_note', content: 'Follow up tomorrow' }] });
    expect(mine.status).toBe(201);
    expect(mine.body).toMatchObject({ visibility: 'personal', createdBy: hd.agent.userId, actions: [{ type: 'add_private_note', content: 'Follow up tomorrow' }] });
    expectStandardError(await call('GET', `/v3/helpdesk/macros/${mine.body.id}`, manager.token), 404, 'Not Found');
    expect((await call('GET', '/v3/helpdesk/macros', manager.token)).body.data.map((m: any) => m.id)).not.toContain(mine.body.id);
    expectStandardError(await call('DELETE', `/v3/helpdesk/macros/${mine.body.id}`, hd.owner.token), 404, 'Not Found');
    // An Agent may not share one with the workspace.
    expectStandardError(await call('PATCH', `/v3/helpdesk/macros/${mine.body.id}`, hd.agent.token, { visibility: 'workspace' }), 403, 'Forbidden');
    expectStandardError(await call('POST', '/v3/helpdesk/macros', hd.agent.token, { name: 'Shared', visibility: 'workspace', actions: [{ type: 'set_priority', priority: 'LOW' }] }), 403, 'Forbidden');
    const renamed = await call('PATCH', `/v3/helpdesk/macros/${mine.body.id}`, hd.agent.token, { name: 'Tomorrow' });
    expect(renamed.body).toMatchObject({ name: 'Tomorrow', visibility: 'personal', actions: mine.body.actions });

    const shared = await call('POST', '/v3/helpdesk/macros', manager.token, { name: 'Low priority', visibility: 'workspace', actions: [{ type: 'set_priority', priority: 'LOW' }] });
    expect(shared.status).toBe(201);
    expect((await call('GET', `/v3/helpdesk/macros/${shared.body.id}`, hd.agent.token)).status).toBe(200);
    expectStandardError(await call('PATCH', `/v3/helpdesk/macros/${shared.body.id}`, hd.agent.token, { name: 'Mine now' }), 403, 'Forbidden');
    const agentList = (await call('GET', '/v3/helpdesk/macros?s=o', hd.agent.token)).body;
    expect(agentList.data.map((m: any) => m.name)).toEqual(['Low priority', 'Tomorrow']);
    expect((await call('DELETE', `/v3/helpdesk/macros/${shared.body.id}`, manager.token)).body).toEqual({ id: shared.body.id, deleted: true });
    const unpaid = await call('POST', '/v3/helpdesk/macros', free.token, { name: 'x', actions: [{ type: 'set_priority', priority: null }] });
    expect(unpaid.body.message).toBe('HELPDESK_PLAN_REQUIRED');
  });

  test('one run assigns, labels, resolves and replies, with the events of doing it by hand', async () => {
    const phone = '5511955550001';
    const { id } = await conversationFromContact(service, hd.owner.token, hd.connectionId, phone, { text: 'Where is my refund?' });
    const macro = await call('POST', '/v3/helpdesk/macros', manager.token, {
      name: 'Refund sent',
      visibility: 'workspace',
      actions: [
        { type: 'assign_agent', userId: hd.agent.userId },
        { type: 'add_labels', labels: ['refund', 'Billing '] },
        { type: 'change_status', status: 'RESOLVED' },
        { type: 'send_message', content: 'Your refund is on its way.' },
      ],
    });
    expect(macro.status).toBe(201);

    const run = await call('POST', `/v3/helpdesk/conversations/${id}/macros/${macro.body.id}/run`, hd.agent.token);
    expect(run.status).toBe(201);
    expect(run.body.conversation).toMatchObject({ id, assigneeUserId: hd.agent.userId, labels: ['refund', 'Billing'], status: 'RESOLVED' });
    expect(run.body.messages.map((m: any) => [m.direction, m.content])).toEqual([
      ['activity', expect.stringContaining('Conversation was resolved')],
      ['outgoing', 'Your refund is on its way.'],
    ]);
    expect(run.body.messages[1]).toMatchObject({ status: 'PENDING', private: false, senderUserId: hd.agent.userId });
    await sentToContact(service, hd.owner.token, hd.connectionId, phone, 'Your refund is on its way.');

    // As by hand, by the caller.
    expect(await eventsOf('helpdesk.conversation.assignee_changed', id)).toEqual([expect.objectContaining({ fromAssigneeUserId: null, toAssigneeUserId: hd.agent.userId, actorUserId: hd.agent.userId })]);
    const labelled = await eventsOf('helpdesk.conversation.labels_changed', id);
    expect(labelled).toHaveLength(1);
    expect(labelled[0]).toMatchObject({ removedLabelIds: [], actorUserId: hd.agent.userId });
    expect(labelled[0].addedLabelIds).toHaveLength(2);
    expect(await eventsOf('helpdesk.conversation.status_changed', id)).toEqual([expect.objectContaining({ fromStatus: 'OPEN', toStatus: 'RESOLVED', actorUserId: hd.agent.userId })]);
    const created = (await eventsOf('helpdesk.message.created', id)).map((e) => e.message.id);
    for (const m of run.body.messages) expect(created).toContain(m.id);

    // Again on the resolved conversation: the status is already where the macro puts it (no-op).
    const again = await call('POST', `/v3/helpdesk/conversations/${id}/macros/${macro.body.id}/run`, hd.agent.token, {});
    expect(again.status).toBe(201);
    expect(again.body.messages.map((m: any) => m.direction)).toEqual(['outgoing']);
    expect(await eventsOf('helpdesk.conversation.status_changed', id)).toHaveLength(1);
  });

  test('a failing action undoes the whole run and answers its error', async () => {
    const phone = '5511955550002';
    const { id } = await conversationFromContact(service, hd.owner.token, hd.connectionId, phone, { text: 'Hello' });
    await messagesUntil(service, hd.owner.token, id, 1);
    const macro = await call('POST', '/v3/helpdesk/macros', hd.owner.token, {
      name: 'Escalate to the outsider',
      visibility: 'workspace',
      actions: [
        { type: 'send_message', content: 'This must never reach the contact.' },
        { type: 'add_labels', labels: ['escalated-never'] },
        { type: 'set_priority', priority: 'URGENT' },
        // A member of the workspace, so the macro saves; not of the inbox, so the run fails here.
        { type: 'assign_agent', userId: outsider.userId },
      ],
    });
    expect(macro.status).toBe(201);
    const before = await conversation(id);
    const eventCount = async () => (await Promise.all(['helpdesk.message.created', 'helpdesk.conversation.labels_changed', 'helpdesk.conversation.priority_changed', 'helpdesk.label.created'].map((t) => helpdeskEvents(service, hd.owner.workspaceId, t)))).flat().length;
    const eventsBefore = await eventCount();

    const run = await call('POST', `/v3/helpdesk/conversations/${id}/macros/${macro.body.id}/run`, hd.agent.token);
    expectStandardError(run, 400, 'Bad Request');
    expect(String(run.body.message)).toStartWith('actions[3] (assign_agent): ');

    const after = await conversation(id);
    expect({ labels: after.labels, priority: after.priority, assigneeUserId: after.assigneeUserId, lastActivityAt: after.lastActivityAt }).toEqual({
      labels: before.labels,
      priority: before.priority,
      assigneeUserId: before.assigneeUserId,
      lastActivityAt: before.lastActivityAt,
    });
    expect(await eventCount()).toBe(eventsBefore);
    expect((await call('GET', '/v3/helpdesk/labels?s=escalated-never', hd.owner.token)).body.total).toBe(0);
    const messages = (await call('GET', `/v3/helpdesk/conversations/${id}/messages`, hd.owner.token)).body as any[];
    expect(messages.map((m) => m.content)).toEqual(['Hello']);
    await workerSettled(service);
    const history = await call('GET', `/v3/connections/${hd.connectionId}/chats/messages?chat=${phone}`, hd.owner.token);
    expect(JSON.stringify(history.body)).not.toContain('This must never reach the contact.');
  });

  test('runs: snooze for a while; 404 outside your inboxes or for a macro you cannot see', async () => {
    const { id } = await conversationFromContact(service, hd.owner.token, hd.connectionId, '5511955550003', { text: 'Later is fine' });
    const snooze = await call('POST', '/v3/helpdesk/macros', hd.agent.token, { name: 'An hour', actions: [{ type: 'change_status', status: 'SNOOZED', snoozeMinutes: 60 }] });
    const started = Date.now();
    const run = await call('POST', `/v3/helpdesk/conversations/${id}/macros/${snooze.body.id}/run`, hd.agent.token);
    expect(run.body.conversation.status).toBe('SNOOZED');
    const until = Date.parse(run.body.conversation.snoozedUntil) - started;
    expect(until).toBeGreaterThan(59 * 60_000);
    expect(until).toBeLessThan(61 * 60_000);

    expectStandardError(await call('POST', `/v3/helpdesk/conversations/${id}/macros/${snooze.body.id}/run`, manager.token), 404, 'Not Found');
    const shared = await call('POST', '/v3/helpdesk/macros', manager.token, { name: 'Urgent', visibility: 'workspace', actions: [{ type: 'set_priority', priority: 'URGENT' }] });
    expectStandardError(await call('POST', `/v3/helpdesk/conversations/${id}/macros/${shared.body.id}/run`, outsider.token), 404, 'Not Found');
    expectStandardError(await call('POST', `/v3/helpdesk/conversations/${id}/macros/${crypto.randomUUID()}/run`, hd.agent.token), 404, 'Not Found');
    expect((await call('POST', `/v3/helpdesk/conversations/${id}/macros/${shared.body.id}/run`, hd.agent.token)).body.conversation.priority).toBe('URGENT');
  });
});
