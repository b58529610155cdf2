import { beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { givePassword, signInToConsole, useScreenshots, waitForValue } from '../support/console.ts';
import { conversationFromContact, useHelpdeskWorkspace } from '../support/helpdesk.ts';
import { useTestService } from '../support/service.ts';
import { eventually, waitUntil } from '../support/wait.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Issue 23, the console's Contacts page in Chromium: a Manager searches the contacts (a page at a
 * time), edits an attribute, adds a note, merges two contacts and sees the other's conversation
 * move, deletes a contact after a dialog naming what goes with it, and imports a CSV whose bad
 * row is reported with its line; an Agent works the same contacts without Delete, Merge or Import.
 */
const service = useTestService();
const browser = useBrowser();
const screenshot = useScreenshots('contacts');
const hd = useHelpdeskWorkspace(service, { connection: 'Contacts line', inbox: 'Contacts inbox', manualAssignment: true });

const PHONES = { alice: '5511955550001', alicia: '5511955550002', carlos: '5511955550003' };
const setup = {} as {
  manager: { userId: string; email: string; token: string };
  conversations: Record<keyof typeof PHONES, { id: string; contactId: string }>;
};
const api = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: hd.owner.token, body });

beforeAll(async () => {
  setup.manager = await memberWithToken(service, hd.owner, 'MANAGER');
  await givePassword(service, setup.manager.userId);
  await givePassword(service, hd.agent.userId);
  setup.conversations = {} as typeof setup.conversations;
  const names = { alice: 'Alice Contact', alicia: 'Alicia Duplicate', carlos: 'Carlos Leaving' };
  for (const [key, phone] of Object.entries(PHONES) as Array<[keyof typeof PHONES, string]>) {
    const conversation = await conversationFromContact(service, hd.owner.token, hd.connectionId, phone, { text: `hello from ${key}` });
    expect((await api('PATCH', `/v3/helpdesk/contacts/${conversation.contactId}`, { name: names[key] })).status).toBe(200);
    setup.conversations[key] = conversation;
  }
  // Enough contacts for a second page (25 a page).
  for (let i = 0; i < 27; i++) expect((await api('POST', '/v3/helpdesk/contacts', { name: `Bulk ${String(i).padStart(2, '0')}`, email: `bulk${i}@example.com` })).status).toBe(201);
}, HOOK_TIMEOUT);

const rows = (page: Page) => page.locator('table tbody tr');
const contactRow = (page: Page, name: string) => rows(page).filter({ hasText: name });
const search = (page: Page) => page.getByLabel('Search contacts');

async function openContact(page: Page, name: string): Promise<void> {
  await search(page).fill(name);
  await contactRow(page, name).getByRole('link', { name }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

describe('a Manager looks after contacts in the console', () => {
  test('search and load more, edit an attribute, a note, merge, delete with a confirm, import a CSV with a bad row', async () => {
    const { page, close } = await browser.openPage({ viewport: { width: 1280, height: 860 } });
    try {
      await signInToConsole(page, service, setup.manager.email, undefined, '/contacts');
      await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
      // 30 contacts: a page of 25, then the rest.
      await waitUntil(() => rows(page).count(), (n) => n === 25, { what: 'a first page of 25 rows' });
      await page.getByText('Showing 25 of 30 contacts').waitFor();
      await page.getByRole('button', { name: 'Load more' }).click();
      await page.getByText('Showing 30 of 30 contacts').waitFor();
      expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
      await screenshot(page, '01-list');

      // Search by part of a name; the search is kept in the address.
      await search(page).fill('ali');
      await waitUntil(
        () => rows(page).locator('td:first-child').allTextContents(),
        (names) => JSON.stringify(names) === JSON.stringify(['Alice Contact', 'Alicia Duplicate']),
        { what: 'the two matches of "ali"' },
      );
      await waitUntil(() => page.evaluate(() => location.hash), (hash) => hash === '#/contacts?s=ali', { what: 'the search in the address' });
      await search(page).fill('zzz-nobody');
      await page.getByText('No contact matches “zzz-nobody”').waitFor();

      // Alice: an attribute, a note, and her conversation linking to the inbox.
      await openContact(page, 'Alice Contact');
      await page.getByRole('button', { name: 'Edit contact' }).click();
      await page.getByRole('button', { name: 'Add attribute' }).click();
      await page.getByLabel('Attribute 1 name').fill('tier');
      await page.getByLabel('Attribute 1 value').fill('gold');
      await page.getByRole('button', { name: 'Save contact' }).click();
      await page.locator('.facts dd', { hasText: 'gold' }).waitFor();
      const alice = setup.conversations.alice.contactId;
      await eventually(async () => (await api('GET', `/v3/helpdesk/contacts/${alice}`)).body.customAttributes.tier === 'gold' || undefined, 'the attribute saved');
      await page.getByLabel('New note about the contact').fill('Prefers mornings');
      await page.getByRole('button', { name: 'Save note' }).click();
      await page.locator('.contact-notes li', { hasText: 'Prefers mornings' }).waitFor();
      const conversations = page.getByRole('region', { name: /^Conversations/ });
      await conversations.getByRole('heading', { name: 'Conversations (1 conversation)' }).waitFor();
      expect(await conversations.getByRole('link').getAttribute('href')).toBe(`#/inbox/${setup.conversations.alice.id}?view=all&status=`);
      await screenshot(page, '02-detail');

      // Merge Alicia into Alice: the dialog says who stays and what moves; her conversation then shows here.
      await page.getByRole('button', { name: 'Merge…' }).click();
      const merge = page.getByRole('dialog', { name: 'Merge Alice Contact with another contact' });
      await merge.getByLabel('Find the other contact').fill('Alicia');
      await merge.getByRole('radio', { name: /Alicia Duplicate/ }).check();
      await merge.getByText('Alice Contact stays; Alicia Duplicate is deleted after its records move:').waitFor();
      await merge.getByText(/its 1 conversation, its notes and its identities in API inboxes move to Alice Contact/).waitFor();
      await screenshot(page, '03-merge');
      await merge.getByRole('button', { name: 'Merge Alicia Duplicate into Alice Contact' }).click();
      await merge.waitFor({ state: 'hidden' });
      await conversations.getByRole('heading', { name: 'Conversations (2 conversations)' }).waitFor();
      await conversations.getByRole('link', { name: `Conversation #${(await api('GET', `/v3/helpdesk/conversations/${setup.conversations.alicia.id}`)).body.displayId}` }).waitFor();
      expect((await api('GET', `/v3/helpdesk/contacts/${setup.conversations.alicia.contactId}`)).status).toBe(404);
      expect((await api('GET', `/v3/helpdesk/conversations/${setup.conversations.alicia.id}`)).body.contactId).toBe(alice);

      // A conversation opens in the inbox.
      await conversations.getByRole('link').first().click();
      await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
      expect(await page.evaluate(() => location.hash)).toMatch(/^#\/inbox\/[0-9a-f-]+\?view=all&status=$/);

      // Delete Carlos: the dialog names what goes; the contact and its conversation are gone.
      await page.goto(`${service.runtime.ctx.config.publicUrl}/#/contacts`);
      await openContact(page, 'Carlos Leaving');
      await page.getByRole('heading', { name: 'Conversations (1 conversation)' }).waitFor();
      await page.getByRole('button', { name: 'Delete…' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete Carlos Leaving?' });
      await confirm.getByText('its 1 conversation, with all their messages and files;').waitFor();
      await screenshot(page, '04-delete');
      await confirm.getByRole('button', { name: 'Delete contact and conversations' }).click();
      await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
      expect((await api('GET', `/v3/helpdesk/contacts/${setup.conversations.carlos.contactId}`)).status).toBe(404);
      expect((await api('GET', `/v3/helpdesk/conversations/${setup.conversations.carlos.id}`)).status).toBe(404);

      // Import: a file chosen fills the box; one row new, one updating Alice by phone, one bad.
      await page.getByRole('link', { name: 'Import CSV' }).click();
      await page.getByRole('heading', { level: 1, name: 'Import contacts' }).waitFor();
      const csv = ['name,phone,email,city', 'Nina New,+55 11 95555-0009,nina@example.com,Recife', `Alice Renamed,${PHONES.alice},,Olinda`, 'Bad Phone,call me,,'].join('\n');
      await page.getByLabel('Upload a file').setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await waitForValue(page.getByLabel('Or paste the CSV'), 'Nina New');
      await page.getByText('customers.csv: 3 rows under the header').waitFor();
      await page.getByRole('button', { name: 'Import contacts' }).click();
      const result = page.getByRole('region', { name: 'Result' });
      await result.waitFor();
      expect(await result.locator('.import-counts dd').allTextContents()).toEqual(['1', '1', '1']);
      const skipped = result.locator('tbody tr');
      expect(await skipped.count()).toBe(1);
      expect(await skipped.locator('td').first().textContent()).toBe('4');
      expect(await skipped.locator('td').nth(1).textContent()).toMatch(/phone must be a phone number/);
      await screenshot(page, '05-import');
      const renamed = (await api('GET', `/v3/helpdesk/contacts/${alice}`)).body;
      expect(renamed).toMatchObject({ name: 'Alice Renamed', customAttributes: { tier: 'gold', city: 'Olinda' } });
    } finally {
      await close();
    }
  });
});

describe('an Agent', () => {
  test('sees and edits contacts, but no Delete, Merge or Import', async () => {
    const { page, close } = await browser.openPage({ viewport: { width: 1280, height: 860 } });
    try {
      await signInToConsole(page, service, hd.agent.email, undefined, '/contacts');
      // The rest at phone width.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
      await waitUntil(() => rows(page).count(), (n) => n > 0, { what: 'the list' });
      expect(await page.getByRole('link', { name: 'Import CSV' }).count()).toBe(0);
      await openContact(page, 'Nina New');
      await page.getByRole('button', { name: 'Edit contact' }).waitFor();
      await page.getByLabel('New note about the contact').waitFor();
      await page.getByRole('region', { name: 'Conversations' }).getByText('No conversations').waitFor();
      expect(await page.getByRole('button', { name: 'Merge…' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Delete…' }).count()).toBe(0);
      await screenshot(page, '06-agent');
      await page.goto(`${service.runtime.ctx.config.publicUrl}/#/contacts/import`);
      await page.getByText('Importing contacts is for Managers, Admins and the Owner.').waitFor();
      expect(await page.getByRole('button', { name: 'Import contacts' }).count()).toBe(0);
    } finally {
      await close();
    }
  });
});
