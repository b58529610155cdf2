import { beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { givePassword, signInToConsole, useScreenshots, waitForValue } from '../support/console.ts';
import { connectedConnection, connectionInbox, conversationOfContact, injectContactMessage, sentToContact, setInboxMembers } from '../support/helpdesk.ts';
import { useTestService } from '../support/service.ts';
import { eventually } from '../support/wait.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Issue 23, "Tests": two agents in two Chromium contexts run a conversation together. A contact
 * writes in on the sandbox, round-robin assigns it, the assignee sees it appear without reloading
 * and replies with a canned response; the other agent sees the reply and its status reach READ,
 * adds a private note mentioning the first, who is notified; it is resolved; a search and each
 * view return the right conversations; the other agent, removed from the inbox, loses it from
 * the screen at once.
 */
const service = useTestService();
const browser = useBrowser();
const screenshot = useScreenshots('inbox-team');

const CONTACT = '5511966660001';
const setup = {} as {
  owner: { userId: string; workspaceId: string; token: string };
  agents: Array<{ userId: string; email: string; token: string; name: string }>;
  connectionId: string;
  inboxId: string;
};

const api = (method: string, path: string, body?: unknown, apikey = setup.owner.token) => service.call(method, path, { apikey, body });

beforeAll(async () => {
  const owner = await service.bootstrap({ plan: 'PRO' });
  const connectionId = await connectedConnection(service, owner.token, 'Support line');
  const inboxId = await connectionInbox(service, owner.token, 'Support', connectionId);
  const agents = [await memberWithToken(service, owner, 'AGENT'), await memberWithToken(service, owner, 'AGENT')];
  await setInboxMembers(service, owner.token, inboxId, agents.map((a) => a.userId));
  for (const agent of agents) await givePassword(service, agent.userId);
  const members = (await service.call('GET', '/v3/members?per_page=100', { apikey: owner.token })).body.data as Array<{ userId: string; name: string }>;
  setup.owner = owner;
  setup.agents = agents.map((a) => ({ ...a, name: members.find((m) => m.userId === a.userId)!.name }));
  setup.connectionId = connectionId;
  setup.inboxId = inboxId;
  expect((await api('POST', '/v3/helpdesk/canned-responses', { shortCode: 'thanks', content: 'Thank you for writing, we are on it.' })).status).toBe(201);
}, HOOK_TIMEOUT);

const rows = (page: Page) => page.locator('.conversation-row');
const row = (page: Page, name: string) => rows(page).filter({ hasText: name });
const thread = (page: Page) => page.locator('#conversation-messages');
const composer = (page: Page) => page.locator('#composer-text');
const tab = (page: Page, name: string) => page.locator('.view-tab').filter({ hasText: name });
async function showsExactly(page: Page, names: string[]): Promise<void> {
  await eventually(async () => {
    const shown = (await page.locator('.conversation-row .row-name').allTextContents()).sort();
    return JSON.stringify(shown) === JSON.stringify([...names].sort()) || undefined;
  }, `the list to show ${names.join(', ') || 'nothing'}`);
}

describe('two agents run a conversation together in the browser', () => {
  test('round-robin, a live arrival, a canned reply read by the contact, a mention, resolve, views, and a removal', async () => {
    const firstWindow = await browser.openPage({ viewport: { width: 1280, height: 860 } });
    const secondWindow = await browser.openPage({ viewport: { width: 1280, height: 860 } });
    try {
      const pages = [firstWindow.page, secondWindow.page];
      for (const [i, page] of pages.entries()) {
        await signInToConsole(page, service, setup.agents[i]!.email, undefined, '/inbox');
        await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
        await page.locator('.live.online').waitFor();
      }
      // Both show as online (their console's socket beats), so round-robin may pick either.
      for (const agent of setup.agents) {
        await eventually(async () => ((await api('GET', '/v3/helpdesk/profile/availability', undefined, agent.token)).body.status === 'online' ? true : undefined), `${agent.email} online`);
      }

      // A contact writes in; round-robin gives it to one of the two.
      expect((await injectContactMessage(service, setup.owner.token, setup.connectionId, { from: CONTACT, text: 'My order never arrived', pushName: 'Rita Campos' })).status).toBe(201);
      const assigned = await eventually(async () => {
        const c = await conversationOfContact(service, setup.owner.token, CONTACT);
        return c.assigneeUserId ? c : undefined;
      }, 'round-robin to assign the conversation');
      const assigneeIndex = setup.agents.findIndex((a) => a.userId === assigned.assigneeUserId);
      expect(assigneeIndex).toBeGreaterThanOrEqual(0);
      const assignee = { ...setup.agents[assigneeIndex]!, page: pages[assigneeIndex]! };
      const other = { ...setup.agents[1 - assigneeIndex]!, page: pages[1 - assigneeIndex]! };

      // The assignee's Mine view shows it without a reload; the other's Mine stays empty.
      await row(assignee.page, 'Rita Campos').getByText('My order never arrived').waitFor();
      await showsExactly(other.page, []);
      await screenshot(assignee.page, 'assignee-mine');

      // The assignee opens it and replies with a canned response (`/` to search).
      await row(assignee.page, 'Rita Campos').locator('a').click();
      await thread(assignee.page).getByText('My order never arrived').waitFor();
      await composer(assignee.page).click();
      await composer(assignee.page).pressSequentially('/than');
      await assignee.page.getByRole('listbox', { name: 'Canned responses' }).getByRole('option').filter({ hasText: '/thanks' }).waitFor();
      await composer(assignee.page).press('Enter');
      await waitForValue(composer(assignee.page), 'Thank you for writing, we are on it.');
      await composer(assignee.page).press('Enter');

      // The other agent opens it from All, sees the reply, and sees it reach READ as the contact reads it.
      await tab(other.page, 'All').click();
      await row(other.page, 'Rita Campos').locator('a').click();
      const reply = thread(other.page).getByRole('listitem', { name: /^Reply from .*Thank you for writing, we are on it\./ });
      await reply.waitFor();
      const sent = await sentToContact(service, setup.owner.token, setup.connectionId, CONTACT, 'Thank you for writing, we are on it.');
      expect((await api('POST', `/v3/connections/${setup.connectionId}/sandbox/receipts`, { messageId: sent.id, status: 'READ' })).status).toBe(201);
      await reply.getByText('READ', { exact: true }).waitFor();
      await thread(assignee.page).getByRole('listitem', { name: /^Reply from / }).getByText('READ', { exact: true }).waitFor();

      // A private note mentioning the assignee notifies them: their bell counts it, live.
      const unreadBefore = (await api('GET', '/v3/helpdesk/notifications/unread-count', undefined, assignee.token)).body.count as number;
      await other.page.getByRole('button', { name: 'Private note' }).click();
      await composer(other.page).click();
      await composer(other.page).pressSequentially(`Could you check the courier, @${assignee.name.slice(0, -2)}`);
      await other.page.getByRole('listbox', { name: 'Mention a member' }).getByRole('option', { name: new RegExp(assignee.name) }).waitFor();
      await composer(other.page).press('Enter');
      await waitForValue(composer(other.page), `@[${assignee.name}](user:${assignee.userId}) `);
      await composer(other.page).press('Enter');
      await thread(assignee.page).getByRole('listitem', { name: /^Private note from/ }).locator(`.mention[data-user-id="${assignee.userId}"]`).waitFor();
      await assignee.page.getByRole('button', { name: new RegExp(`^Notifications, ${unreadBefore + 1} unread`) }).waitFor();
      // The list's preview reads the mention as a name, not as its markup.
      await row(other.page, 'Rita Campos').getByText(`Note: Could you check the courier, @${assignee.name}`).waitFor();
      await screenshot(other.page, 'other-note');

      // The assignee resolves; it leaves both agents' open lists.
      await assignee.page.getByRole('button', { name: 'Resolve' }).click();
      await eventually(async () => ((await api('GET', `/v3/helpdesk/conversations/${assigned.id}`)).body.status === 'RESOLVED' ? true : undefined), 'the conversation resolved');
      await other.page.getByRole('button', { name: 'Reopen' }).waitFor();
      await showsExactly(assignee.page, []);
      await showsExactly(other.page, []);

      // A second contact: the views and a search say who holds what.
      expect((await injectContactMessage(service, setup.owner.token, setup.connectionId, { from: '5511966660002', text: 'Do you ship to Porto?', pushName: 'Sara Nunes' })).status).toBe(201);
      const later = await eventually(async () => {
        const c = await conversationOfContact(service, setup.owner.token, '5511966660002');
        return c.assigneeUserId ? c : undefined;
      }, 'the second conversation assigned');
      const holder = later.assigneeUserId === assignee.userId ? assignee : other;
      const notHolder = holder === assignee ? other : assignee;
      await assignee.page.goto(`${service.runtime.ctx.config.publicUrl}/#/inbox`);
      await other.page.goto(`${service.runtime.ctx.config.publicUrl}/#/inbox`);
      await showsExactly(holder.page, ['Sara Nunes']);
      await showsExactly(notHolder.page, []);
      await tab(notHolder.page, 'All').click();
      await showsExactly(notHolder.page, ['Sara Nunes']);
      await notHolder.page.goto(`${service.runtime.ctx.config.publicUrl}/#/inbox?view=all&status=`);
      await showsExactly(notHolder.page, ['Rita Campos', 'Sara Nunes']);
      await notHolder.page.getByLabel('Search conversations').fill('courier');
      await showsExactly(notHolder.page, ['Rita Campos']);
      await notHolder.page.getByLabel('Search conversations').fill('porto');
      await showsExactly(notHolder.page, ['Sara Nunes']);
      await notHolder.page.getByLabel('Search conversations').fill('');
      await showsExactly(notHolder.page, ['Rita Campos', 'Sara Nunes']);

      // The other agent, with a conversation open, is taken out of the inbox: both conversations
      // leave their list and the open one says it is out of reach, at once.
      await row(notHolder.page, 'Sara Nunes').locator('a').click();
      await thread(notHolder.page).getByText('Do you ship to Porto?').waitFor();
      await setInboxMembers(service, setup.owner.token, setup.inboxId, [holder.userId]);
      await showsExactly(notHolder.page, []);
      await notHolder.page.getByText('This conversation is no longer in your inboxes.').waitFor();
      await screenshot(notHolder.page, 'removed-from-inbox');
    } finally {
      await firstWindow.close();
      await secondWindow.close();
    }
  }, 90_000);
});
