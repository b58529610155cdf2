import { expect, test } from 'bun:test';
import { useTestService } from '../support/service.ts';
import { conversationFromContact, injectContactMessage, messagesUntil, useHelpdeskWorkspace } from '../support/helpdesk.ts';

/**
 * "Waiting for a reply" (the `waiting` sort, docs/helpdesk.md) ends when the conversation is
 * resolved, and a reopened conversation waits again only once the contact writes.
 */

const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'waiting line', inbox: 'Waiting room', manualAssignment: true });

const waitingOrder = async () => {
  const res = await service.call('GET', `/v3/helpdesk/conversations?inboxId=${hd.inboxId}&sort=waiting&limit=100`, { apikey: hd.owner.token });
  expect(res.status).toBe(200);
  return (res.body.data as any[]).map((c) => c.id);
};
const setStatus = async (id: string, status: string) => {
  const res = await service.call('POST', `/v3/helpdesk/conversations/${id}/status`, { apikey: hd.owner.token, body: { status } });
  expect(res.status).toBe(201);
  expect(res.body.status).toBe(status);
};
const waitingSince = async (id: string) => {
  const row = await service.runtime.ctx.db.selectFrom('helpdesk_conversations' as any).select('waiting_since' as any).where('id', '=', id).executeTakeFirstOrThrow();
  return (row as any).waiting_since as Date | null;
};

test('resolving ends the wait; reopening does not restart it; the contact writing again does', async () => {
  const a = await conversationFromContact(service, hd.owner.token, hd.connectionId, '5511960000001', { text: 'first in line' });
  const b = await conversationFromContact(service, hd.owner.token, hd.connectionId, '5511960000002', { text: 'second' });
  const c = await conversationFromContact(service, hd.owner.token, hd.connectionId, '5511960000003', { text: 'third' });
  expect(await waitingOrder()).toEqual([a.id, b.id, c.id]);

  await setStatus(a.id, 'RESOLVED');
  expect(await waitingSince(a.id)).toBeNull();
  expect(await waitingOrder()).toEqual([b.id, c.id, a.id]);

  // Reopened by an agent: nobody is waiting on it until the contact writes.
  await setStatus(a.id, 'OPEN');
  expect(await waitingSince(a.id)).toBeNull();
  expect(await waitingOrder()).toEqual([b.id, c.id, a.id]);

  expect((await injectContactMessage(service, hd.owner.token, hd.connectionId, { from: '5511960000001', text: 'still there?' })).status).toBe(201);
  await messagesUntil(service, hd.owner.token, a.id, 4); // first message, two activity lines, the new one
  expect(await waitingSince(a.id)).not.toBeNull();
  // C answered: waits no more; A (waiting again, since its new message) now comes before it.
  expect((await service.call('POST', `/v3/helpdesk/conversations/${c.id}/messages`, { apikey: hd.owner.token, body: { content: 'Hello' } })).status).toBe(201);
  expect(await waitingOrder()).toEqual([b.id, a.id, c.id]);
});
