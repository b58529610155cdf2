import { beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import * as migration0007 from '../../plugins/helpdesk/migrations/0007_labels_attachments.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { useOwner, useTestService } from '../support/service.ts';
import { conversationFromContact, helpdeskEvents, useHelpdeskWorkspace, workerSettled } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, UUID } from './helpers.ts';

/**
 * Labels as a workspace resource (issue 6 item 2; spec 2.14, 5.4, 6.5): CRUD, names unique
 * case-insensitively (409), conversations keep label names in REST while
 * `conversation.labels_changed` carries label ids; a rename follows onto every conversation and
 * a delete takes the label off every one.
 */

const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'labels line', inbox: 'Labels' });
const { owner, agent } = hd;
const free = useOwner(service, { plan: 'FREE' });

const labels = {
  create: (body: unknown, apikey = owner.token) => service.call('POST', '/v3/helpdesk/labels', { apikey, body }),
  update: (id: string, body: unknown, apikey = owner.token) => service.call('PATCH', `/v3/helpdesk/labels/${id}`, { apikey, body }),
  remove: (id: string, apikey = owner.token) => service.call('DELETE', `/v3/helpdesk/labels/${id}`, { apikey }),
  list: async (apikey = owner.token) => (await service.call('GET', '/v3/helpdesk/labels?per_page=100', { apikey })).body.data as any[],
};

/** The helpdesk events of the workspace of this type, oldest first (the `events` table, no connection). */
const events = (type: string) => helpdeskEvents(service, owner.workspaceId, type);

/** A sandbox contact writes; answers the conversation it opened. */
const conversationFrom = (phone: string) => conversationFromContact(service, owner.token, hd.connectionId, phone, { text: 'hello' });

const setLabels = (conversationId: string, names: string[], apikey = agent.token) =>
  service.call('POST', `/v3/helpdesk/conversations/${conversationId}/labels`, { apikey, body: { labels: names } });
const labelsOf = async (conversationId: string) => (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}`, { apikey: owner.token })).body.labels;

describe('the label resource', () => {
  test('create, read, update, delete; names unique case-insensitively (409); label events recorded', async () => {
    const created = await labels.create({ name: ' Billing ', color: '#FF8800', description: 'Money matters' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Billing', color: '#ff8800', description: 'Money matters' });
    expect(created.body.id).toMatch(UUID);
    const id = created.body.id;

    expectStandardError(await labels.create({ name: 'billing' }), 409, 'Conflict');
    expectStandardError(await labels.create({ name: '  BILLING' }), 409, 'Conflict');

    const one = await service.call('GET', `/v3/helpdesk/labels/${id}`, { apikey: agent.token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(created.body);
    expect((await labels.list(agent.token)).map((l) => l.name)).toContain('Billing');

    const patched = await labels.update(id, { color: null, description: 'Invoices' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Billing', color: null, description: 'Invoices' });

    const [createdEvent] = (await events('helpdesk.label.created')).filter((e) => e.labelId === id);
    expect(createdEvent).toEqual({
      type: 'helpdesk.label.created',
      accountId: owner.workspaceId,
      labelId: id,
      name: 'Billing',
      color: '#ff8800',
      description: 'Money matters',
      actorUserId: owner.userId,
    });
    const [updatedEvent] = (await events('helpdesk.label.updated')).filter((e) => e.labelId === id);
    expect(updatedEvent).toMatchObject({ name: 'Billing', color: null, description: 'Invoices', changedFields: ['color', 'description'], previousName: null, actorUserId: owner.userId });

    const removed = await labels.remove(id);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ id, deleted: true });
    expectStandardError(await service.call('GET', `/v3/helpdesk/labels/${id}`, { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await labels.remove(id), 404, 'Not Found');
    expect(await events('helpdesk.label.deleted')).toContainEqual({ type: 'helpdesk.label.deleted', accountId: owner.workspaceId, labelId: id, name: 'Billing', actorUserId: owner.userId });
    // The name is free again.
    expect((await labels.create({ name: 'billing' })).status).toBe(201);
  });

  test('bad names, colours and descriptions are 400 with one message per broken rule', async () => {
    expectStandardError(await labels.create({ name: 'a,b' }), 400, 'Bad Request');
    expectStandardError(await labels.create({ name: '   ' }), 400, 'Bad Request');
    expectStandardError(await labels.create({ name: 'x'.repeat(101) }), 400, 'Bad Request');
    expect((await labels.create({ name: 'y'.repeat(100) })).status).toBe(201);
    const both = await labels.create({ name: 'a,b', color: 'red' });
    expectStandardError(both, 400, 'Bad Request');
    expect(both.body.message).toHaveLength(2);
    expectStandardError(await labels.create({ name: 'Long', description: 'd'.repeat(501) }), 400, 'Bad Request');
    expectStandardError(await labels.update(crypto.randomUUID(), { color: '#000000' }), 404, 'Not Found');
    expectStandardError(await labels.update('not-a-uuid', { color: '#000000' }), 404, 'Not Found');
  });

  test('an Agent reads labels but cannot write them (403); a FREE workspace reads but cannot write (HELPDESK_PLAN_REQUIRED)', async () => {
    const existing = (await labels.list())[0];
    expect((await service.call('GET', '/v3/helpdesk/labels', { apikey: agent.token })).status).toBe(200);
    expectStandardError(await labels.create({ name: 'Agent made' }, agent.token), 403, 'Forbidden');
    expectStandardError(await labels.update(existing.id, { name: 'Agent renamed' }, agent.token), 403, 'Forbidden');
    expectStandardError(await labels.remove(existing.id, agent.token), 403, 'Forbidden');

    expect((await service.call('GET', '/v3/helpdesk/labels', { apikey: free.token })).status).toBe(200);
    const denied = await labels.create({ name: 'Free' }, free.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: 'HELPDESK_PLAN_REQUIRED', hint: expect.any(String) });
    // Another workspace's label is not there for this one.
    expectStandardError(await service.call('GET', `/v3/helpdesk/labels/${existing.id}`, { apikey: free.token }), 404, 'Not Found');
  });
});

describe('labels on conversations', () => {
  let conversation: any;
  const idOf = async (name: string) => (await labels.list()).find((l) => l.name.toLowerCase() === name.toLowerCase())?.id as string;

  beforeAll(async () => {
    conversation = await conversationFrom('5511977770001');
  }, HOOK_TIMEOUT);

  test('names in REST, ids in labels_changed; a new name becomes a label of the workspace', async () => {
    await labels.create({ name: 'Refund' });
    const res = await setLabels(conversation.id, ['refund', ' Urgent ', 'urgent']);
    expect(res.status).toBe(201);
    // Spelt as the workspace's labels; the new name was created on the fly by the agent.
    expect(res.body.labels).toEqual(['Refund', 'Urgent']);
    const refundId = await idOf('Refund');
    const urgentId = await idOf('Urgent');
    expect(urgentId).toMatch(UUID);
    expect((await events('helpdesk.label.created')).find((e) => e.labelId === urgentId)).toMatchObject({ name: 'Urgent', actorUserId: agent.userId, color: null });

    const second = await setLabels(conversation.id, ['URGENT', 'VIP']);
    expect(second.body.labels).toEqual(['Urgent', 'VIP']);
    const vipId = await idOf('VIP');

    const changes = (await events('helpdesk.conversation.labels_changed')).filter((e) => e.conversationId === conversation.id);
    expect(changes).toEqual([
      { type: 'helpdesk.conversation.labels_changed', accountId: owner.workspaceId, conversationId: conversation.id, inboxId: conversation.inboxId, addedLabelIds: [refundId, urgentId], removedLabelIds: [], actorUserId: agent.userId },
      { type: 'helpdesk.conversation.labels_changed', accountId: owner.workspaceId, conversationId: conversation.id, inboxId: conversation.inboxId, addedLabelIds: [vipId], removedLabelIds: [refundId], actorUserId: agent.userId },
    ]);
    // The same set again (another spelling and order) is no change: no event; the order given is kept.
    expect((await setLabels(conversation.id, ['vip', 'urgent'])).body.labels).toEqual(['VIP', 'Urgent']);
    expect((await events('helpdesk.conversation.labels_changed')).filter((e) => e.conversationId === conversation.id)).toHaveLength(2);
  });

  test('renaming a label renames it on every conversation; a name taken is 409', async () => {
    const other = await conversationFrom('5511977770002');
    await setLabels(other.id, ['Urgent']);
    const urgentId = await idOf('Urgent');
    const renamed = await labels.update(urgentId, { name: 'Critical' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: urgentId, name: 'Critical' });
    expect(await labelsOf(conversation.id)).toEqual(['VIP', 'Critical']);
    expect(await labelsOf(other.id)).toEqual(['Critical']);
    expect((await events('helpdesk.label.updated')).find((e) => e.labelId === urgentId)).toMatchObject({ name: 'Critical', previousName: 'Urgent', changedFields: ['name'] });

    expectStandardError(await labels.update(urgentId, { name: 'vip' }), 409, 'Conflict');
    expect(await labelsOf(conversation.id)).toEqual(['VIP', 'Critical']);
    // A change of case alone is a rename too.
    expect((await labels.update(urgentId, { name: 'CRITICAL' })).body.name).toBe('CRITICAL');
    expect(await labelsOf(other.id)).toEqual(['CRITICAL']);

    // The label keeps its id: removing it from a conversation names that id.
    await setLabels(other.id, []);
    const last = (await events('helpdesk.conversation.labels_changed')).filter((e) => e.conversationId === other.id).at(-1);
    expect(last).toMatchObject({ addedLabelIds: [], removedLabelIds: [urgentId] });
  });

  test('deleting a label takes it off every conversation', async () => {
    const vipId = await idOf('VIP');
    const third = await conversationFrom('5511977770003');
    await setLabels(third.id, ['VIP', 'Refund']);
    expect((await labels.remove(vipId)).status).toBe(200);
    expect(await labelsOf(conversation.id)).toEqual(['CRITICAL']);
    expect(await labelsOf(third.id)).toEqual(['Refund']);
    expect((await labels.list()).some((l) => l.id === vipId)).toBe(false);
    // Nothing in the database still names it.
    const rows = await helpdeskDb(service.runtime.ctx.db).selectFrom('helpdesk_conversations').select('labels').where('workspace_id', '=', owner.workspaceId).execute();
    expect(rows.flatMap((r) => r.labels)).not.toContain('VIP');
  });
});

describe('migration 0007', () => {
  test('labels already on conversations become labels of their workspace; conversations are respelt to match', async () => {
    const c1 = await conversationFrom('5511977770020');
    const c2 = await conversationFrom('5511977770021');
    const db = service.runtime.ctx.db;
    // The worker's reactions to those messages first: the DDL below would deadlock with them.
    await workerSettled(service);
    await db.transaction().execute(async (trx) => {
      // The state before the migration: no label table, labels spelt as they were typed.
      await sql`drop table helpdesk_attachments`.execute(trx);
      await sql`drop table helpdesk_labels`.execute(trx);
      const hd = helpdeskDb(trx);
      await hd.updateTable('helpdesk_conversations').set({ labels: [] }).where('workspace_id', '=', owner.workspaceId).execute();
      await hd.updateTable('helpdesk_conversations').set({ labels: ['billing', 'VIP'] }).where('id', '=', c1.id).execute();
      await hd.updateTable('helpdesk_conversations').set({ labels: ['Billing ', 'vip', 'Late'] }).where('id', '=', c2.id).execute();
      await migration0007.up(trx);
    });
    expect((await labels.list()).map((l) => l.name).sort()).toEqual(['Late', 'VIP', 'billing']);
    expect(await labelsOf(c1.id)).toEqual(['billing', 'VIP']);
    expect(await labelsOf(c2.id)).toEqual(['billing', 'VIP', 'Late']);
    // And the resource works on them: a rename follows onto both conversations.
    const billing = (await labels.list()).find((l) => l.name === 'billing');
    expect((await labels.update(billing.id, { name: 'Billing' })).status).toBe(200);
    expect(await labelsOf(c2.id)).toEqual(['Billing', 'VIP', 'Late']);
  });
});
