import { beforeAll, describe, expect, test } from 'bun:test';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { useTestService } from '../support/service.ts';
import { conversationFromContact, eventually, helpdeskEvents, injectContactMessage, messagesUntil, setInboxMembers, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, useMember } from './helpers.ts';

/**
 * Editing and deleting private notes, deleting conversations (issue 6 item 3; spec 2.14, 6.5,
 * 7.1): only notes change (a reply or a contact's message is on the network: 422); an Agent
 * changes their own notes, Managers and above any; Agents outside the inbox get 404; each change
 * records its event (`message.updated`, `message.deleted`, `conversation.deleted`).
 */

const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'edits line', inbox: 'Edits' });
const { owner, agent } = hd;
const colleague = useMember(service, owner, 'AGENT');
const outsider = useMember(service, owner, 'AGENT');
const manager = useMember(service, owner, 'MANAGER');

beforeAll(async () => {
  await setInboxMembers(service, owner.token, hd.inboxId, [agent.userId, colleague.userId]);
}, HOOK_TIMEOUT);

const events = (type: string) => helpdeskEvents(service, owner.workspaceId, type);

/** A sandbox contact writes; answers the conversation and the contact's message. */
async function conversationFrom(phone: string): Promise<{ conversation: any; incoming: any }> {
  const conversation = await conversationFromContact(service, owner.token, hd.connectionId, phone, { text: 'my parcel' });
  const [incoming] = await messagesUntil(service, owner.token, conversation.id, 1);
  return { conversation, incoming };
}

const messages = async (conversationId: string, apikey = owner.token) => (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}/messages?limit=100`, { apikey })).body as any[];
const post = (conversationId: string, body: unknown, apikey = agent.token) => service.call('POST', `/v3/helpdesk/conversations/${conversationId}/messages`, { apikey, body });
const edit = (conversationId: string, messageId: string, body: unknown, apikey = agent.token) =>
  service.call('PATCH', `/v3/helpdesk/conversations/${conversationId}/messages/${messageId}`, { apikey, body });
const removeMessage = (conversationId: string, messageId: string, apikey = agent.token) =>
  service.call('DELETE', `/v3/helpdesk/conversations/${conversationId}/messages/${messageId}`, { apikey });

describe('private notes', () => {
  let c: any;
  let incoming: any;
  beforeAll(async () => {
    ({ conversation: c, incoming } = await conversationFrom('5511988880001'));
  }, HOOK_TIMEOUT);

  test('the author edits a note: 200, the list shows the new text, message.updated is recorded', async () => {
    const note = (await post(c.id, { content: 'call back at 5', private: true })).body;
    const res = await edit(c.id, note.id, { content: '  call back at 6  ' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: note.id, private: true, content: 'call back at 6', senderUserId: agent.userId, attachments: [] });
    expect((await messages(c.id)).find((m) => m.id === note.id).content).toBe('call back at 6');
    const [event] = (await events('helpdesk.message.updated')).filter((e) => e.messageId === note.id);
    expect(event).toMatchObject({
      type: 'helpdesk.message.updated',
      accountId: owner.workspaceId,
      conversationId: c.id,
      inboxId: c.inboxId,
      messageId: note.id,
      changedFields: ['content'],
      actorUserId: agent.userId,
    });
    // The message in the event has the REST shape.
    expect(event.message).toEqual(res.body);
    // The same text again changes nothing and records nothing.
    expect((await edit(c.id, note.id, { content: 'call back at 6' })).status).toBe(200);
    expect((await events('helpdesk.message.updated')).filter((e) => e.messageId === note.id)).toHaveLength(1);
    expectStandardError(await edit(c.id, note.id, { content: '   ' }), 400, 'Bad Request');
    expectStandardError(await edit(c.id, note.id, { content: 'x'.repeat(4097) }), 400, 'Bad Request');
  });

  test("another Agent may not change someone's note (403); a Manager may", async () => {
    const note = (await post(c.id, { content: 'mine', private: true })).body;
    expectStandardError(await edit(c.id, note.id, { content: 'theirs' }, colleague.token), 403, 'Forbidden');
    expectStandardError(await removeMessage(c.id, note.id, colleague.token), 403, 'Forbidden');
    const byManager = await edit(c.id, note.id, { content: 'checked by the manager' }, manager.token);
    expect(byManager.status).toBe(200);
    expect(byManager.body).toMatchObject({ content: 'checked by the manager', senderUserId: agent.userId });
    expect((await events('helpdesk.message.updated')).find((e) => e.messageId === note.id).actorUserId).toBe(manager.userId);
  });

  test('replies and contact messages cannot change (422)', async () => {
    const reply = (await post(c.id, { content: 'On its way' })).body;
    expect(reply.status).toBe('PENDING');
    expectStandardError(await edit(c.id, reply.id, { content: 'Changed' }), 422, 'Unprocessable Entity');
    expectStandardError(await removeMessage(c.id, reply.id), 422, 'Unprocessable Entity');
    expectStandardError(await edit(c.id, incoming.id, { content: 'Changed' }, owner.token), 422, 'Unprocessable Entity');
    expectStandardError(await removeMessage(c.id, incoming.id, owner.token), 422, 'Unprocessable Entity');
    expect((await messages(c.id)).find((m) => m.id === reply.id).content).toBe('On its way');
  });

  test('the author deletes a note: gone from the list, message.deleted recorded; unknown ids are 404', async () => {
    const note = (await post(c.id, { content: 'to be deleted', private: true })).body;
    const res = await removeMessage(c.id, note.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: note.id, deleted: true });
    expect((await messages(c.id)).some((m) => m.id === note.id)).toBe(false);
    expect(await events('helpdesk.message.deleted')).toContainEqual({
      type: 'helpdesk.message.deleted',
      accountId: owner.workspaceId,
      conversationId: c.id,
      inboxId: c.inboxId,
      messageId: note.id,
      actorUserId: agent.userId,
    });
    expectStandardError(await removeMessage(c.id, note.id), 404, 'Not Found');
    expectStandardError(await edit(c.id, crypto.randomUUID(), { content: 'x' }), 404, 'Not Found');
    expectStandardError(await edit(c.id, 'nope', { content: 'x' }), 404, 'Not Found');
    // A message of another conversation is not found through this one.
    const { conversation: other } = await conversationFrom('5511988880002');
    const elsewhere = (await post(other.id, { content: 'elsewhere', private: true })).body;
    expectStandardError(await edit(c.id, elsewhere.id, { content: 'x' }), 404, 'Not Found');
  });

  test('an Agent outside the inbox gets 404; without the PRO plan a change is HELPDESK_PLAN_REQUIRED', async () => {
    const note = (await post(c.id, { content: 'secret', private: true })).body;
    expectStandardError(await edit(c.id, note.id, { content: 'x' }, outsider.token), 404, 'Not Found');
    expectStandardError(await removeMessage(c.id, note.id, outsider.token), 404, 'Not Found');
    const db = service.runtime.ctx.db;
    await db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', owner.workspaceId).execute();
    try {
      const res = await edit(c.id, note.id, { content: 'x' });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe('HELPDESK_PLAN_REQUIRED');
    } finally {
      await db.updateTable('workspaces').set({ plan: 'PRO' }).where('id', '=', owner.workspaceId).execute();
    }
  });
});

describe('deleting a conversation', () => {
  test('Managers and above delete a conversation with its messages; Agents cannot (403 in their inbox, 404 outside); conversation.deleted recorded', async () => {
    const { conversation: c } = await conversationFrom('5511988880010');
    await post(c.id, { content: 'a note', private: true });
    const path = `/v3/helpdesk/conversations/${c.id}`;
    expectStandardError(await service.call('DELETE', path, { apikey: agent.token }), 403, 'Forbidden');
    expectStandardError(await service.call('DELETE', path, { apikey: outsider.token }), 404, 'Not Found');

    const res = await service.call('DELETE', path, { apikey: manager.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: c.id, deleted: true });
    expectStandardError(await service.call('GET', path, { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('GET', `${path}/messages`, { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('DELETE', path, { apikey: owner.token }), 404, 'Not Found');
    const left = await helpdeskDb(service.runtime.ctx.db).selectFrom('helpdesk_messages').select('id').where('conversation_id', '=', c.id).execute();
    expect(left).toEqual([]);
    expect(await events('helpdesk.conversation.deleted')).toContainEqual({
      type: 'helpdesk.conversation.deleted',
      accountId: owner.workspaceId,
      conversationId: c.id,
      inboxId: c.inboxId,
      displayId: c.displayId,
      contactId: c.contactId,
      actorUserId: manager.userId,
    });
    // The contact writing again opens a new conversation.
    expect((await injectContactMessage(service, owner.token, hd.connectionId, { from: '5511988880010', text: 'again' })).status).toBe(201);
    const again = await eventually(async () => {
      const list = (await service.call('GET', '/v3/helpdesk/conversations?per_page=100', { apikey: owner.token })).body.data as any[];
      return list.find((x) => x.contactId === c.contactId);
    }, 'a new conversation');
    expect(again.id).not.toBe(c.id);
  });
});
