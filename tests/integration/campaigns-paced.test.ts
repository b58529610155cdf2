import { beforeAll, describe, expect, test } from 'bun:test';
import { useTestService, useOwner } from '../support/service.ts';
import { connectedConnection, eventually } from '../support/helpdesk.ts';
import { busiestWindow } from '../../core/campaigns/pacing.ts';
import type { Clock } from '../../core/shared/ports.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 8, Tests: "Integration on the sandbox driver with a model clock: a 1,000-recipient
 * campaign paced and completed; cancel halfway refunds the rest." The service runs on a model
 * clock the test moves 30 s at a time; the pacer looks again every second of real time
 * (CAMPAIGN_PACER_MAX_SLEEP_SECONDS=1) and sends what the pace allows at the model time.
 */
class ModelClock implements Clock {
  constructor(private at: number) {}
  now() {
    return new Date(this.at);
  }
  advance(ms: number) {
    this.at += ms;
  }
}

const clock = new ModelClock(Date.parse('2027-01-11T10:00:00.000Z'));
let connectionId: string;
const PER_MINUTE = 120;
const STEP_MS = 30_000;

const service = useTestService({ clock, env: { CAMPAIGN_PACER_MAX_SLEEP_SECONDS: '1', PLAN_PRO_MESSAGES: '2500' } });
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  connectionId = await connectedConnection(service, owner.token, 'Paced line');
}, HOOK_TIMEOUT);

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });
const numbers = (from: number, count: number) => Array.from({ length: count }, (_, i) => `+4915${String(10_000_000 + from + i)}`);
const available = async () => (await call('GET', '/v3/summary')).body.messages.available as number;
const campaign = async (id: string) => (await call('GET', `/v3/campaigns/${id}`)).body;

/** A campaign of this text to these numbers at this pace, created (201); answers the response. */
async function createdCampaign(name: string, text: string, to: string[], pace: Record<string, unknown> = { messagesPerMinute: PER_MINUTE, jitterSeconds: 0 }) {
  const created = await call('POST', '/v3/campaigns', { name, connectionId, message: { text }, audience: { numbers: to }, pace });
  expect(created.status).toBe(201);
  return created;
}

async function allRecipients(id: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const found = await call('GET', `/v3/campaigns/${id}/recipients?per_page=1000&page=${page}`);
    out.push(...found.body.data);
    if (page >= found.body.totalPages) return out;
  }
}

/**
 * Waits for the campaign's first run, which sends to its first recipient at the model time it was
 * created. Only then does the test move the clock: a step taken while that run is still going
 * would count its send as the step's, and the next step would move the clock twice past the run
 * that should have followed the first, so a whole minute's pace would go out at once (and the
 * window rule would then hold the next step back).
 */
async function firstRun(id: string): Promise<any> {
  return eventually(async () => {
    const now = await campaign(id);
    return now.progress.total - now.progress.queued > 0 ? now : undefined;
  }, 'the campaign\'s first run');
}

/**
 * Moves the model clock a step and waits for the pacer to send what it allows. At a step that
 * lands exactly where the last minute's sends still fill the window (the oldest of them exactly
 * 60 s old) the pace allows nothing yet; the clock then moves another step.
 */
async function step(id: string): Promise<any> {
  const before = await campaign(id);
  const handledBefore = before.progress.total - before.progress.queued;
  for (let steps = 0; steps < 3; steps++) {
    clock.advance(STEP_MS);
    const moved = await eventually(
      async () => {
        const now = await campaign(id);
        const handled = now.progress.total - now.progress.queued;
        return handled > handledBefore || now.progress.queued === 0 || now.status !== 'RUNNING' ? now : undefined;
      },
      'the pacer to send the next step',
      10_000,
    ).catch(() => undefined);
    if (moved) return moved;
  }
  throw new Error('the pacer sent nothing over three steps of the clock');
}

describe('a paced campaign of 1,000 recipients on a model clock', () => {
  test('sends at most 120 a minute in any 60 s window, each recipient once, and completes with every credit consumed', async () => {
    const start = await available();
    const created = await createdCampaign('January newsletter', 'Our January news', numbers(0, 1000));
    expect(created.body.credits.reserved).toBe(1000);
    expect(await available()).toBe(start - 1000);

    let state = await firstRun(created.body.id);
    for (let i = 0; i < 40 && state.progress.queued > 0; i++) {
      state = await step(created.body.id);
      // Spec 8 "paced (so an unofficial number is not flagged)": never ahead of the pace.
      const elapsedMinutes = (clock.now().getTime() - Date.parse(created.body.startedAt)) / 60_000;
      expect(state.progress.total - state.progress.queued).toBeLessThanOrEqual(Math.floor(elapsedMinutes * PER_MINUTE) + PER_MINUTE);
    }
    const done = await eventually(async () => {
      const c = await campaign(created.body.id);
      return c.status === 'COMPLETED' ? c : undefined;
    }, 'the campaign to complete');
    expect(done.progress).toMatchObject({ total: 1000, queued: 0, sending: 0, sent: 1000, failed: 0 });
    expect(done.credits).toEqual({ reserved: 1000, consumed: 1000, refunded: 0, held: 0 });
    expect(await available()).toBe(start - 1000);

    const recipients = await allRecipients(created.body.id);
    expect(recipients).toHaveLength(1000);
    expect(new Set(recipients.map((r) => r.messageId)).size).toBe(1000);
    expect(busiestWindow(recipients.map((r) => Date.parse(r.dispatchedAt)))).toBeLessThanOrEqual(PER_MINUTE);
    // It took the pace's time: 1,000 at 120 a minute is more than 8 minutes of model time.
    expect(Date.parse(done.finishedAt) - Date.parse(done.startedAt)).toBeGreaterThanOrEqual(8 * 60_000);
  }, 180_000);

  test('cancelled halfway, the credits of everyone not yet sent go back at once and nobody else is sent to', async () => {
    const start = await available();
    const created = await createdCampaign('To be cancelled', 'Half of you get this', numbers(5000, 1000));
    let state = await firstRun(created.body.id);
    while (state.progress.total - state.progress.queued < 500) state = await step(created.body.id);

    const cancelled = await call('POST', `/v3/campaigns/${created.body.id}/cancel`);
    expect(cancelled.status).toBe(201);
    expect(cancelled.body.status).toBe('CANCELLED');
    const sentOrSending = 1000 - cancelled.body.refunded;
    expect(cancelled.body.refunded).toBe(cancelled.body.progress.cancelled);
    expect(cancelled.body.refunded).toBeGreaterThan(400);
    expect(await available()).toBe(start - sentOrSending);

    // Time passes: the pacer sends no more, in-flight sends settle, nothing else is charged.
    clock.advance(5 * 60_000);
    const settled = await eventually(async () => {
      const c = await campaign(created.body.id);
      return c.progress.sending === 0 ? c : undefined;
    }, 'in-flight sends to settle');
    expect(settled.progress.sent).toBe(sentOrSending);
    expect(settled.credits).toEqual({ reserved: 1000, consumed: sentOrSending, refunded: cancelled.body.refunded, held: 0 });
    expect(await available()).toBe(start - sentOrSending);
    const again = await call('POST', `/v3/campaigns/${created.body.id}/resume`);
    expect(again.status).toBe(409);
  }, 180_000);

  test('quiet hours: nothing is sent while it is quiet in the campaign\'s time zone, sending starts when they end', async () => {
    // The model clock reads some time after 10:00 UTC; quiet from now (Paris time) for ten minutes.
    const paris = (ms: number) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(ms));
    const now = clock.now().getTime();
    const created = await createdCampaign('Quiet', 'Not during quiet hours', numbers(9000, 3), {
      messagesPerMinute: 60,
      jitterSeconds: 0,
      quietHours: { from: paris(now - 60_000), to: paris(now + 10 * 60_000), timezone: 'Europe/Paris' },
    });
    for (let minute = 0; minute < 8; minute += 2) {
      clock.advance(2 * 60_000);
      // A sleep: the pacer wakes on real time (at most 1 s) to see the moved clock; nothing is queued to wait for.
      await Bun.sleep(1_500);
      expect((await campaign(created.body.id)).progress.queued).toBe(3);
    }
    clock.advance(3 * 60_000);
    const done = await eventually(async () => {
      const c = await campaign(created.body.id);
      return c.status === 'COMPLETED' ? c : undefined;
    }, 'the campaign to send after the quiet hours');
    const recipients = await allRecipients(created.body.id);
    for (const r of recipients) expect(Date.parse(r.dispatchedAt)).toBeGreaterThanOrEqual(now + 9 * 60_000);
    expect(done.progress.sent).toBe(3);
  }, 120_000);
});
