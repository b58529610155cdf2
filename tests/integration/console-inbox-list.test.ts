import { beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { givePassword, signInToConsole, useScreenshots } from '../support/console.ts';
import { connectedConnection, connectionInbox, conversationOfContact, injectContactMessage, setInboxMembers, withoutAutoAssignment } from '../support/helpdesk.ts';
import { startTestService, useTestService } from '../support/service.ts';
import { AVAILABLE_PLUGINS } from '../../plugins/index.ts';
import { eventually } from '../support/wait.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Issue 23 item 2, the agent inbox's conversation list in Chromium against a real service:
 * contacts writing on sandbox connections open conversations that appear without a reload; the
 * views, an inbox, a search show the right rows and counts; reading clears the unread marker;
 * j/k move the selection; availability and the notification bell work; an Agent sees only
 * their inbox's conversations.
 */
const service = useTestService();
const browser = useBrowser();
const screenshot = useScreenshots('inbox-list');
const OWNER_EMAIL = 'inbox-owner@example.com';

const setup = {} as {
  owner: { userId: string; workspaceId: string; token: string };
  agent: { userId: string; email: string; token: string };
  front: { connectionId: string; inboxId: string };
  back: { connectionId: string; inboxId: string };
};
const conv = {} as Record<'ana' | 'bruno' | 'carla', any>;

const api = (method: string, path: string, body?: unknown, apikey = setup.owner.token) => service.call(method, path, { apikey, body });
const write = async (line: { connectionId: string }, from: string, pushName: string, text: string) => {
  expect((await injectContactMessage(service, setup.owner.token, line.connectionId, { from, text, pushName })).status).toBe(201);
  return conversationOfContact(service, setup.owner.token, from);
};

beforeAll(async () => {
  const owner = await service.bootstrap({ email: OWNER_EMAIL, plan: 'PRO' });
  const frontConnection = await connectedConnection(service, owner.token, 'front line');
  const backConnection = await connectedConnection(service, owner.token, 'back line');
  setup.owner = owner;
  setup.front = { connectionId: frontConnection, inboxId: await connectionInbox(service, owner.token, 'Front desk', frontConnection) };
  setup.back = { connectionId: backConnection, inboxId: await connectionInbox(service, owner.token, 'Back office', backConnection) };
  for (const inbox of [setup.front, setup.back]) await withoutAutoAssignment(service, owner.token, inbox.inboxId);
  setup.agent = await memberWithToken(service, owner, 'AGENT');
  await setInboxMembers(service, owner.token, setup.front.inboxId, [setup.agent.userId]);
  await givePassword(service, owner.userId);
  await givePassword(service, setup.agent.userId);
  conv.ana = await write(setup.front, '5511960000001', 'Ana Souza', 'Where is my parcel?');
  conv.bruno = await write(setup.back, '5511960000002', 'Bruno Lima', 'A question about my invoice');
}, HOOK_TIMEOUT);

const rows = (page: Page) => page.locator('.conversation-row');
const row = (page: Page, name: string) => rows(page).filter({ hasText: name });
/** The rows' contact names once the list shows exactly `names` (in any order). */
async function showsExactly(page: Page, names: string[]): Promise<void> {
  await eventually(async () => {
    const shown = (await page.locator('.conversation-row .row-name').allTextContents()).sort();
    return JSON.stringify(shown) === JSON.stringify([...names].sort()) || undefined;
  }, `the list to show ${names.join(', ') || 'nothing'}`);
}
const tab = (page: Page, name: string) => page.locator('.view-tab').filter({ hasText: name });

describe('the inbox list', () => {
  test('an Owner: live arrivals, views with counts, an inbox, search, unread, j/k, availability', async () => {
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, OWNER_EMAIL, undefined, '/inbox?view=all');
      await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
      await showsExactly(page, ['Ana Souza', 'Bruno Lima']);
      await row(page, 'Ana Souza').getByText('Where is my parcel?').waitFor();
      await row(page, 'Ana Souza').getByText('Unread').waitFor();

      // A contact writes: the conversation appears without a reload, with the counts.
      await page.locator('.live.online').waitFor();
      expect((await injectContactMessage(service, setup.owner.token, setup.front.connectionId, { from: '5511960000003', text: 'Hello, is anyone there?', pushName: 'Carla Dias' })).status).toBe(201);
      await row(page, 'Carla Dias').getByText('Hello, is anyone there?').waitFor();
      conv.carla = await conversationOfContact(service, setup.owner.token, '5511960000003');
      await tab(page, 'All').filter({ hasText: '(3 open' }).waitFor();
      await tab(page, 'Unassigned').filter({ hasText: '(3 open' }).waitFor();

      // Views: assigning moves conversations between Unassigned and Mine, live.
      expect((await api('PATCH', `/v3/helpdesk/conversations/${conv.ana.id}`, { assigneeUserId: setup.agent.userId })).status).toBe(200);
      expect((await api('PATCH', `/v3/helpdesk/conversations/${conv.bruno.id}`, { assigneeUserId: setup.owner.userId, priority: 'URGENT' })).status).toBe(200);
      await tab(page, 'Unassigned').click();
      await showsExactly(page, ['Carla Dias']);
      await tab(page, 'Unassigned').filter({ hasText: '(1 open' }).waitFor();
      await tab(page, 'Mine').click();
      await showsExactly(page, ['Bruno Lima']);
      await row(page, 'Bruno Lima').getByText('urgent').waitFor();
      expect(page.url()).not.toContain('view=');
      await tab(page, 'All').click();
      await showsExactly(page, ['Ana Souza', 'Bruno Lima', 'Carla Dias']);
      expect(page.url()).toContain('view=all');

      // An inbox: Back office holds Bruno's only; its option shows its counts.
      const scope = page.getByLabel('Inbox or team');
      await eventually(async () => ((await scope.locator('option').allTextContents()).some((o) => o.startsWith('Back office (1 open')) ? true : undefined), 'the inbox counts');
      await scope.selectOption(`inbox:${setup.back.inboxId}`);
      await showsExactly(page, ['Bruno Lima']);
      await scope.selectOption('');
      await showsExactly(page, ['Ana Souza', 'Bruno Lima', 'Carla Dias']);

      // Search: a word of a message; then nothing matches.
      await page.getByLabel('Search conversations').fill('parcel');
      await showsExactly(page, ['Ana Souza']);
      expect(page.url()).toContain('s=parcel');
      await page.getByLabel('Search conversations').fill('zebra');
      await page.getByText('No conversations match').waitFor();
      await page.getByLabel('Search conversations').fill('');
      await showsExactly(page, ['Ana Souza', 'Bruno Lima', 'Carla Dias']);

      // Unread: Carla's is unassigned, so reading it as anyone clears it, live.
      await row(page, 'Carla Dias').getByText('Unread').waitFor();
      expect((await api('POST', `/v3/helpdesk/conversations/${conv.carla.id}/read`)).status).toBe(201);
      await row(page, 'Carla Dias').locator('.unread-dot').waitFor({ state: 'detached' });
      await row(page, 'Ana Souza').locator('.unread-dot').waitFor();

      // j/k: the newest first (Carla), then the next; k goes back. Keys typed in the search box stay there.
      const order = await page.locator('.conversation-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-conversation-id')));
      await page.locator('#content').focus();
      await page.keyboard.press('j');
      await page.waitForURL((url) => url.hash.startsWith(`#/inbox/${order[0]}`));
      await page.keyboard.press('j');
      await page.waitForURL((url) => url.hash.startsWith(`#/inbox/${order[1]}`));
      await row(page, 'Ana Souza').or(row(page, 'Bruno Lima')).locator('a[aria-current="page"]').waitFor();
      expect(page.url()).toContain('view=all');
      await page.keyboard.press('k');
      await page.waitForURL((url) => url.hash.startsWith(`#/inbox/${order[0]}`));
      await page.keyboard.press('f');
      await page.keyboard.type('jk');
      expect(await page.getByLabel('Search conversations').inputValue()).toBe('jk');
      expect(page.url()).toContain(`#/inbox/${order[0]}`);
      await page.getByLabel('Search conversations').fill('');
      await showsExactly(page, ['Ana Souza', 'Bruno Lima', 'Carla Dias']);

      // ? lists every shortcut, the conversation pane's too.
      await page.locator('#content').focus();
      await page.keyboard.press('?');
      const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
      await help.getByText('Resolve or reopen the conversation').waitFor();
      await help.getByText('Write a private note').waitFor();
      await page.keyboard.press('Escape');
      await help.waitFor({ state: 'hidden' });

      // Availability: the toggle writes what GET then answers.
      const availability = page.getByLabel('Your status');
      await page.locator('#own-availability:enabled').waitFor();
      await availability.selectOption('busy');
      await eventually(async () => ((await api('GET', '/v3/helpdesk/profile/availability')).body.availability === 'busy' ? true : undefined), 'availability busy');
      await availability.selectOption('online');
      await eventually(async () => ((await api('GET', '/v3/helpdesk/profile/availability')).body.availability === 'online' ? true : undefined), 'availability online');

      await screenshot(page, 'inbox-conversation-open');
      await page.goto(`${service.runtime.ctx.config.publicUrl}/#/inbox?view=all`);
      await showsExactly(page, ['Ana Souza', 'Bruno Lima', 'Carla Dias']);
      await page.locator('.filters summary').click();
      await screenshot(page, 'inbox-list');
    });
  });

  test('on a phone: the list alone, then the conversation alone with a way back', async () => {
    await browser.withPage(async (page) => {
        await signInToConsole(page, service, OWNER_EMAIL, undefined, '/inbox?view=all');
        await page.setViewportSize({ width: 390, height: 844 });
        await showsExactly(page, ['Ana Souza', 'Bruno Lima', 'Carla Dias']);
        expect(await page.locator('.inbox-conversation').isVisible()).toBe(false);
        await row(page, 'Ana Souza').locator('a').click();
        await page.getByRole('link', { name: '← Conversations' }).waitFor();
        expect(await page.locator('.inbox-list').isVisible()).toBe(false);
        await page.getByRole('link', { name: '← Conversations' }).click();
        await row(page, 'Ana Souza').waitFor();
        expect(page.url()).toContain('view=all');
    });
  });

  test('an Agent: only their inbox, and the notification bell counts an assignment live', async () => {
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, setup.agent.email, undefined, '/inbox?view=all');
      await showsExactly(page, ['Ana Souza', 'Carla Dias']);
      await tab(page, 'All').filter({ hasText: '(2 open' }).waitFor();
      // Asking for the inbox they are not in shows nothing from it, and nothing breaks.
      await page.goto(`${service.runtime.ctx.config.publicUrl}/#/inbox?view=all&inboxId=${setup.back.inboxId}`);
      await page.getByText('No conversations match').waitFor();
      await page.goto(`${service.runtime.ctx.config.publicUrl}/#/inbox?view=mine`);
      await showsExactly(page, ['Ana Souza']);

      const before = (await api('GET', '/v3/helpdesk/notifications/unread-count', undefined, setup.agent.token)).body.count as number;
      const bell = page.locator('.bell');
      await page.getByRole('button', { name: `Notifications, ${before} unread` }).waitFor();
      await page.locator('.live.online').waitFor();
      expect((await api('PATCH', `/v3/helpdesk/conversations/${conv.carla.id}`, { assigneeUserId: setup.agent.userId })).status).toBe(200);
      await page.getByRole('button', { name: `Notifications, ${before + 1} unread` }).waitFor();
      // Mine follows live too.
      await showsExactly(page, ['Ana Souza', 'Carla Dias']);

      await bell.click();
      const dialog = page.getByRole('dialog', { name: 'Notifications' });
      const newest = dialog.locator('.notification').first();
      await newest.getByText('assigned you a conversation').waitFor();
      await screenshot(page, 'inbox-notifications');
      await newest.click();
      await page.waitForURL((url) => url.hash.startsWith(`#/inbox/${conv.carla.id}`));
      await page.getByRole('button', { name: `Notifications, ${before} unread` }).waitFor();
      expect((await api('GET', '/v3/helpdesk/notifications/unread-count', undefined, setup.agent.token)).body.count).toBe(before);
    });
  });

  test('Load more: 25 rows a page, the next page after them, none repeated', async () => {
    for (let i = 10; i < 34; i++) {
      expect((await injectContactMessage(service, setup.owner.token, setup.back.connectionId, { from: `55119600000${i}`, text: `Message ${i}`, pushName: `Contact ${i}` })).status).toBe(201);
    }
    await eventually(async () => ((await api('GET', '/v3/helpdesk/conversations/counts')).body.views.all.open === 27 ? true : undefined), '27 open conversations');
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, OWNER_EMAIL, undefined, '/inbox?view=all');
      await eventually(async () => ((await rows(page).count()) === 25 ? true : undefined), '25 rows');
      await page.getByRole('button', { name: 'Load more' }).click();
      await eventually(async () => ((await rows(page).count()) === 27 ? true : undefined), '27 rows');
      await page.getByRole('button', { name: 'Load more' }).waitFor({ state: 'detached' });
      const ids = await rows(page).evaluateAll((els) => els.map((e) => e.getAttribute('data-conversation-id')));
      expect(new Set(ids).size).toBe(27);
      await row(page, 'Ana Souza').waitFor();
    });
  });
});

describe('without the helpdesk', () => {
  test('the menu has no Inbox when the installation leaves the helpdesk plugin out', async () => {
    const plain = await startTestService({ plugins: AVAILABLE_PLUGINS.filter((p) => p.name !== 'helpdesk') });
    try {
      const owner = await plain.bootstrap({ email: 'no-helpdesk@example.com', plan: 'PRO' });
      await givePassword(plain, owner.userId);
      await browser.withPage(async (page) => {
        await signInToConsole(page, plain, 'no-helpdesk@example.com');
        const menu = page.getByRole('navigation', { name: 'Console' });
        await menu.getByRole('link', { name: 'Connections', exact: true }).waitFor();
        expect(await menu.getByRole('link', { name: 'Inbox', exact: true }).count()).toBe(0);
      });
      // With it (this file's service), an Owner's menu has it.
      await browser.withPage(async (page) => {
        await signInToConsole(page, service, OWNER_EMAIL);
        await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Inbox', exact: true }).waitFor();
      });
    } finally {
      await plain.stop();
    }
  }, 120_000);
});
