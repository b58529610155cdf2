import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { autoAssign } from '../../core/helpdesk/assignment/auto-assignment.ts';
import { assignmentDeps, assignmentStores } from '../../plugins/helpdesk/assignment/store.ts';
import { onConversationCreated } from '../../plugins/helpdesk/assignment/subscriber.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { connectHelpdesk, type TestSocket } from '../support/socket.ts';
import {
  connectedConnection,
  connectionInbox,
  conversationOfContact,
  eventually,
  helpdeskEvents,
  injectContactMessage,
  setInboxMembers,
  type Member,
  type Owner,
} from '../support/helpdesk.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * Availability and round-robin assignment (issue 7 item 1; spec 3.7, 4.6, 6.5). Agents are online
 * the way the spec makes them: their helpdesk websocket is connected and sends `presence:online`
 * heartbeats; an agent who never connected shows offline.
 */

let free: Owner;
let manager: Member;
/** Members of the round-robin inbox: two online, one busy. */
let a1: Member;
let a2: Member;
let busy: Member;
/** Never connected: offline. */
let loner: Member;
let idle1: Member;
let idle2: Member;
/** Online, but member of no inbox. */
let outsider: Member;
const inboxes: Record<'rr' | 'solo' | 'empty' | 'idle' | 'off', { inboxId: string; connectionId: string }> = {} as any;
const sockets: TestSocket[] = [];
let heartbeat: ReturnType<typeof setInterval>;
let phones = 0;

const service = useTestService();
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  free = await service.bootstrap({ plan: 'FREE' });
  manager = await memberWithToken(service, owner, 'MANAGER');
  const agent = () => memberWithToken(service, owner, 'AGENT');
  [a1, a2, busy, loner, idle1, idle2, outsider] = await Promise.all([agent(), agent(), agent(), agent(), agent(), agent(), agent()]);
  for (const name of ['rr', 'solo', 'empty', 'idle', 'off'] as const) {
    const connectionId = await connectedConnection(service, owner.token, `${name} line`);
    inboxes[name] = { connectionId, inboxId: await connectionInbox(service, owner.token, name, connectionId) };
  }
  await setInboxMembers(service, owner.token, inboxes.rr.inboxId, [a1.userId, a2.userId, busy.userId]);
  await setInboxMembers(service, owner.token, inboxes.solo.inboxId, [loner.userId]);
  await setInboxMembers(service, owner.token, inboxes.idle.inboxId, [idle1.userId, idle2.userId]);
  await setInboxMembers(service, owner.token, inboxes.off.inboxId, [a1.userId, a2.userId]);

  // Online: a live websocket with heartbeats (spec 3.7); busy: the same, having chosen busy.
  for (const member of [a1, a2, busy, manager, outsider]) sockets.push(await connectHelpdesk(service.url, member.token));
  heartbeat = setInterval(() => sockets.forEach((s) => s.socket.emit('presence:online')), 5_000);
  expect((await service.call('PATCH', '/v3/helpdesk/profile/availability', { apikey: busy.token, body: { availability: 'busy' } })).status).toBe(200);
}, HOOK_TIMEOUT);

afterAll(async () => {
  clearInterval(heartbeat);
  for (const s of sockets) s.close();
}, HOOK_TIMEOUT);

const nextPhone = () => `55119000${String(++phones).padStart(5, '0')}`;

/** A sandbox contact writes to the inbox's connection; answers their phone. */
async function contactWrites(inbox: keyof typeof inboxes): Promise<string> {
  const phone = nextPhone();
  expect((await injectContactMessage(service, owner.token, inboxes[inbox].connectionId, { from: phone, text: 'Hello' })).status).toBe(201);
  return phone;
}

const assigned = (phone: string) => conversationOfContact(service, owner.token, phone, (c) => c.assigneeUserId !== null);

/** What automatic assignment decided for the conversation, once it has. */
function decision(conversationId: string): Promise<{ outcome: string; assignee_user_id: string | null; trigger: string }> {
  return eventually(
    () => helpdeskDb(service.runtime.ctx.db).selectFrom('helpdesk_assignment_decisions').select(['outcome', 'assignee_user_id', 'trigger']).where('conversation_id', '=', conversationId).executeTakeFirst(),
    `the assignment decision on ${conversationId}`,
  );
}

async function assigneeEvents(conversationId: string): Promise<any[]> {
  return (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.assignee_changed')).filter((e) => e.conversationId === conversationId);
}

const availability = (apikey: string, body?: unknown) => service.call(body === undefined ? 'GET' : 'PATCH', '/v3/helpdesk/profile/availability', { apikey, body });

describe('availability (spec 3.7, 4.6)', () => {
  test('GET answers the chosen value and the shown status; never connected: online chosen, offline shown', async () => {
    expect((await availability(loner.token)).body).toEqual({ userId: loner.userId, availability: 'online', status: 'offline' });
    expect((await availability(a1.token)).body).toEqual({ userId: a1.userId, availability: 'online', status: 'online' });
    expect((await availability(busy.token)).body).toEqual({ userId: busy.userId, availability: 'busy', status: 'busy' });
  });

  test('PATCH sets your own value, answers it and announces presence.update to the workspace', async () => {
    const observer = sockets[3]!; // the Manager's
    const from = observer.received.length;
    const res = await availability(outsider.token, { availability: 'busy' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ userId: outsider.userId, availability: 'busy', status: 'busy' });
    await observer.next('presence.update', (p) => p.users[outsider.userId] === 'busy', { after: from });
    expect((await availability(outsider.token, { availability: 'offline' })).body).toEqual({ userId: outsider.userId, availability: 'offline', status: 'offline' });
    await observer.next('presence.update', (p) => p.users[outsider.userId] === 'offline', { after: from });
    expect((await availability(outsider.token, { availability: 'online' })).body).toEqual({ userId: outsider.userId, availability: 'online', status: 'online' });
    // Choosing is not connecting: a member with no websocket shows offline whatever they chose.
    expect((await availability(loner.token, { availability: 'online' })).body).toEqual({ userId: loner.userId, availability: 'online', status: 'offline' });
  });

  test('validation (400), authentication (401), the PRO plan for the change but not the read (403)', async () => {
    expectStandardError(await availability(a1.token, { availability: 'away' }), 400, 'Bad Request');
    expectStandardError(await availability(a1.token, {}), 400, 'Bad Request');
    expect((await service.call('PATCH', '/v3/helpdesk/profile/availability', { body: { availability: 'busy' } })).status).toBe(401);
    const denied = await availability(free.token, { availability: 'busy' });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('HELPDESK_PLAN_REQUIRED');
    expect((await availability(free.token)).body).toEqual({ userId: free.userId, availability: 'online', status: 'offline' });
  });
});

describe('round-robin (spec 3.7)', () => {
  test('three agents, two online and one busy: only the online two take turns, one after the other', async () => {
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const conversation = await assigned(await contactWrites('rr'));
      order.push(conversation.assigneeUserId);
      const events = await assigneeEvents(conversation.id);
      expect(events).toEqual([
        {
          type: 'helpdesk.conversation.assignee_changed',
          accountId: owner.workspaceId,
          conversationId: conversation.id,
          inboxId: inboxes.rr.inboxId,
          fromAssigneeUserId: null,
          toAssigneeUserId: conversation.assigneeUserId,
          fromTeamId: null,
          toTeamId: null,
          actorUserId: null,
        },
      ]);
      expect((await decision(conversation.id)).outcome).toBe('rotation');
    }
    expect(new Set(order)).toEqual(new Set([a1.userId, a2.userId]));
    expect(order[0]).not.toBe(order[1]);
    expect(order[2]).toBe(order[0]);
    expect(order[3]).toBe(order[1]);
  }, 60_000);

  test('conversations arriving at once share the turns evenly (the rotation is taken under a lock)', async () => {
    const phones = await Promise.all(Array.from({ length: 10 }, () => contactWrites('rr')));
    const conversations = await Promise.all(phones.map(assigned));
    const count = (userId: string) => conversations.filter((c) => c.assigneeUserId === userId).length;
    expect([count(a1.userId), count(a2.userId), count(busy.userId)]).toEqual([5, 5, 0]);
  }, 60_000);

  test('a single inbox member is assigned even when offline', async () => {
    expect((await availability(loner.token)).body.status).toBe('offline');
    const conversation = await assigned(await contactWrites('solo'));
    expect(conversation.assigneeUserId).toBe(loner.userId);
    expect((await decision(conversation.id)).outcome).toBe('only-member');
  }, 30_000);

  test('an inbox with no members: the workspace Owner', async () => {
    const conversation = await assigned(await contactWrites('empty'));
    expect(conversation.assigneeUserId).toBe(owner.userId);
    expect((await decision(conversation.id)).outcome).toBe('owner');
    expect((await assigneeEvents(conversation.id)).map((e) => [e.toAssigneeUserId, e.actorUserId])).toEqual([[owner.userId, null]]);
  }, 30_000);

  test('two members, neither online: nobody is assigned (no Owner fallback either)', async () => {
    const conversation = await conversationOfContact(service, owner.token, await contactWrites('idle'));
    expect((await decision(conversation.id)).outcome).toBe('nobody-online');
    expect((await service.call('GET', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner.token })).body.assigneeUserId).toBeNull();
    expect(await assigneeEvents(conversation.id)).toEqual([]);
  }, 30_000);

  test('a replayed conversation.created changes nothing, even after a person unassigned it', async () => {
    const conversation = await assigned(await contactWrites('rr'));
    const unassign = await service.call('PATCH', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner.token, body: { assigneeUserId: null } });
    expect(unassign.body.assigneeUserId).toBeNull();
    const [created] = (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.created')).filter((e) => e.conversationId === conversation.id);
    await onConversationCreated({ eventId: crypto.randomUUID(), workspaceId: owner.workspaceId, event: 'helpdesk.conversation.created', connectionId: null, remoteJid: null, data: created }, service.runtime.ctx);
    expect((await service.call('GET', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner.token })).body.assigneeUserId).toBeNull();
    expect((await assigneeEvents(conversation.id)).map((e) => e.actorUserId)).toEqual([null, owner.userId]);
  }, 30_000);
});

describe('team-restricted conversations (handed over with autoAssign)', () => {
  const handOver = (conversationId: string) => service.runtime.ctx.db.transaction().execute((trx) => autoAssign(assignmentStores(trx, service.runtime.ctx), assignmentDeps(service.runtime.ctx), conversationId));
  const team = async (name: string, userIds: string[]) => {
    const created = await service.call('POST', '/v3/helpdesk/teams', { apikey: owner.token, body: { name } });
    expect((await service.call('PUT', `/v3/helpdesk/teams/${created.body.id}/members`, { apikey: owner.token, body: { userIds } })).status).toBe(200);
    return created.body.id as string;
  };
  /** An unassigned conversation of the idle inbox (nobody online there) given to the team. */
  const teamConversation = async (teamId: string) => {
    const conversation = await conversationOfContact(service, owner.token, await contactWrites('idle'));
    await decision(conversation.id);
    const patched = await service.call('PATCH', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner.token, body: { teamId } });
    expect(patched.body).toMatchObject({ teamId, assigneeUserId: null });
    return conversation.id as string;
  };

  test('no team member may see the inbox: nobody, and no Owner fallback', async () => {
    const conversationId = await teamConversation(await team('Outsiders', [outsider.userId]));
    const result = await handOver(conversationId);
    expect(result).toMatchObject({ outcome: 'no-eligible-member', assigneeUserId: null });
    expect((await service.call('GET', `/v3/helpdesk/conversations/${conversationId}`, { apikey: owner.token })).body.assigneeUserId).toBeNull();
    expect((await decision(conversationId)).trigger).toBe('handoff');
  }, 30_000);

  test("the team's members who may see the inbox take part: an offline inbox member and an online Manager", async () => {
    const conversationId = await teamConversation(await team('Escalations', [idle1.userId, manager.userId, outsider.userId]));
    const result = await handOver(conversationId);
    expect(result).toMatchObject({ outcome: 'rotation', assigneeUserId: manager.userId });
    const events = await assigneeEvents(conversationId);
    expect(events.at(-1)).toMatchObject({ fromAssigneeUserId: null, toAssigneeUserId: manager.userId, actorUserId: null });
    // Held now: a second hand-over leaves it.
    expect(await handOver(conversationId)).toMatchObject({ outcome: 'already-assigned', assigneeUserId: manager.userId });
    expect((await assigneeEvents(conversationId)).length).toBe(events.length);
  }, 30_000);

  test('two eligible team members, neither online: nobody', async () => {
    const conversationId = await teamConversation(await team('Night shift', [idle1.userId, idle2.userId]));
    expect(await handOver(conversationId)).toMatchObject({ outcome: 'nobody-online', assigneeUserId: null });
  }, 30_000);
});

describe('the per-inbox switch', () => {
  const path = () => `/v3/helpdesk/inboxes/${inboxes.off.inboxId}/assignment`;

  test('on by default; an Owner, Admin or Manager switches it (PRO); Agents read it in their inboxes, 404 elsewhere', async () => {
    expect((await service.call('GET', path(), { apikey: a1.token })).body).toEqual({ inboxId: inboxes.off.inboxId, enabled: true, updatedAt: null });
    const off = await service.call('PUT', path(), { apikey: manager.token, body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ inboxId: inboxes.off.inboxId, enabled: false, updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) });
    expect((await service.call('GET', path(), { apikey: owner.token })).body.enabled).toBe(false);

    expectStandardError(await service.call('PUT', path(), { apikey: a1.token, body: { enabled: true } }), 403, 'Forbidden');
    expectStandardError(await service.call('GET', path(), { apikey: loner.token }), 404, 'Not Found');
    expectStandardError(await service.call('PUT', path(), { apikey: loner.token, body: { enabled: true } }), 404, 'Not Found');
    expectStandardError(await service.call('GET', `/v3/helpdesk/inboxes/${crypto.randomUUID()}/assignment`, { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('GET', '/v3/helpdesk/inboxes/not-an-id/assignment', { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('PUT', path(), { apikey: owner.token, body: { enabled: 'no' } }), 400, 'Bad Request');
    expectStandardError(await service.call('PUT', path(), { apikey: owner.token, body: {} }), 400, 'Bad Request');
    // Another workspace's inbox does not exist for this one.
    expectStandardError(await service.call('GET', path(), { apikey: free.token }), 404, 'Not Found');
  });

  test('switched off: new conversations stay unassigned, with no assignee event', async () => {
    const conversation = await conversationOfContact(service, owner.token, await contactWrites('off'));
    expect(conversation.id).toMatch(UUID);
    expect((await decision(conversation.id)).outcome).toBe('disabled');
    expect((await service.call('GET', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner.token })).body.assigneeUserId).toBeNull();
    expect(await assigneeEvents(conversation.id)).toEqual([]);
  }, 30_000);

  test('switched back on: the next conversation is assigned to an online member', async () => {
    expect((await service.call('PUT', path(), { apikey: owner.token, body: { enabled: true } })).body.enabled).toBe(true);
    const conversation = await assigned(await contactWrites('off'));
    expect([a1.userId, a2.userId]).toContain(conversation.assigneeUserId);
  }, 30_000);

  test('a FREE workspace cannot switch (HELPDESK_PLAN_REQUIRED)', async () => {
    const connectionId = await connectedConnection(service, free.token, 'free line');
    // Creating an inbox needs PRO as well: the row is written directly, as a workspace moved down from PRO keeps its inboxes.
    const inboxId = crypto.randomUUID();
    await helpdeskDb(service.runtime.ctx.db)
      .insertInto('helpdesk_inboxes')
      .values({ id: inboxId, workspace_id: free.workspaceId, name: 'left from PRO', channel_type: 'CONNECTION', connection_id: connectionId, webhook_url: null, inbound_secret: null, created_at: new Date(), updated_at: new Date() })
      .execute();
    expect((await service.call('GET', `/v3/helpdesk/inboxes/${inboxId}/assignment`, { apikey: free.token })).body.enabled).toBe(true);
    const denied = await service.call('PUT', `/v3/helpdesk/inboxes/${inboxId}/assignment`, { apikey: free.token, body: { enabled: false } });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('HELPDESK_PLAN_REQUIRED');
  });
});
