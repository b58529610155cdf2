import { beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { useBrowser } from '../support/browser.ts';
import { givePassword, openConsolePage, signInToConsole, useScreenshots, waitForValue } from '../support/console.ts';
import { connectedConnection, conversationOfContact, injectContactMessage } from '../support/helpdesk.ts';
import { useTestService } from '../support/service.ts';
import { eventually } from '../support/wait.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Issue 23, "a small team can run its day in the browser with no curl": a Manager sets up the
 * helpdesk on the console's Helpdesk settings page in Chromium — an inbox on a sandbox connection
 * (docs/helpdesk.md "Inboxes": `POST /v3/helpdesk/inboxes` `channelType: CONNECTION`), its
 * members (`PUT …/{id}/members`) and manual assignment (`PUT …/{id}/assignment`), a team with
 * members ("Teams": `POST /v3/helpdesk/teams`, `PUT …/{id}/members`), a label with a colour
 * (409 for a name used in any case), a canned response and a macro ("Canned responses and
 * macros"), an inbox's business hours, out-of-office reply and survey, and an SLA policy
 * ("SLAs and business hours", "CSAT"); each checked through the API. Then the Agent, in their
 * own browser, finds the inbox and its conversation on the Inbox page and the canned response
 * behind `/` in the composer, and has no Helpdesk settings page (helpdesk.configure is Managers
 * and above, spec 2.14).
 */
const service = useTestService();
const browser = useBrowser();
const shot = useScreenshots('helpdesk-settings');

const setup = {} as {
  owner: { userId: string; workspaceId: string; token: string };
  manager: { userId: string; email: string; token: string };
  agent: { userId: string; email: string; token: string; name: string };
  connectionId: string;
};
const asManager = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: setup.manager.token, body });

beforeAll(async () => {
  setup.owner = await service.bootstrap({ plan: 'PRO' });
  setup.manager = await memberWithToken(service, setup.owner, 'MANAGER');
  const agent = await memberWithToken(service, setup.owner, 'AGENT');
  await givePassword(service, setup.manager.userId);
  await givePassword(service, agent.userId);
  const members = (await service.call('GET', '/v3/members?per_page=100', { apikey: setup.owner.token })).body.data as Array<{ userId: string; name: string }>;
  setup.agent = { ...agent, name: members.find((m) => m.userId === agent.userId)!.name };
  setup.connectionId = await connectedConnection(service, setup.owner.token, 'Support line');
}, HOOK_TIMEOUT);

const tab = (page: Page, name: string) => page.getByRole('navigation', { name: 'Helpdesk settings sections' }).getByRole('link', { name, exact: true });
const card = (page: Page, name: string) => page.getByRole('region', { name, exact: true });
const agentBox = (page: Page) => page.getByRole('checkbox', { name: new RegExp(setup.agent.email.replace(/[.+]/g, '\\$&')) });

describe('a Manager sets up the helpdesk in the browser, and the Agent works with it', () => {
  test('inbox, members, assignment, team, label, canned response and macro; the Agent sees them and no settings', async () => {
    const manager = await browser.openPage({ viewport: { width: 1280, height: 860 } });
    const agent = await browser.openPage({ viewport: { width: 1280, height: 860 } });
    try {
      const page = manager.page;
      await signInToConsole(page, service, setup.manager.email, undefined, '/settings');
      await page.getByRole('heading', { level: 1, name: 'Helpdesk settings' }).waitFor();
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Helpdesk settings' }).waitFor();
      await page.getByText('No inboxes yet').waitFor();
      await shot(page, 'inboxes-empty');

      // 1. An inbox on the sandbox connection.
      await page.getByRole('button', { name: 'New inbox' }).click();
      const form = page.getByRole('form', { name: 'New inbox' });
      await form.getByLabel('Name').fill('Support');
      await form.getByLabel('Channel').selectOption(setup.connectionId);
      await form.getByLabel('Time zone').fill('Europe/Lisbon');
      await shot(page, 'inbox-new');
      await form.getByRole('button', { name: 'Create inbox' }).click();
      await page.getByRole('heading', { name: 'Inbox "Support" created' }).waitFor();
      const inbox = ((await asManager('GET', '/v3/helpdesk/inboxes')).body.data as any[]).find((i) => i.name === 'Support');
      expect(inbox).toMatchObject({ channelType: 'CONNECTION', connectionId: setup.connectionId, timezone: 'Europe/Lisbon' });
      await card(page, 'Inboxes').getByRole('row').filter({ hasText: 'Support line' }).getByRole('link', { name: 'Support' }).waitFor();

      // Its members and assignment, on its own page.
      await page.getByRole('link', { name: 'choose who works it' }).click();
      await page.getByRole('heading', { level: 2, name: 'Support' }).waitFor();
      await agentBox(page).check();
      await page.getByRole('button', { name: 'Save members' }).click();
      await page.getByText('Members saved.').waitFor();
      expect(((await asManager('GET', `/v3/helpdesk/inboxes/${inbox.id}/members`)).body.data as any[]).map((m) => m.userId)).toEqual([setup.agent.userId]);
      await page.getByRole('radio', { name: /^Manual/ }).check();
      await page.getByRole('button', { name: 'Save assignment' }).click();
      await page.getByText('Assignment saved.').waitFor();
      expect((await asManager('GET', `/v3/helpdesk/inboxes/${inbox.id}/assignment`)).body.enabled).toBe(false);

      // Business hours (Mondays until midnight, a holiday), the out-of-office reply, the survey.
      const hours = page.getByRole('form', { name: 'Business hours' });
      await hours.getByRole('checkbox', { name: /^Keep business hours/ }).check();
      await hours.getByRole('group', { name: 'Monday' }).getByRole('checkbox', { name: 'Open' }).check();
      await hours.getByRole('textbox', { name: 'Monday to' }).fill('24:00');
      await hours.getByRole('button', { name: '+ Holiday' }).click();
      const holidays = hours.getByRole('group', { name: 'Holidays (closed all day)' });
      await holidays.getByLabel('Date').fill('2026-12-25');
      await holidays.getByLabel('Name').fill('Christmas');
      await hours.getByRole('button', { name: 'Save business hours' }).click();
      await page.getByText('Business hours saved.').waitFor();
      const saved = (await asManager('GET', `/v3/helpdesk/inboxes/${inbox.id}/business-hours`)).body;
      expect(saved).toMatchObject({ enabled: true, timezone: 'Europe/Lisbon', holidays: [{ date: '2026-12-25', name: 'Christmas' }] });
      expect(saved.weeklyHours.monday).toEqual([{ start: '09:00', end: '24:00' }]);
      expect(saved.weeklyHours.tuesday).toEqual([]);
      const away = page.getByRole('form', { name: 'Reply when the inbox is closed' });
      await away.getByRole('checkbox', { name: /^Reply when the inbox is closed/ }).check();
      await away.getByLabel('Out-of-office message').fill('We are closed; we answer on Monday.');
      await away.getByRole('button', { name: 'Save' }).click();
      await away.getByText('Saved.').waitFor();
      expect((await asManager('GET', `/v3/helpdesk/inboxes/${inbox.id}/out-of-office`)).body).toMatchObject({ enabled: true, message: 'We are closed; we answer on Monday.' });
      const survey = page.getByRole('form', { name: /^Ask the contact to rate/ });
      await survey.getByRole('checkbox', { name: /^Ask the contact to rate/ }).check();
      await survey.getByRole('button', { name: 'Save' }).click();
      await survey.getByText('Saved.').waitFor();
      expect((await asManager('GET', `/v3/helpdesk/inboxes/${inbox.id}/csat`)).body).toMatchObject({ enabled: true, message: null });
      // The connection's past chats (none yet on this sandbox line): the import runs and completes.
      const history = card(page, 'Chat history');
      await history.getByRole('button', { name: 'Import past chats' }).click();
      await history.getByText('COMPLETED', { exact: true }).waitFor();
      expect((await asManager('GET', `/v3/helpdesk/inboxes/${inbox.id}/sync`)).body).toMatchObject({ status: 'COMPLETED', conversations: { created: 0 } });
      await shot(page, 'inbox-settings');
      // Open around the clock again, so no out-of-office reply answers the contact below.
      await hours.getByRole('checkbox', { name: /^Keep business hours/ }).uncheck();
      await hours.getByRole('button', { name: 'Save business hours' }).click();
      await page.getByText('Business hours saved.').waitFor();
      await eventually(async () => ((await asManager('GET', `/v3/helpdesk/inboxes/${inbox.id}/business-hours`)).body.enabled === false ? true : undefined), 'business hours off');

      // 2. A team with the Agent.
      await tab(page, 'Teams').click();
      await page.getByText('No teams yet').waitFor();
      await page.getByLabel('Team name').fill('Billing');
      await page.getByLabel('Description (optional)').fill('Refunds and invoices');
      await page.getByRole('button', { name: 'Create team' }).click();
      await page.getByRole('heading', { level: 2, name: 'Billing' }).waitFor();
      await agentBox(page).check();
      await page.getByRole('button', { name: 'Save members' }).click();
      await page.getByText('Members saved.').waitFor();
      const team = ((await asManager('GET', '/v3/helpdesk/teams')).body.data as any[]).find((t) => t.name === 'Billing');
      expect(team.description).toBe('Refunds and invoices');
      expect(team.members.map((m: any) => m.userId)).toEqual([setup.agent.userId]);
      await shot(page, 'team');

      // 3. A label with a colour; the same name in another case is the API's 409, shown.
      await tab(page, 'Labels').click();
      await page.getByText('No labels yet').waitFor();
      const newLabel = page.getByRole('form', { name: 'Create label' });
      await newLabel.getByLabel('Label name').fill('refund');
      await newLabel.getByLabel('Colour').fill('#d9480f');
      await newLabel.getByRole('button', { name: 'Create label' }).click();
      await page.getByRole('row', { name: 'Label refund' }).waitFor();
      expect(((await asManager('GET', '/v3/helpdesk/labels')).body.data as any[]).map((l) => [l.name, l.color])).toEqual([['refund', '#d9480f']]);
      await newLabel.getByLabel('Label name').fill('Refund');
      await newLabel.getByRole('button', { name: 'Create label' }).click();
      await newLabel.getByRole('alert').filter({ hasText: 'No label was created.' }).waitFor();
      expect((await asManager('GET', '/v3/helpdesk/labels')).body.total).toBe(1);
      await shot(page, 'labels');

      // 4. A canned response, then edited.
      await tab(page, 'Canned responses').click();
      await page.getByText('No canned responses yet').waitFor();
      const newCanned = page.getByRole('form', { name: 'Create canned response' });
      await newCanned.getByLabel('Short code').fill('thanks');
      await newCanned.getByLabel('Content').fill('Thank you for writing.');
      await newCanned.getByRole('button', { name: 'Create canned response' }).click();
      await page.getByRole('row', { name: 'Canned response /thanks' }).waitFor();
      await page.getByRole('button', { name: 'Edit /thanks' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit /thanks' });
      await edit.getByLabel('Content').fill('Thank you for writing, we are on it.');
      await edit.getByRole('button', { name: 'Save canned response' }).click();
      await page.getByRole('row', { name: 'Canned response /thanks' }).getByText('Thank you for writing, we are on it.').waitFor();
      expect(((await asManager('GET', '/v3/helpdesk/canned-responses')).body.data as any[]).map((c) => [c.shortCode, c.content])).toEqual([['thanks', 'Thank you for writing, we are on it.']]);
      await shot(page, 'canned-responses');

      // 5. A workspace macro: label, team, priority.
      await tab(page, 'Macros').click();
      await page.getByText('No macros yet').waitFor();
      const builder = page.getByRole('form', { name: 'New macro' });
      await builder.getByLabel('Macro name').fill('Refund request');
      const action = (n: number) => builder.getByRole('group', { name: `Action ${n}` });
      await action(1).getByLabel('Labels').fill('refund');
      await builder.getByRole('button', { name: 'Add an action' }).click();
      await action(2).getByLabel('What').selectOption('assign_team');
      await action(2).getByLabel('Team').selectOption({ label: 'Billing' });
      await builder.getByRole('button', { name: 'Add an action' }).click();
      await action(3).getByLabel('What').selectOption('set_priority');
      await action(3).getByLabel('Priority').selectOption('HIGH');
      await shot(page, 'macro-builder');
      await builder.getByRole('button', { name: 'Create macro' }).click();
      await page.getByRole('row', { name: 'Macro Refund request' }).getByText('Give to team Billing').waitFor();
      const macros = (await asManager('GET', '/v3/helpdesk/macros')).body.data as any[];
      expect(macros.map((m) => [m.name, m.visibility, m.actions])).toEqual([
        [
          'Refund request',
          'workspace',
          [
            { type: 'add_labels', labels: ['refund'] },
            { type: 'assign_team', teamId: team.id },
            { type: 'set_priority', priority: 'HIGH' },
          ],
        ],
      ]);
      // Edited: the priority becomes URGENT, the other actions stay as they were.
      await page.getByRole('button', { name: 'Edit Refund request' }).click();
      const editMacro = page.getByRole('dialog', { name: 'Edit macro Refund request' });
      await editMacro.getByRole('group', { name: 'Action 3' }).getByLabel('Priority').selectOption('URGENT');
      await editMacro.getByRole('button', { name: 'Save macro' }).click();
      await page.getByRole('row', { name: 'Macro Refund request' }).getByText('Set priority URGENT').waitFor();
      expect(((await asManager('GET', '/v3/helpdesk/macros')).body.data as any[])[0].actions).toEqual([
        { type: 'add_labels', labels: ['refund'] },
        { type: 'assign_team', teamId: team.id },
        { type: 'set_priority', priority: 'URGENT' },
      ]);
      await shot(page, 'macros');

      // 6. An SLA policy on the inbox.
      await tab(page, 'SLA policies').click();
      await page.getByText('No SLA policies yet').waitFor();
      const newPolicy = page.getByRole('form', { name: 'Create SLA policy' });
      await newPolicy.getByLabel('Policy name').fill('Standard');
      await newPolicy.getByLabel('First reply within (minutes)').fill('30');
      await newPolicy.getByLabel('Resolved within (minutes)').fill('1440');
      await newPolicy.getByRole('checkbox', { name: 'Support', exact: true }).check();
      await newPolicy.getByRole('button', { name: 'Create SLA policy' }).click();
      await page.getByRole('row', { name: 'SLA policy Standard' }).getByText('1 d').waitFor();
      expect(((await asManager('GET', '/v3/helpdesk/sla-policies')).body.data as any[]).map((p) => [p.name, p.firstResponseMinutes, p.nextResponseMinutes, p.resolutionMinutes, p.onlyBusinessHours, p.inboxIds])).toEqual([
        ['Standard', 30, null, 1440, true, [inbox.id]],
      ]);
      await shot(page, 'sla-policies');

      // The Agent: a contact writes in; with assignment manual the conversation waits, unassigned.
      expect((await injectContactMessage(service, setup.owner.token, setup.connectionId, { from: '5511977770001', text: 'Where is my refund?', pushName: 'Rita Campos' })).status).toBe(201);
      const conversation = await conversationOfContact(service, setup.owner.token, '5511977770001');
      expect(conversation.inboxId).toBe(inbox.id);
      expect(conversation.assigneeUserId).toBeNull();

      const a = agent.page;
      await signInToConsole(a, service, setup.agent.email, undefined, '/inbox?view=all');
      await a.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
      const menu = a.getByRole('navigation', { name: 'Console' });
      await menu.getByRole('link', { name: 'Inbox' }).waitFor();
      expect(await menu.getByRole('link', { name: 'Helpdesk settings' }).count()).toBe(0);
      await a.locator('#inbox-scope option').filter({ hasText: 'Support' }).waitFor({ state: 'attached' });
      const row = a.locator('.conversation-row').filter({ hasText: 'Rita Campos' });
      await row.getByText('Where is my refund?').waitFor();
      await row.locator('a').click();
      const composer = a.locator('#composer-text');
      await composer.click();
      await composer.pressSequentially('/than');
      await a.getByRole('listbox', { name: 'Canned responses' }).getByRole('option').filter({ hasText: '/thanks' }).waitFor();
      await composer.press('Enter');
      await waitForValue(composer, 'Thank you for writing, we are on it.');

      // The settings page itself is not the Agent's.
      await openConsolePage(a, service, '/settings', 'Not here');
    } finally {
      await manager.close();
      await agent.close();
    }
  }, 180_000);

  test('a connection with an inbox is not offered again, a refused inbox shows the reason the API gives, an API channel shows its secret, and deleting asks once more', async () => {
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, setup.manager.email, undefined, '/settings/inboxes');
      await page.getByRole('button', { name: 'New inbox' }).click();
      const form = page.getByRole('form', { name: 'New inbox' });
      // The bound connection is not offered; the only channel left is the API's.
      await form.getByLabel('Name').fill('Support again');
      expect(await form.locator(`option[value="${setup.connectionId}"]`).count()).toBe(0);
      await form.getByLabel('Time zone').fill('Not/AZone');
      await form.getByRole('button', { name: 'Create inbox' }).click();
      await form.getByRole('alert').filter({ hasText: 'No inbox was created.' }).waitFor();
      expect(((await asManager('GET', '/v3/helpdesk/inboxes')).body.data as any[]).map((i) => i.name)).toEqual(['Support']);

      // Corrected, it becomes an API channel; its inbound secret shows once, and is the API's.
      await form.getByLabel('Time zone').fill('UTC');
      await form.getByRole('button', { name: 'Create inbox' }).click();
      await page.getByRole('heading', { name: 'Inbox "Support again" created' }).waitFor();
      const apiInbox = ((await asManager('GET', '/v3/helpdesk/inboxes')).body.data as any[]).find((i) => i.name === 'Support again');
      expect(apiInbox).toMatchObject({ channelType: 'API', connectionId: null, timezone: 'UTC' });
      expect(await page.getByLabel('Inbound secret').inputValue()).toBe(apiInbox.channelConfig.hmacToken);
      await shot(page, 'inbox-api-created');

      // Deleting asks once more, then the API no longer has it.
      await page.getByRole('navigation', { name: 'Helpdesk settings sections' }).getByRole('link', { name: 'Macros' }).click();
      const macroRow = page.getByRole('row', { name: 'Macro Refund request' });
      await macroRow.getByRole('button', { name: 'Delete' }).click();
      await macroRow.getByRole('button', { name: 'Delete it?' }).click();
      await page.getByText('No macros yet').waitFor();
      expect((await asManager('GET', '/v3/helpdesk/macros')).body.total).toBe(0);
      await page.getByRole('navigation', { name: 'Helpdesk settings sections' }).getByRole('link', { name: 'Labels' }).click();
      const labelRow = page.getByRole('row', { name: 'Label refund' });
      await labelRow.getByRole('button', { name: 'Delete' }).click();
      await labelRow.getByRole('button', { name: 'Take it off every conversation?' }).click();
      await page.getByText('No labels yet').waitFor();
      expect((await asManager('GET', '/v3/helpdesk/labels')).body.total).toBe(0);
    });
  }, 60_000);

  test('on a plan without the helpdesk, a write shows the service\'s refusal (403 HELPDESK_PLAN_REQUIRED) and changes nothing', async () => {
    const free = await service.bootstrap();
    await givePassword(service, free.userId);
    const email = (await baseStores(service.runtime.ctx.db).identity.getUser(free.userId))!.email;
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, email, undefined, '/settings/canned-responses');
      await page.getByText('No canned responses yet').waitFor();
      const form = page.getByRole('form', { name: 'Create canned response' });
      await form.getByLabel('Short code').fill('hello');
      await form.getByLabel('Content').fill('Hello!');
      await form.getByRole('button', { name: 'Create canned response' }).click();
      await form.getByRole('alert').filter({ hasText: 'HELPDESK_PLAN_REQUIRED' }).waitFor();
      expect(await form.getByRole('alert').textContent()).toContain('The helpdesk is available on the PRO plan');
      await shot(page, 'plan-refusal');
    });
    expect((await service.call('GET', '/v3/helpdesk/canned-responses', { apikey: free.token })).body.total).toBe(0);
  }, 60_000);
});
