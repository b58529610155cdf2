import { describe, expect, test } from 'bun:test';
import { useTestService } from '../support/service.ts';
import { conversationFromContact, helpdeskEvents, messagesUntil, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { expectStandardError, useMember } from './helpers.ts';

/**
 * Looking after contacts (issue 23 item 1): notes on a contact, deleting one with its
 * conversations, merging two, importing a CSV. Contacts are the workspace's; deleting, merging
 * and importing are for Managers and above (as deleting a conversation is), on the PRO plan.
 */

const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'contacts line', inbox: 'Contacts', manualAssignment: true });
const { owner, agent } = hd;
const manager = useMember(service, owner, 'MANAGER');

const call = (method: string, path: string, body?: unknown, apikey = owner.token) => service.call(method, `/v3/helpdesk/contacts${path}`, { apikey, body });
const create = async (body: Record<string, unknown>) => {
  const res = await call('POST', '', body);
  expect(res.status).toBe(201);
  return res.body;
};
const importCsv = (csv: string, apikey = owner.token) => service.call('POST', '/v3/helpdesk/contacts/import', { apikey, body: csv, headers: { 'content-type': 'text/csv' } });
const byPhone = async (phone: string) => ((await call('GET', `?s=${phone}`)).body.data as any[])[0];

describe('notes', () => {
  test('any member adds and reads notes (newest first); the author or a Manager deletes; another Agent’s is 403', async () => {
    const contact = await create({ name: 'Nora Notes', phone: '+5511933330001' });
    const first = await call('POST', `/${contact.id}/notes`, { content: '  Prefers e-mail  ' }, agent.token);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ id: expect.any(String), contactId: contact.id, content: 'Prefers e-mail', authorUserId: agent.userId, createdAt: expect.any(String) });
    const second = await call('POST', `/${contact.id}/notes`, { content: 'VIP since 2020' });
    const listed = await call('GET', `/${contact.id}/notes`, undefined, agent.token);
    expect(listed.status).toBe(200);
    expect(listed.body.map((n: any) => n.id)).toEqual([second.body.id, first.body.id]);

    expectStandardError(await call('POST', `/${contact.id}/notes`, { content: '' }), 400, 'Bad Request');
    expectStandardError(await call('POST', `/${contact.id}/notes`, { content: 'x'.repeat(4097) }), 400, 'Bad Request');
    expectStandardError(await call('POST', '/00000000-0000-4000-8000-000000000000/notes', { content: 'x' }), 404, 'Not Found');
    // The Agent did not write the owner's note.
    expect((await call('DELETE', `/${contact.id}/notes/${second.body.id}`, undefined, agent.token)).status).toBe(403);
    expect((await call('DELETE', `/${contact.id}/notes/${first.body.id}`, undefined, agent.token)).body).toEqual({ id: first.body.id, deleted: true });
    expect((await call('DELETE', `/${contact.id}/notes/${second.body.id}`, undefined, manager.token)).status).toBe(200);
    expectStandardError(await call('DELETE', `/${contact.id}/notes/${second.body.id}`), 404, 'Not Found');
    expect((await call('GET', `/${contact.id}/notes`)).body).toEqual([]);
  });
});

describe('delete', () => {
  test('Managers and above delete a contact with its conversations and notes (conversation.deleted each); Agents 403', async () => {
    const conversation = await conversationFromContact(service, owner.token, hd.connectionId, '5511933330002', { text: 'please forget me' });
    const contactId = conversation.contactId;
    await call('POST', `/${contactId}/notes`, { content: 'asked to be deleted' });
    expect((await call('DELETE', `/${contactId}`, undefined, agent.token)).status).toBe(403);
    const res = await call('DELETE', `/${contactId}`, undefined, manager.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: contactId, deleted: true });
    expectStandardError(await call('GET', `/${contactId}`), 404, 'Not Found');
    expectStandardError(await service.call('GET', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner.token }), 404, 'Not Found');
    const deleted = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.deleted')).filter((e) => e.conversationId === conversation.id);
    expect(deleted).toEqual([expect.objectContaining({ actorUserId: manager.userId, inboxId: hd.inboxId })]);
    expectStandardError(await call('DELETE', `/${contactId}`), 404, 'Not Found');
  });
});

describe('merge', () => {
  test('conversations, notes and attributes move to the kept contact, its empty fields are filled, the other is gone', async () => {
    const conversation = await conversationFromContact(service, owner.token, hd.connectionId, '5511933330003', { text: 'hi from my phone' });
    await messagesUntil(service, owner.token, conversation.id, 1);
    const other = (await call('GET', `/${conversation.contactId}`)).body;
    await call('PATCH', `/${other.id}`, { customAttributes: { tier: 'gold', city: 'Recife' } });
    const note = (await call('POST', `/${other.id}/notes`, { content: 'met at the fair' })).body;
    const kept = await create({ name: 'Paula Merge', email: 'paula@example.com', customAttributes: { tier: 'silver' } });

    expect((await call('POST', `/${kept.id}/merge`, { mergeContactId: other.id }, agent.token)).status).toBe(403);
    expectStandardError(await call('POST', `/${kept.id}/merge`, { mergeContactId: kept.id }), 400, 'Bad Request');
    expectStandardError(await call('POST', `/${kept.id}/merge`, { mergeContactId: '00000000-0000-4000-8000-000000000000' }), 400, 'Bad Request');

    const res = await call('POST', `/${kept.id}/merge`, { mergeContactId: other.id });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: kept.id, name: 'Paula Merge', phone: '+5511933330003', email: 'paula@example.com', customAttributes: { tier: 'silver', city: 'Recife' } });
    expectStandardError(await call('GET', `/${other.id}`), 404, 'Not Found');
    expect((await service.call('GET', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner.token })).body.contactId).toBe(kept.id);
    expect((await call('GET', `/${kept.id}/notes`)).body.map((n: any) => n.id)).toEqual([note.id]);
    const updated = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.updated')).filter((e) => e.conversationId === conversation.id);
    expect(updated).toEqual([expect.objectContaining({ changedFields: ['contactId'], actorUserId: owner.userId })]);
    // The contact writing again lands in the kept contact's conversation.
    await conversationFromContact(service, owner.token, hd.connectionId, '5511933330003', { text: 'me again' });
    const messages = await messagesUntil(service, owner.token, conversation.id, 2);
    expect(messages.at(-1).content).toBe('me again');
  });
});

describe('merge on an API inbox', () => {
  test("the other contact's identity in an API inbox moves with its conversation, unless the kept contact has its own there", async () => {
    const inbox = await service.call('POST', '/v3/helpdesk/inboxes', { apikey: owner.token, body: { name: 'App', channelType: 'API' } });
    expect(inbox.status).toBe(201);
    const push = async (sourceId: string, email: string, identifier: string) => {
      const res = await service.call('POST', `/webhooks/helpdesk/${inbox.body.id}`, {
        body: { sourceId, content: 'hello from the app', sender: { name: identifier, email, identifier } },
        headers: { 'x-helpdesk-token': inbox.body.inboundWebhookSecret },
      });
      expect(res.status).toBe(201);
      return res.body as { contactId: string; conversationId: string };
    };
    const other = await push('m-1', 'other@app.example', 'user-other');
    const kept = await push('m-2', 'kept@app.example', 'user-kept');
    const third = await push('m-3', 'third@app.example', 'user-third');
    const identities = () =>
      service.runtime.ctx.db.selectFrom('helpdesk_api_contacts' as any).select(['contact_id', 'identifier'] as any).where('inbox_id', '=', inbox.body.id).orderBy('identifier' as any).execute() as Promise<any[]>;

    // The kept contact has its own identity here: it keeps it, the other's goes.
    expect((await call('POST', `/${kept.contactId}/merge`, { mergeContactId: other.contactId })).status).toBe(201);
    expect(await identities()).toEqual([
      { contact_id: kept.contactId, identifier: 'user-kept' },
      { contact_id: third.contactId, identifier: 'user-third' },
    ]);
    // A contact without one there takes the other's.
    const plain = await create({ name: 'No app identity', email: 'plain@example.com' });
    expect((await call('POST', `/${plain.id}/merge`, { mergeContactId: third.contactId })).status).toBe(201);
    expect((await identities()).find((r) => r.identifier === 'user-third')).toEqual({ contact_id: plain.id, identifier: 'user-third' });
    expect((await service.call('GET', `/v3/helpdesk/conversations/${third.conversationId}`, { apikey: owner.token })).body.contactId).toBe(plain.id);
  });
});

describe('import', () => {
  test('upsert by phone then email; other columns are attributes; bad rows are skipped with their line, never failing the file', async () => {
    await create({ name: 'Existing by phone', phone: '+5511933330010', customAttributes: { source: 'manual' } });
    await create({ name: 'Existing by email', email: 'eve@example.com' });
    const csv = [
      'Name;Phone;Email;Company;Notes',
      'Ivo Import;+55 11 93333-0011;ivo@example.com;Acme;"likes ""quotes""; and semicolons"',
      'Renamed by phone;5511933330010;;Globex;',
      'Eve;+5511933330012;EVE@example.com;Initech;',
      'No contact;;;Nowhere;',
      'Bad phone;call me;;;',
      'Bad email;;not-an-email;;',
      '',
      'Ivo Again;5511933330011;;Acme Corp;',
    ].join('\r\n');
    const res = await importCsv(csv);
    expect(res.status).toBe(201);
    expect(res.body.created).toBe(1);
    expect(res.body.updated).toBe(3);
    expect(res.body.skipped).toEqual([
      { line: 5, reason: 'the row has no phone and no email' },
      { line: 6, reason: expect.stringMatching(/phone must be a phone number/) },
      { line: 7, reason: expect.stringMatching(/email must be an email address/) },
    ]);
    expect(await byPhone('5511933330011')).toMatchObject({ name: 'Ivo Again', email: 'ivo@example.com', customAttributes: { Company: 'Acme Corp', Notes: 'likes "quotes"; and semicolons' } });
    expect(await byPhone('5511933330010')).toMatchObject({ name: 'Renamed by phone', customAttributes: { source: 'manual', Company: 'Globex' } });
    expect(await byPhone('5511933330012')).toMatchObject({ name: 'Eve', email: 'eve@example.com', customAttributes: { Company: 'Initech' } });
    expect((await call('GET', '?s=eve%40example.com')).body.total).toBe(1);
  });

  test('a file without a phone or email column is 400; an oversized body 413; Agents 403; nothing half-done', async () => {
    expectStandardError(await importCsv('name,company\nA,B'), 400, 'Bad Request');
    expectStandardError(await importCsv(''), 400, 'Bad Request');
    // Postgres stores no NUL: the service refuses it in any body, before the import reads it.
    expectStandardError(await importCsv('phone,note\n+5511933330022,bad\u0000cell'), 400, 'Bad Request');
    expect((await importCsv(`phone\n${'5'.repeat(3 * 1024 * 1024)}`)).status).toBe(413);
    expect((await importCsv('phone\n+5511933330020', agent.token)).status).toBe(403);
    expect(await byPhone('5511933330020')).toBeUndefined();
    const doc = (await service.call('GET', '/docs/json')).body;
    expect(doc.paths['/v3/helpdesk/contacts/import'].post.requestBody.content['text/csv']).toBeDefined();
  });
});
