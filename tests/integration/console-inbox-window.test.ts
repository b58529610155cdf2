import { describe, expect, test } from 'bun:test';
import { useBrowser } from '../support/browser.ts';
import { givePassword, signInToConsole, useScreenshots } from '../support/console.ts';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { connectionInbox, conversationOfContact, withoutAutoAssignment } from '../support/helpdesk.ts';
import { MovableClock } from '../support/movable-clock.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useTestService } from '../support/service.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';

/**
 * Issue 23 item 2, "the 24-hour window shown on official connections" (spec 3.4): a contact
 * writes to an official number (the Graph API simulator); the agent's composer says when the
 * window closes; a day later it says only a template can go out and refuses free text, while a
 * private note still goes.
 */
const sim = useGraphSimulator();
/** Moved a day forward to close the window. */
const clock = new MovableClock();
const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl }, clock }));
const browser = useBrowser();
const screenshot = useScreenshots('inbox-window');
const PHONE = '5511944440001';

describe('the send window in the composer', () => {
  test('open with its closing time after the contact writes; closed a day later: only a template, notes still go', async () => {
    const owner = await service.bootstrap({ plan: 'PRO' });
    await givePassword(service, owner.userId);
    const email = (await baseStores(service.runtime.ctx.db).identity.getUser(owner.userId))!.email;
    const { connectionId, callbackUrl } = await officialConnection(service, sim, owner.token, 'official line');
    const inboxId = await connectionInbox(service, owner.token, 'Official', connectionId);
    await withoutAutoAssignment(service, owner.token, inboxId);
    expect((await sim.deliverIncoming(callbackUrl, { from: PHONE, name: 'Dora', type: 'text', text: { body: 'Is the shop open on Sunday?' } })).status).toBe(200);
    const conversation = await conversationOfContact(service, owner.token, PHONE);

    await browser.withPage(async (page) => {
      await signInToConsole(page, service, email, undefined, `/inbox/${conversation.id}`);
      await page.locator('#conversation-messages').getByText('Is the shop open on Sunday?').waitFor();
      await page.locator('.window.open', { hasText: /Window closes in (24|23) h/ }).waitFor();
      await screenshot(page, 'window-open');

      // A day later the sign-in session has lapsed too: sign in again.
      clock.advance(25 * 3600_000);
      await signInToConsole(page, service, email, undefined, `/inbox/${conversation.id}`);
      await page.locator('.window.closed', { hasText: 'Window closed: only a template can be sent' }).waitFor();
      expect((await service.call('GET', `/v3/helpdesk/conversations/${conversation.id}`, { apikey: owner.token })).body.sendWindow).toMatchObject({ open: false });
      await page.locator('#composer-text').fill('Yes, from 10 to 4.');
      await page.locator('#composer-text').press('Enter');
      await page.getByText('Window closed: only a template can be sent.').waitFor();
      // A note is for colleagues: the window does not hold it back.
      await page.getByRole('button', { name: 'Private note' }).click();
      await page.locator('#composer-text').fill('Asked about Sunday hours; window closed.');
      await page.locator('#composer-text').press('Enter');
      await page.locator('#conversation-messages').getByText('Asked about Sunday hours; window closed.').waitFor();
      await screenshot(page, 'window-closed');
    });
    const messages = (await service.call('GET', `/v3/helpdesk/conversations/${conversation.id}/messages?limit=50`, { apikey: owner.token })).body as any[];
    expect(messages.map((m) => [m.direction, m.private, m.content])).toEqual([
      ['incoming', false, 'Is the shop open on Sunday?'],
      ['outgoing', true, 'Asked about Sunday hours; window closed.'],
    ]);
  });
});
