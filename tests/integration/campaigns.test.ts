import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestService, type TestService } from '../support/service.ts';
import { connectedConnection, eventually, injectContactMessage } from '../support/helpdesk.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Campaigns (issue 8): create with each kind of audience, credits reserved up front and refused
 * when the plan cannot cover them, invalid / repeated / opted-out numbers, personalisation, pause,
 * resume, cancel with refund, the recipient list and progress, opt-out by stop word.
 */
let service: TestService;
let owner: { userId: string; workspaceId: string; token: string };
let connectionId: string;

beforeAll(async () => {
  service = await startTestService({ env: { CAMPAIGN_PACER_MAX_SLEEP_SECONDS: '1', PLAN_FREE_MESSAGES: '50' } });
  owner = await service.bootstrap();
  connectionId = await connectedConnection(service, owner.token, 'Campaign line');
}, HOOK_TIMEOUT);
afterAll(() => service?.stop());

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });
const phone = (i: number) => `+55 11 9${String(70000000 + i)}`;
const digits = (i: number) => `55119${String(70000000 + i)}`;

async function credits(): Promise<number> {
  const summary = await call('GET', '/v3/summary');
  return summary.body.messages.available ?? summary.body.messages.remaining;
}

async function finished(id: string, status = 'COMPLETED') {
  return eventually(async () => {
    const found = await call('GET', `/v3/campaigns/${id}`);
    return found.body.status === status ? found.body : undefined;
  }, `campaign ${status}`);
}

describe('a campaign to a list of numbers', () => {
  test('reserves, sends each recipient once with their variables, and completes', async () => {
    const before = await credits();
    const created = await call('POST', '/v3/campaigns', {
      name: 'Welcome',
      connectionId,
      message: { text: 'Hello {{name|friend}}, your code is {{code}}' },
      audience: {
        recipients: [
          { phone: phone(1), variables: { name: 'Ana', code: 'A1' } },
          { phone: phone(2), variables: { code: 'B2' } },
          { phone: phone(1), variables: { name: 'again', code: 'X' } },
          { phone: 'not a number', variables: { code: 'C' } },
          { phone: phone(3) },
        ],
      },
      pace: { messagesPerMinute: null },
    });
    expect(created.status).toBe(201);
    expect(created.body.duplicates).toBe(1);
    expect(created.body.progress.total).toBe(4);
    expect(created.body.progress.invalid).toBe(2);
    expect(created.body.credits.reserved).toBe(2);
    expect(await credits()).toBe(before - 2);

    const done = await finished(created.body.id);
    expect(done.progress.sent).toBe(2);
    expect(done.credits).toEqual({ reserved: 2, consumed: 2, refunded: 0, held: 0 });
    const recipients = await call('GET', `/v3/campaigns/${created.body.id}/recipients?per_page=10`);
    expect(recipients.body.data.map((r: any) => [r.phone, r.status])).toEqual([
      [digits(1), 'SENT'],
      [digits(2), 'SENT'],
      ['not a number', 'INVALID'],
      [digits(3), 'INVALID'],
    ]);
    expect(recipients.body.data[3].error).toContain('"code"');
    const history = await call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${digits(2)}@s.whatsapp.net`);
    expect(JSON.stringify(history.body)).toContain('Hello friend, your code is B2');
  }, 60_000);
});
