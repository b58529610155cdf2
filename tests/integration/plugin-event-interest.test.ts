import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { PLUGIN_EVENTS_QUEUE } from '../../adapters/postgres/repositories/event-store.ts';
import { jobIdFor } from '../../adapters/queue/queue.ts';
import { connectedConnection, connectionInbox, conversationFromContact, eventually } from '../support/helpdesk.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * A plugin's subscriber says which events can matter to it (`EventSubscriber.concerns`, asked
 * when the event is published): an event no enabled plugin wants queues no `plugins.events` job.
 * The helpdesk wants a connection's messages and delivery changes only when the connection
 * feeds an inbox; a workspace sending without the helpdesk costs the worker nothing more per
 * message.
 */

let service: TestService;
let owner: { userId: string; workspaceId: string; token: string };

beforeAll(async () => {
  service = await startTestService();
  owner = await service.bootstrap({ plan: 'PRO' });
}, HOOK_TIMEOUT);

afterAll(async () => {
  await service?.stop();
}, HOOK_TIMEOUT);

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });

/** The events of a connection, oldest first, once there are `count` of `type`. */
async function eventsOf(connectionId: string, type: string, count: number) {
  return eventually(async () => {
    const rows = await service.runtime.ctx.db.selectFrom('events').select(['id', 'event']).where('connection_id', '=', connectionId).where('event', '=', type).orderBy('created_at').execute();
    return rows.length >= count ? rows : undefined;
  }, `${count} ${type} of ${connectionId}`);
}

async function pluginJobOf(eventId: string) {
  return service.runtime.ctx.db
    .selectFrom('pgboss.job' as any)
    .select(['state' as any])
    .where('id' as any, '=', jobIdFor(PLUGIN_EVENTS_QUEUE, eventId))
    .executeTakeFirst();
}

async function sentAndRead(connectionId: string, to: string) {
  const sent = await call('POST', `/v3/connections/${connectionId}/chats/messages`, { to, text: 'hello' });
  expect(sent.status).toBe(201);
  await eventually(async () => ((await call('GET', `/v3/connections/${connectionId}/chats/messages/${sent.body.id}`)).body.status === 'SENT' ? true : undefined), 'SENT');
  expect((await call('POST', `/v3/connections/${connectionId}/sandbox/receipts`, { messageId: sent.body.id, status: 'READ' })).status).toBeLessThan(300);
  return sent.body.id as string;
}

describe('plugins.events jobs only for events a plugin wants', () => {
  test('a connection feeding no inbox: its sends, receipts and contact messages queue no plugin job (the campaigns plugin still hears contact messages)', async () => {
    const connectionId = await connectedConnection(service, owner.token, 'no helpdesk');
    await sentAndRead(connectionId, '5511944440001');
    const [sent] = await eventsOf(connectionId, 'send.message', 1);
    const [receipt] = await eventsOf(connectionId, 'messages.update', 1);
    expect(await pluginJobOf(sent!.id)).toBeUndefined();
    expect(await pluginJobOf(receipt!.id)).toBeUndefined();
    // A contact's message: the campaigns plugin (stop words, replies) wants every one.
    expect((await call('POST', `/v3/connections/${connectionId}/sandbox/messages`, { from: '5511944440001', type: 'conversation', text: 'hi' })).status).toBe(201);
    const [incoming] = await eventsOf(connectionId, 'messages.upsert', 1);
    expect(await pluginJobOf(incoming!.id)).toBeDefined();
  });

  test('a connection feeding an inbox: a contact’s message opens a conversation, and the reply’s delivery changes are followed', async () => {
    const connectionId = await connectedConnection(service, owner.token, 'helpdesk line');
    await connectionInbox(service, owner.token, 'Support', connectionId);
    const conversation = await conversationFromContact(service, owner.token, connectionId, '5511944440002', { type: 'conversation', text: 'help?' });
    const reply = await call('POST', `/v3/helpdesk/conversations/${conversation.id}/messages`, { content: 'on it' });
    expect(reply.status).toBe(201);
    const [sent] = await eventsOf(connectionId, 'send.message', 1);
    expect(await pluginJobOf(sent!.id)).toBeDefined();
    // The reply follows its delivery to SENT through that job.
    await eventually(async () => {
      const list = (await call('GET', `/v3/helpdesk/conversations/${conversation.id}/messages?limit=100`)).body as any[];
      return list.find((m) => m.id === reply.body.id && m.status === 'SENT');
    }, 'the reply SENT');
  });
});
