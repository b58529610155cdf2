import { beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { givePassword, signInToConsole, useScreenshots } from '../support/console.ts';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { teachTemplates, type TemplateSimulator } from '../support/graph-simulator-templates.ts';
import { connectionInbox, eventually, setInboxMembers, useHelpdeskWorkspace, withoutAutoAssignment } from '../support/helpdesk.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useTestService } from '../support/service.ts';
import { utilityTemplate } from '../support/template-definitions.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 23: an agent writes first from the console's Inbox ("New conversation"), in Chromium
 * against a real service. On a sandbox inbox a text goes out and reaches SENT; writing again to
 * the same contact lands in the same conversation ("already exists"). On an official inbox
 * (the Graph API simulator) the contact never wrote, so spec 3.4 holds: "Window closed … Free
 * text is refused with 422; only a pre-approved template may be sent": the dialog says so,
 * offers a template, and the template goes out; the composer of that conversation offers the
 * same picker for a template reply.
 */
// The contact's phone stays offline: after a send the platform posts `sent` only, so the thread shows SENT.
const sim = useGraphSimulator({ statusCallbacks: { upTo: 'sent' } });
let platform: TemplateSimulator;
beforeAll(() => {
  platform = teachTemplates(sim);
});
const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const hd = useHelpdeskWorkspace(service, { connection: 'Support line', inbox: 'Support', manualAssignment: true });
const browser = useBrowser();
const screenshot = useScreenshots('inbox-start');

const PHONE = '+55 11 97777-0101';
const OFFICIAL_PHONE = '447700988801';
let officialInboxId = '';
let callbackUrl = '';

beforeAll(async () => {
  await givePassword(service, hd.agent.userId);
  const official = await officialConnection(service, sim, hd.owner.token, 'Official line');
  const connectionId = official.connectionId;
  callbackUrl = official.callbackUrl;
  officialInboxId = await connectionInbox(service, hd.owner.token, 'Official', connectionId);
  await withoutAutoAssignment(service, hd.owner.token, officialInboxId);
  await setInboxMembers(service, hd.owner.token, officialInboxId, [hd.agent.userId]);
  for (const [name, body] of [['order_update', 'Your order {{1}} was updated'], ['reengage', 'Are you still there, {{1}}?']]) {
    const created = await service.call('POST', `/v3/connections/${connectionId}/templates`, { apikey: hd.owner.token, body: utilityTemplate(name!, body!) });
    expect(created.status).toBe(201);
    await platform.approve(created.body.externalId);
  }
}, HOOK_TIMEOUT);

const dialog = (page: Page) => page.getByRole('dialog', { name: 'New conversation' });
const thread = (page: Page) => page.locator('#conversation-messages');
const openedId = (page: Page) => decodeURIComponent(/#\/inbox\/([^?]+)/.exec(page.url())?.[1] ?? '');

async function openDialog(page: Page, inbox: string) {
  await page.getByRole('button', { name: 'New conversation' }).click();
  await dialog(page).waitFor();
  await dialog(page).getByLabel('Inbox').selectOption({ label: inbox });
}

describe('New conversation in the console', () => {
  test('on a sandbox inbox: by phone, the text goes out (SENT); again to the same contact: the open conversation is reused', async () => {
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, hd.agent.email, undefined, '/inbox');
      await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
      await screenshot(page, 'inbox-with-button');
      await openDialog(page, 'Support');
      const form = dialog(page);
      await form.getByRole('radio', { name: 'A phone number' }).check();
      await form.getByRole('textbox', { name: 'Phone' }).fill(PHONE);
      await form.getByRole('textbox', { name: 'Name (optional)' }).fill('Carla Souza');
      await form.getByRole('textbox', { name: 'Message' }).fill('Hello Carla, your order is ready.');
      await screenshot(page, 'dialog-phone');
      await form.getByRole('button', { name: 'Start conversation' }).click();

      await page.waitForURL(/#\/inbox\/[0-9a-f-]{36}/);
      const conversationId = openedId(page);
      await page.getByRole('status').filter({ hasText: 'Conversation started.' }).waitFor();
      const first = thread(page).getByRole('listitem', { name: /^Reply from .*Hello Carla, your order is ready\./ });
      await first.getByText('SENT').waitFor();
      const conversation = (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}`, { apikey: hd.owner.token })).body;
      expect(conversation).toMatchObject({ inboxId: hd.inboxId, status: 'OPEN', assigneeUserId: hd.agent.userId });
      await screenshot(page, 'started');

      // The same contact again, found by name: the message joins the open conversation.
      await openDialog(page, 'Support');
      await form.getByRole('searchbox', { name: 'Search contacts' }).fill('Carla');
      await form.getByRole('radiogroup', { name: 'Contacts found' }).getByLabel(/Carla Souza/).check();
      await form.getByRole('textbox', { name: 'Message' }).fill('One more thing: it ships at noon.');
      await form.getByRole('button', { name: 'Start conversation' }).click();
      await page.getByRole('status').filter({ hasText: 'An open conversation with this contact already exists' }).waitFor();
      expect(openedId(page)).toBe(conversationId);
      await thread(page).getByRole('listitem', { name: /One more thing: it ships at noon\./ }).getByText('SENT').waitFor();
      await screenshot(page, 'reused');
      const contacts = (await service.call('GET', '/v3/helpdesk/contacts?s=5511977770101', { apikey: hd.owner.token })).body.data as any[];
      expect(contacts).toHaveLength(1);
    });
  }, 90_000);

  test('on an official inbox with the window closed: text is refused with the reason, a template goes out; the composer sends one too', async () => {
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, hd.agent.email, undefined, '/inbox');
      await openDialog(page, 'Official');
      const form = dialog(page);
      await form.getByRole('radio', { name: 'A phone number' }).check();
      await form.getByRole('textbox', { name: 'Phone' }).fill(OFFICIAL_PHONE);
      await form.getByRole('radio', { name: 'A text message' }).check();
      await form.getByRole('textbox', { name: 'Message' }).fill('Hi, a cold hello.');
      await form.getByRole('button', { name: 'Start conversation' }).click();
      await form.getByRole('alert').filter({ hasText: /window expired/i }).waitFor();
      await form.getByRole('status').filter({ hasText: 'Write to this contact with a pre-approved template.' }).waitFor();
      await screenshot(page, 'window-closed-refused');

      await form.getByRole('button', { name: 'Use a template' }).click();
      await form.getByRole('combobox', { name: 'Template' }).selectOption({ label: 'order_update · en_US · utility' });
      await form.getByLabel('Body {{1}}').fill('42');
      await form.getByText('Your order 42 was updated').waitFor();
      await screenshot(page, 'dialog-template');
      await form.getByRole('button', { name: 'Start conversation' }).click();

      await page.waitForURL(/#\/inbox\/[0-9a-f-]{36}/);
      const conversationId = openedId(page);
      await page.getByRole('status').filter({ hasText: 'Conversation started.' }).waitFor();
      await thread(page).getByRole('listitem', { name: /^Reply from .*Your order 42 was updated/ }).waitFor();
      const out = await eventually(async () => sim.sent.find((m) => m.body.to === OFFICIAL_PHONE && m.body.type === 'template'), 'the template on the simulator');
      expect(out.body.template).toMatchObject({ name: 'order_update', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '42' }] }] });
      // The platform reports it sent (its status callback): the page follows.
      expect((await sim.deliverStatus(callbackUrl, { messageId: out.id, status: 'sent' })).status).toBe(200);
      await thread(page).getByRole('listitem', { name: /Your order 42 was updated/ }).getByText('SENT').waitFor();

      // The composer: window closed, so it offers the templates for the reply.
      await page.locator('.window.closed', { hasText: 'Window closed: only a template can be sent' }).waitFor();
      const picker = page.getByRole('group', { name: 'Send a template instead' });
      await picker.getByRole('combobox', { name: 'Template' }).selectOption({ label: 'reengage · en_US · utility' });
      await picker.getByLabel('Body {{1}}').fill('Dana');
      await picker.getByText('Are you still there, Dana?').waitFor();
      await screenshot(page, 'composer-template');
      await picker.getByRole('button', { name: 'Send template' }).click();
      await thread(page).getByRole('listitem', { name: /^Reply from .*Are you still there, Dana\?/ }).waitFor();
      const messages = (await service.call('GET', `/v3/helpdesk/conversations/${conversationId}/messages?limit=50`, { apikey: hd.owner.token })).body as any[];
      expect(messages.filter((m) => m.direction === 'outgoing').map((m) => m.content)).toEqual(['Your order 42 was updated', 'Are you still there, Dana?']);
      await eventually(async () => sim.sent.find((m) => m.body.to === OFFICIAL_PHONE && m.body.template?.name === 'reengage'), 'the template reply on the simulator');
    });
  }, 90_000);
});
