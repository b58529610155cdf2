import { describe, expect, test } from 'bun:test';
import { jobIdFor } from '../../adapters/queue/queue.ts';
import { SNOOZE_EXPIRY_QUEUE } from '../../core/helpdesk/conversations/snooze.ts';
import { helpdeskDb } from '../../plugins/helpdesk/tables.ts';
import { useTestService } from '../support/service.ts';
import { conversationFromContact, eventually, helpdeskEvents, useHelpdeskLine } from '../support/helpdesk.ts';

/**
 * Snooze expiry (spec 3.1: "an automatic change (for example a snooze expiring) carries
 * `silent: true` and leaves no activity message"; 6.5 `conversation.status_changed` with
 * `fromStatus`, `toStatus`, `actorUserId`, optional `silent`). Snoozing queues a job for the
 * snooze's time in the same transaction; the worker reopens the conversation then.
 */

/** Each test waits for real snoozes of a few seconds to expire. */
const TEST_TIMEOUT = 30_000;

const service = useTestService();
const line = useHelpdeskLine(service, { connection: 'snooze line', inbox: 'Snoozy' });
const { owner } = line;

const newConversation = (phone: string) => conversationFromContact(service, owner.token, line.connectionId, phone, { text: 'hi' });
const getConversation = async (id: string) => (await service.call('GET', `/v3/helpdesk/conversations/${id}`, { apikey: owner.token })).body;
const snooze = (id: string, until: Date) => service.call('POST', `/v3/helpdesk/conversations/${id}/status`, { apikey: owner.token, body: { status: 'SNOOZED', snoozedUntil: until.toISOString() } });

async function activityCount(conversationId: string): Promise<number> {
  const rows = await helpdeskDb(service.runtime.ctx.db).selectFrom('helpdesk_messages').select('id').where('conversation_id', '=', conversationId).where('direction', '=', 'activity').execute();
  return rows.length;
}

/** The conversation once its snooze expired: OPEN again, not before `until`, with no snooze left. */
async function reopenedOnTime(id: string, until: Date, what: string): Promise<any> {
  const reopened = await eventually(async () => {
    const now = await getConversation(id);
    return now.status === 'OPEN' ? now : undefined;
  }, what);
  expect(Date.now()).toBeGreaterThanOrEqual(until.getTime());
  expect(reopened.snoozedUntil).toBeNull();
  return reopened;
}

/** `status_changed` events about the conversation, oldest first (the `events` table, no connection). */
async function statusEvents(conversationId: string): Promise<any[]> {
  return (await helpdeskEvents(service, owner.workspaceId, 'helpdesk.conversation.status_changed')).filter((d: any) => d.conversationId === conversationId);
}

/** The queued expiry job of a snooze (pg-boss keeps it in its `job` table under an id made from the dedupe key). */
async function expiryJob(conversationId: string, until: Date): Promise<{ state: string } | undefined> {
  const id = jobIdFor(SNOOZE_EXPIRY_QUEUE, `${conversationId}:${until.toISOString()}`);
  const rows = await service.runtime.ctx.db.selectFrom('pgboss.job' as any).select(['state' as any]).where('id' as any, '=', id).execute();
  return rows[0] as { state: string } | undefined;
}

describe('a snooze expires by itself, silently', () => {
  test('snoozed two seconds ahead: OPEN again on time, status_changed silent with no actor, no activity message', async () => {
    const c = await newConversation('5511955550001');
    const until = new Date(Date.now() + 2_000);
    const res = await snooze(c.id, until);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'SNOOZED', snoozedUntil: until.toISOString() });
    // The snooze left its own activity line and its job, committed together.
    const activityAfterSnooze = await activityCount(c.id);
    expect(activityAfterSnooze).toBe(1);
    expect(await expiryJob(c.id, until)).toBeDefined();

    const reopened = await reopenedOnTime(c.id, until, 'the snooze to expire');
    // Automatic: nothing happened in the conversation, so it does not jump the queue.
    expect(reopened.lastActivityAt).toBe(res.body.lastActivityAt);
    expect(await activityCount(c.id)).toBe(activityAfterSnooze);

    const events = await statusEvents(c.id);
    expect(events.map((e) => [e.fromStatus, e.toStatus])).toEqual([
      ['OPEN', 'SNOOZED'],
      ['SNOOZED', 'OPEN'],
    ]);
    expect(events[0]).not.toHaveProperty('silent');
    expect(events[0].actorUserId).toBe(owner.userId);
    expect(events[1]).toMatchObject({ type: 'helpdesk.conversation.status_changed', accountId: owner.workspaceId, conversationId: c.id, silent: true, actorUserId: null });
  }, TEST_TIMEOUT);

  test('re-snoozed later: the first snooze\'s job is stale and does nothing; the second expires on its own time', async () => {
    const c = await newConversation('5511955550002');
    const first = new Date(Date.now() + 1_000);
    expect((await snooze(c.id, first)).status).toBe(201);
    const second = new Date(Date.now() + 4_000);
    expect((await snooze(c.id, second)).status).toBe(201);

    // The first job runs and finds the conversation snoozed until later: it stays SNOOZED.
    await eventually(async () => ((await expiryJob(c.id, first))?.state === 'completed' ? true : undefined), 'the first job to run');
    expect(Date.now()).toBeLessThan(second.getTime());
    expect(await getConversation(c.id)).toMatchObject({ status: 'SNOOZED', snoozedUntil: second.toISOString() });
    expect((await statusEvents(c.id)).filter((e) => e.silent)).toHaveLength(0);

    const reopened = await reopenedOnTime(c.id, second, 'the second snooze to expire');
    expect((await statusEvents(c.id)).filter((e) => e.silent)).toHaveLength(1);
  }, TEST_TIMEOUT);

  test('reopened by hand before the time: the job does nothing (no second status change)', async () => {
    const c = await newConversation('5511955550003');
    const until = new Date(Date.now() + 1_500);
    expect((await snooze(c.id, until)).status).toBe(201);
    const reopened = await service.call('POST', `/v3/helpdesk/conversations/${c.id}/status`, { apikey: owner.token, body: { status: 'OPEN' } });
    expect(reopened.body.status).toBe('OPEN');
    await eventually(async () => ((await expiryJob(c.id, until))?.state === 'completed' ? true : undefined), 'the job to run');
    const events = await statusEvents(c.id);
    expect(events.map((e) => [e.fromStatus, e.toStatus, e.silent ?? false])).toEqual([
      ['OPEN', 'SNOOZED', false],
      ['SNOOZED', 'OPEN', false],
    ]);
  }, TEST_TIMEOUT);

  test('a snooze whose job was lost is caught by the next snooze job\'s sweep', async () => {
    const lost = await newConversation('5511955550004');
    const db = helpdeskDb(service.runtime.ctx.db);
    // As if its job had been lost: SNOOZED and overdue, with no job queued for it.
    const past = new Date(Date.now() - 60_000);
    await db.updateTable('helpdesk_conversations').set({ status: 'SNOOZED', snoozed_until: past }).where('id', '=', lost.id).execute();
    expect(await expiryJob(lost.id, past)).toBeUndefined();

    const other = await newConversation('5511955550005');
    expect((await snooze(other.id, new Date(Date.now() + 1_000))).status).toBe(201);
    await eventually(async () => ((await getConversation(other.id)).status === 'OPEN' ? true : undefined), 'the other snooze to expire');
    const swept = await eventually(async () => {
      const now = await getConversation(lost.id);
      return now.status === 'OPEN' ? now : undefined;
    }, 'the lost snooze to be swept');
    expect(swept.snoozedUntil).toBeNull();
    expect((await statusEvents(lost.id)).at(-1)).toMatchObject({ fromStatus: 'SNOOZED', toStatus: 'OPEN', silent: true, actorUserId: null });
  }, TEST_TIMEOUT);
});
