import { beforeAll, describe, expect, test } from 'bun:test';
import { useOwner, useTestService } from '../support/service.ts';
import { conversationFromContact, helpdeskEvents, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, useMember, UUID } from './helpers.ts';

/**
 * Helpdesk teams (issue 6; spec 2.11 `teamId`, 2.14 roles, 5.4 plan, 6.5
 * `conversation.assignee_changed` with `fromTeamId`/`toTeamId`, 7.1/7.2 errors). Bodies of the
 * team endpoints are "not shown" in the spec (4.7): ours are Chatwoot-like.
 */

const service = useTestService();
const hd = useHelpdeskWorkspace(service, { connection: 'teams line', inbox: 'Support', manualAssignment: true });
const { owner, agent } = hd;
const other = useOwner(service, { plan: 'PRO' });
const free = useOwner(service, { plan: 'FREE' });
const manager = useMember(service, owner, 'MANAGER');
const outsiderAgent = useMember(service, owner, 'AGENT');

const createTeam = (body: unknown, apikey = manager.token) => service.call('POST', '/v3/helpdesk/teams', { apikey, body });
const patchConversation = (id: string, body: unknown, apikey = owner.token) => service.call('PATCH', `/v3/helpdesk/conversations/${id}`, { apikey, body });

/** A conversation opened by a sandbox contact writing to the inbox's connection. */
const newConversation = (phone: string) => conversationFromContact(service, owner.token, hd.connectionId, phone, { text: 'hello' });

/** The helpdesk events recorded about a conversation (the `events` table, no connection). */
async function assigneeEvents(conversationId: string): Promise<any[]> {
  return (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.assignee_changed')).filter((d: any) => d.conversationId === conversationId);
}

describe('teams: create, read, change, members', () => {
  let billing: any;

  test('a Manager creates a team: 201 with id, name, description, members, timestamps', async () => {
    const res = await createTeam({ name: '  Billing ', description: 'Invoices and refunds' });
    expect(res.status).toBe(201);
    billing = res.body;
    expect(billing).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Billing',
      description: 'Invoices and refunds',
      members: [],
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
  });

  test('names are unique per workspace case-insensitively (409); another workspace may reuse one', async () => {
    expectStandardError(await createTeam({ name: 'BILLING' }), 409, 'Conflict');
    expect((await createTeam({ name: 'billing' }, other.token)).status).toBe(201);
    expectStandardError(await createTeam({ name: '   ' }), 400, 'Bad Request');
    expectStandardError(await createTeam({ name: 'x'.repeat(121) }), 400, 'Bad Request');
    expectStandardError(await createTeam({ description: 'no name' }), 400, 'Bad Request');
  });

  test('roles and plan: Agents read but cannot write (403); a FREE workspace cannot create (HELPDESK_PLAN_REQUIRED)', async () => {
    const list = await service.call('GET', '/v3/helpdesk/teams', { apikey: agent.token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((t: any) => t.name)).toContain('Billing');
    expect((await service.call('GET', `/v3/helpdesk/teams/${billing.id}`, { apikey: agent.token })).status).toBe(200);
    const denied = await createTeam({ name: 'Agents only' }, agent.token);
    expectStandardError(denied, 403, 'Forbidden');
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/teams/${billing.id}`, { apikey: agent.token, body: { name: 'x' } }), 403, 'Forbidden');
    expectStandardError(await service.call('DELETE', `/v3/helpdesk/teams/${billing.id}`, { apikey: agent.token }), 403, 'Forbidden');
    expectStandardError(await service.call('PUT', `/v3/helpdesk/teams/${billing.id}/members`, { apikey: agent.token, body: { userIds: [] } }), 403, 'Forbidden');
    const plan = await createTeam({ name: 'Free team' }, free.token);
    expect(plan.status).toBe(403);
    expect(plan.body.message).toBe('HELPDESK_PLAN_REQUIRED');
    // Reads need no plan.
    expect((await service.call('GET', '/v3/helpdesk/teams', { apikey: free.token })).status).toBe(200);
  });

  test('list: page envelope sorted by name, `s` searches the name; another workspace\'s team is 404', async () => {
    expect((await createTeam({ name: 'Sales' })).status).toBe(201);
    const all = await service.call('GET', '/v3/helpdesk/teams', { apikey: owner.token });
    expect(all.body).toMatchObject({ total: 2, totalPages: 1, currentPage: 1, perPage: 10 });
    expect(all.body.data.map((t: any) => t.name)).toEqual(['Billing', 'Sales']);
    const found = await service.call('GET', '/v3/helpdesk/teams?s=sal', { apikey: owner.token });
    expect(found.body.data.map((t: any) => t.name)).toEqual(['Sales']);
    expectStandardError(await service.call('GET', `/v3/helpdesk/teams/${billing.id}`, { apikey: other.token }), 404, 'Not Found');
    expectStandardError(await service.call('GET', `/v3/helpdesk/teams/${crypto.randomUUID()}`, { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('GET', '/v3/helpdesk/teams/not-an-id', { apikey: owner.token }), 404, 'Not Found');
  });

  test('PATCH renames (409 on a taken name) and clears the description with null', async () => {
    expectStandardError(await service.call('PATCH', `/v3/helpdesk/teams/${billing.id}`, { apikey: manager.token, body: { name: 'sales' } }), 409, 'Conflict');
    const renamed = await service.call('PATCH', `/v3/helpdesk/teams/${billing.id}`, { apikey: manager.token, body: { name: 'Billing & Refunds' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Billing & Refunds', description: 'Invoices and refunds' });
    const cleared = await service.call('PATCH', `/v3/helpdesk/teams/${billing.id}`, { apikey: manager.token, body: { description: null } });
    expect(cleared.body).toMatchObject({ name: 'Billing & Refunds', description: null });
  });

  test('PUT members replaces them with members of the workspace (400 otherwise); GET lists them', async () => {
    const bad = await service.call('PUT', `/v3/helpdesk/teams/${billing.id}/members`, { apikey: manager.token, body: { userIds: [agent.userId, other.userId] } });
    expectStandardError(bad, 400, 'Bad Request');
    expect(JSON.stringify(bad.body.message)).toContain(other.userId);
    const set = await service.call('PUT', `/v3/helpdesk/teams/${billing.id}/members`, { apikey: manager.token, body: { userIds: [agent.userId, outsiderAgent.userId, agent.userId] } });
    expect(set.status).toBe(200);
    expect(set.body.data.map((m: any) => m.userId).sort()).toEqual([agent.userId, outsiderAgent.userId].sort());
    expect(set.body.data[0]).toEqual({ userId: expect.stringMatching(UUID), name: expect.any(String), email: expect.stringContaining('@') });
    const listed = await service.call('GET', `/v3/helpdesk/teams/${billing.id}/members`, { apikey: agent.token });
    expect(listed.body.data).toEqual(set.body.data);
    expect((await service.call('GET', `/v3/helpdesk/teams/${billing.id}`, { apikey: agent.token })).body.members).toEqual(set.body.data);
  });
});

describe('conversations get a team', () => {
  let support: any;
  let sales: any;
  let c: any;

  beforeAll(async () => {
    support = (await createTeam({ name: 'Tier 1' })).body;
    sales = (await createTeam({ name: 'Tier 2' })).body;
    // The agent (inbox member) is in Tier 1; the owner is in Tier 2; the outside agent is in Tier 2 but not in the inbox.
    await service.call('PUT', `/v3/helpdesk/teams/${support.id}/members`, { apikey: manager.token, body: { userIds: [agent.userId] } });
    await service.call('PUT', `/v3/helpdesk/teams/${sales.id}/members`, { apikey: manager.token, body: { userIds: [owner.userId, outsiderAgent.userId] } });
    c = await newConversation('5511977770001');
  }, HOOK_TIMEOUT);

  test('PATCH teamId sets the team (assignee_changed with fromTeamId/toTeamId); unknown team is 400', async () => {
    expectStandardError(await patchConversation(c.id, { teamId: crypto.randomUUID() }), 400, 'Bad Request');
    expectStandardError(await patchConversation(c.id, { teamId: 'nope' }), 400, 'Bad Request');
    const foreign = (await createTeam({ name: 'Foreign' }, other.token)).body;
    expectStandardError(await patchConversation(c.id, { teamId: foreign.id }), 400, 'Bad Request');

    const res = await patchConversation(c.id, { teamId: support.id }, agent.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ teamId: support.id, assigneeUserId: null });
    const events = await assigneeEvents(c.id);
    expect(events.at(-1)).toMatchObject({
      type: 'helpdesk.conversation.assignee_changed',
      accountId: owner.workspaceId,
      inboxId: hd.inboxId,
      fromTeamId: null,
      toTeamId: support.id,
      fromAssigneeUserId: null,
      toAssigneeUserId: null,
      actorUserId: agent.userId,
    });
    // Sending the same team again changes nothing and records nothing.
    await patchConversation(c.id, { teamId: support.id });
    expect(await assigneeEvents(c.id)).toHaveLength(events.length);
  });

  test('an assignee given with a team must be a member of that team (and able to see the inbox)', async () => {
    // The owner is not in Tier 1.
    expectStandardError(await patchConversation(c.id, { teamId: support.id, assigneeUserId: owner.userId }), 400, 'Bad Request');
    // The outside agent is in Tier 2 but not in the inbox: the inbox rule refuses first.
    expectStandardError(await patchConversation(c.id, { teamId: sales.id, assigneeUserId: outsiderAgent.userId }), 400, 'Bad Request');
    const ok = await patchConversation(c.id, { teamId: support.id, assigneeUserId: agent.userId });
    expect(ok.body).toMatchObject({ teamId: support.id, assigneeUserId: agent.userId });
  });

  test('moving to another team unassigns an assignee who is not a member of it, in one event', async () => {
    const before = (await assigneeEvents(c.id)).length;
    const moved = await patchConversation(c.id, { teamId: sales.id });
    expect(moved.body).toMatchObject({ teamId: sales.id, assigneeUserId: null });
    const events = await assigneeEvents(c.id);
    expect(events).toHaveLength(before + 1);
    expect(events.at(-1)).toMatchObject({ fromTeamId: support.id, toTeamId: sales.id, fromAssigneeUserId: agent.userId, toAssigneeUserId: null, actorUserId: owner.userId });
    // A member of the new team stays assigned when the team is set again.
    expect((await patchConversation(c.id, { teamId: sales.id, assigneeUserId: owner.userId })).body.assigneeUserId).toBe(owner.userId);
    // An assignee alone follows the inbox rule only (a supervisor hands it to an inbox member).
    expect((await patchConversation(c.id, { assigneeUserId: agent.userId })).body).toMatchObject({ teamId: sales.id, assigneeUserId: agent.userId });
  });

  test('the list filters by teamId', async () => {
    const d = await newConversation('5511977770002');
    await patchConversation(d.id, { teamId: support.id });
    const ofSales = await service.call('GET', `/v3/helpdesk/conversations?teamId=${sales.id}`, { apikey: owner.token });
    expect(ofSales.body.data.map((x: any) => x.id)).toEqual([c.id]);
    const ofSupport = await service.call('GET', `/v3/helpdesk/conversations?teamId=${support.id}`, { apikey: owner.token });
    expect(ofSupport.body.data.map((x: any) => x.id)).toEqual([d.id]);
    expect((await service.call('GET', '/v3/helpdesk/conversations?teamId=junk', { apikey: owner.token })).body.total).toBe(0);
  });

  test('teamId null clears the team and keeps the assignee', async () => {
    const d = await newConversation('5511977770003');
    await patchConversation(d.id, { teamId: support.id, assigneeUserId: agent.userId });
    const cleared = await patchConversation(d.id, { teamId: null });
    expect(cleared.body).toMatchObject({ teamId: null, assigneeUserId: agent.userId });
    expect((await assigneeEvents(d.id)).at(-1)).toMatchObject({ fromTeamId: support.id, toTeamId: null, fromAssigneeUserId: agent.userId, toAssigneeUserId: agent.userId });
  });

  test('deleting a team clears it from its conversations (assignee kept), one assignee_changed each', async () => {
    const doomed = (await createTeam({ name: 'Short-lived' })).body;
    await service.call('PUT', `/v3/helpdesk/teams/${doomed.id}/members`, { apikey: manager.token, body: { userIds: [agent.userId] } });
    const e = await newConversation('5511977770004');
    const f = await newConversation('5511977770005');
    await patchConversation(e.id, { teamId: doomed.id, assigneeUserId: agent.userId });
    await patchConversation(f.id, { teamId: doomed.id });
    const deleted = await service.call('DELETE', `/v3/helpdesk/teams/${doomed.id}`, { apikey: manager.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: doomed.id, deleted: true });
    const afterE = (await service.call('GET', `/v3/helpdesk/conversations/${e.id}`, { apikey: owner.token })).body;
    expect(afterE).toMatchObject({ teamId: null, assigneeUserId: agent.userId });
    expect((await service.call('GET', `/v3/helpdesk/conversations/${f.id}`, { apikey: owner.token })).body.teamId).toBeNull();
    for (const id of [e.id, f.id]) {
      expect((await assigneeEvents(id)).at(-1)).toMatchObject({ fromTeamId: doomed.id, toTeamId: null, actorUserId: manager.userId });
    }
    expectStandardError(await service.call('GET', `/v3/helpdesk/teams/${doomed.id}`, { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('DELETE', `/v3/helpdesk/teams/${doomed.id}`, { apikey: manager.token }), 404, 'Not Found');
    expectStandardError(await patchConversation(e.id, { teamId: doomed.id }), 400, 'Bad Request');
  });

  test('a member who left the workspace no longer shows in the team', async () => {
    const leaver = await memberWithToken(service, owner, 'AGENT');
    const team = (await createTeam({ name: 'Leavers' })).body;
    await service.call('PUT', `/v3/helpdesk/teams/${team.id}/members`, { apikey: manager.token, body: { userIds: [leaver.userId, agent.userId] } });
    await service.runtime.ctx.db.deleteFrom('memberships').where('workspace_id', '=', owner.workspaceId).where('user_id', '=', leaver.userId).execute();
    const members = await service.call('GET', `/v3/helpdesk/teams/${team.id}/members`, { apikey: owner.token });
    expect(members.body.data.map((m: any) => m.userId)).toEqual([agent.userId]);
  });
});
