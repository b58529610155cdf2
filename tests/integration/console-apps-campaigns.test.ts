import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { useBrowser } from '../support/browser.ts';
import { givePassword, openConsolePage, signInToConsole, useScreenshots, waitForValue } from '../support/console.ts';
import { useGraphSimulator } from '../support/graph-simulator.ts';
import { teachFlows } from '../support/graph-simulator-flows.ts';
import { teachTemplates } from '../support/graph-simulator-templates.ts';
import { connectedConnection } from '../support/helpdesk.ts';
import { officialConnection } from '../support/official-connection.ts';
import { useOwner, useTestService } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 22, section 3: the console's Campaigns, OAuth apps and Templates & Flows pages in
 * Chromium against the real service. An Owner builds a campaign from a pasted CSV (a bad row
 * is pointed out and left out), launches it and watches it reach 3 sent without a reload; a
 * paced campaign's buttons follow its state through pause, resume and cancel; an OAuth app is
 * registered with its secret shown once; Templates explains that a sandbox-only workspace has
 * none, then lists and creates templates and Flows of an official number (Graph simulator).
 */

const sim = useGraphSimulator();
beforeAll(() => {
  teachTemplates(sim);
  teachFlows(sim);
});
const service = useTestService(() => ({ env: { CLOUD_API_BASE_URL: sim.baseUrl } }));
const owner = useOwner(service, { plan: 'PRO' });
const browser = useBrowser();
const screenshot = useScreenshots('apps-campaigns');
/** Each page from its top: a click far down leaves the page scrolled. */
const shot = async (page: Page, name: string) => {
  await page.evaluate(() => scrollTo(0, 0));
  await screenshot(page, name);
};

let page: Page;
let close: () => Promise<void>;
let connectionId: string;

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });

beforeAll(async () => {
  await givePassword(service, owner.userId);
  const email = (await baseStores(service.runtime.ctx.db).identity.getUser(owner.userId))!.email;
  connectionId = await connectedConnection(service, owner.token, 'Sandbox line');
  ({ page, close } = await browser.openPage());
  await signInToConsole(page, service, email);
}, HOOK_TIMEOUT);

afterAll(async () => {
  await close?.();
});

describe('Templates & Flows', () => {
  test('a sandbox-only workspace sees why there are no templates', async () => {
    await openConsolePage(page, service, '/templates', 'Templates & Flows');
    await page.getByText('Templates need an official (cloud-api) number').waitFor();
    expect(await page.getByRole('link', { name: 'Add an official connection' }).getAttribute('href')).toBe('#/connections');
    await shot(page, 'templates-empty');
  });
});

describe('Campaigns', () => {
  test('a campaign from a pasted CSV: a bad row is pointed out, the draft launches and reaches 3 sent live', async () => {
    await openConsolePage(page, service, '/campaigns', 'Campaigns');
    await page.getByText('No campaigns yet').waitFor();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByRole('heading', { level: 1, name: 'New campaign' }).waitFor();

    await page.getByLabel('Campaign name').fill('Spring sale');
    await page.getByLabel('Message text').fill('Hi {{name|there}}, spring sale today!');
    await page.getByLabel('Pace', { exact: true }).selectOption('fastest');
    // A file is read in the browser into the CSV box.
    await page.getByLabel('Or upload a CSV file').setInputFiles({ name: 'list.csv', mimeType: 'text/csv', buffer: Buffer.from('number;first name\n+44 7700 900001;Zoe\n') });
    // The browser reads the file asynchronously: wait for it rather than read once.
    await waitForValue(page.getByLabel('Recipients CSV'), '+44 7700 900001;Zoe');
    await page.locator('#audience-summary', { hasText: '1 recipient ready. Phone column: number; variables: first name.' }).waitFor();
    await page.getByLabel('Recipients CSV').fill('phone,name\n+1 555 010 0001,Ana\n+15550100002,Ben\nnot-a-number,Cy\n+15550100003,\n+15550100002,Ben again');
    await page.locator('#audience-summary', { hasText: '3 recipients ready, 1 repeated number kept once, 1 row with a problem left out' }).waitFor();
    await page.getByText('Line 4: “not-a-number” is not a phone number').waitFor();
    await shot(page, 'campaign-new');

    await page.getByRole('button', { name: 'Create draft' }).click();
    await page.getByRole('heading', { level: 1, name: 'Spring sale' }).waitFor();
    const id = page.url().split('/').pop()!;
    const draft = (await call('GET', `/v3/campaigns/${id}`)).body;
    expect(draft).toMatchObject({ name: 'Spring sale', status: 'DRAFT', connectionId, message: { text: 'Hi {{name|there}}, spring sale today!' }, pace: { messagesPerMinute: null } });
    expect(draft.progress.total).toBe(3);

    await page.getByRole('button', { name: 'Launch' }).click();
    // The page polls: the counts move to 3 sent with no reload.
    await page.locator('#count-sent dd', { hasText: '3' }).waitFor({ timeout: 20_000 });
    await page.locator('#count-pending dd', { hasText: '0' }).waitFor();
    await page.locator('.badge', { hasText: 'COMPLETED' }).waitFor({ timeout: 10_000 });
    const done = (await call('GET', `/v3/campaigns/${id}`)).body;
    expect(done.status).toBe('COMPLETED');
    expect(done.progress).toMatchObject({ total: 3, sent: 3, failed: 0, queued: 0 });
    const recipients = (await call('GET', `/v3/campaigns/${id}/recipients`)).body.data;
    expect(recipients.map((r: { phone: string }) => r.phone)).toEqual(['15550100001', '15550100002', '15550100003']);
    await expect(page.locator('table tbody tr').count()).resolves.toBe(3);
    // A finished campaign offers only deletion.
    for (const name of ['Launch', 'Pause', 'Resume', 'Cancel campaign']) expect(await page.getByRole('button', { name }).count()).toBe(0);
    await page.getByRole('button', { name: 'Delete' }).waitFor();
    await shot(page, 'campaign-completed');
  }, 60_000);

  test("a paced campaign's buttons follow its state: pause, resume, cancel", async () => {
    const created = await call('POST', '/v3/campaigns', {
      name: 'Slow drip',
      connectionId,
      message: { text: 'One a minute' },
      audience: { numbers: ['+15550200001', '+15550200002', '+15550200003'] },
      pace: { messagesPerMinute: 1, jitterSeconds: 0 },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const status = async () => (await call('GET', `/v3/campaigns/${id}`)).body.status;
    const buttons = async () => {
      const names = [];
      for (const name of ['Launch', 'Pause', 'Resume', 'Cancel campaign', 'Delete']) if ((await page.getByRole('button', { name, exact: true }).count()) > 0) names.push(name);
      return names;
    };

    await openConsolePage(page, service, `/campaigns/${id}`, 'Slow drip');
    await page.locator('.badge', { hasText: 'RUNNING' }).waitFor();
    expect(await buttons()).toEqual(['Pause', 'Cancel campaign']);

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('.badge', { hasText: 'PAUSED' }).waitFor();
    expect(await status()).toBe('PAUSED');
    expect(await buttons()).toEqual(['Resume', 'Cancel campaign']);

    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('.badge', { hasText: 'RUNNING' }).waitFor();
    expect(await status()).toBe('RUNNING');
    expect(await buttons()).toEqual(['Pause', 'Cancel campaign']);

    // Cancelling asks once more.
    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    await page.getByRole('button', { name: 'Cancel for good?' }).click();
    await page.locator('.badge', { hasText: 'CANCELLED' }).first().waitFor();
    const cancelled = (await call('GET', `/v3/campaigns/${id}`)).body;
    expect(cancelled.status).toBe('CANCELLED');
    expect(cancelled.progress.cancelled).toBeGreaterThan(0);
    expect(await buttons()).toEqual(['Delete']);

    await openConsolePage(page, service, '/campaigns', 'Campaigns');
    await page.getByRole('link', { name: 'Slow drip' }).waitFor();
    await page.getByRole('row', { name: /Spring sale/ }).getByText('3 of 3 sent').waitFor();
    await shot(page, 'campaigns-list');
  }, 60_000);
});

describe('OAuth apps', () => {
  test('an app registered in the console shows its secret once and is in GET /v3/oauth/clients; its name can change', async () => {
    await openConsolePage(page, service, '/oauth', 'OAuth apps');
    await page.getByText('No OAuth apps yet').waitFor();
    await page.getByRole('button', { name: 'New app' }).click();
    const dialog = page.getByRole('dialog', { name: 'New OAuth app' });
    await dialog.getByLabel('App name').fill('Reporting bot');
    await dialog.getByLabel('Redirect URIs').fill('https://bot.example.com/callback');
    await dialog.getByLabel('messages:read').check();
    await dialog.getByLabel('Require messages:read').check();
    await shot(page, 'oauth-new-app');
    await dialog.getByRole('button', { name: 'Create app' }).click();

    await page.getByRole('heading', { name: 'App “Reporting bot” created' }).waitFor();
    const secret = await page.getByLabel('Client secret').inputValue();
    expect(secret.length).toBeGreaterThan(20);
    const clientId = await page.getByLabel('Client ID').inputValue();
    const apps = (await call('GET', '/v3/oauth/clients')).body;
    expect(apps).toContainEqual(
      expect.objectContaining({
        client_id: clientId,
        client_name: 'Reporting bot',
        redirect_uris: ['https://bot.example.com/callback'],
        scope: 'profile messages:read',
        required_scopes: ['messages:read'],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
    );
    expect(apps[0].client_secret).toBeUndefined();
    await page.getByRole('cell', { name: clientId }).waitFor();
    await shot(page, 'oauth-created');

    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Edit Reporting bot' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Reporting bot' });
    await edit.getByLabel('App name').fill('Reporting bot v2');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Reporting bot v2').waitFor();
    expect((await call('GET', `/v3/oauth/clients/${clientId}`)).body.client_name).toBe('Reporting bot v2');
  });
});

describe('Templates & Flows of an official number', () => {
  test('lists and creates templates, shows the platform’s Flow findings and provisions the Flow key', async () => {
    const official = await officialConnection(service, sim, owner.token);
    const base = `/v3/connections/${official.connectionId}/templates`;
    expect(
      (await call('POST', base, { name: 'order_ready', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Your order {{1}} is ready.', example: { body_text: [['42']] } }] })).status,
    ).toBe(201);

    await openConsolePage(page, service, '/templates', 'Templates & Flows');
    await page.getByRole('cell', { name: 'order_ready' }).waitFor();
    await page.getByText('Your order {{1}} is ready.').waitFor();

    // A gap in the numbering: the service's message shows under the form.
    await page.getByLabel('Template name').fill('welcome_note');
    await page.getByLabel('Body').fill('Hi {{1}}, meet {{3}}.');
    await page.getByLabel('Example for {{1}}').fill('Ana');
    await page.getByLabel('Example for {{3}}').fill('Ben');
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.getByRole('alert').filter({ hasText: 'without gaps' }).waitFor();

    await page.getByLabel('Body').fill('Hi {{1}}, welcome aboard.');
    await page.getByLabel('Quick-reply buttons (optional)').fill('Thanks\nStop');
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.getByText('submitted for review').waitFor();
    await page.getByRole('cell', { name: 'welcome_note' }).waitFor();
    const stored = (await call('GET', base)).body.data.find((t: { name: string }) => t.name === 'welcome_note');
    expect(stored.components).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'BODY', text: 'Hi {{1}}, welcome aboard.', example: { body_text: [['Ana']] } }),
        expect.objectContaining({ type: 'BUTTONS', buttons: [expect.objectContaining({ type: 'QUICK_REPLY', text: 'Thanks' }), expect.objectContaining({ type: 'QUICK_REPLY', text: 'Stop' })] }),
      ]),
    );

    await page.getByLabel('Flow JSON').fill(JSON.stringify({ version: '6.0', screens: [{ id: 'START', layout: { type: 'SingleColumnLayout', children: [] } }] }));
    await page.getByRole('button', { name: 'Create Flow' }).click();
    await page.getByText('At least one screen must be terminal.').waitFor();

    await page.getByRole('button', { name: 'Provision the key' }).click();
    await page.locator('.badge', { hasText: /^REGISTERED$/ }).waitFor();
    expect((await call('GET', `/v3/connections/${official.connectionId}/flows-encryption`)).body.registered).toBe(true);
    await shot(page, 'templates-official');
  }, 60_000);
});
