import { beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { consoleUrl, givePassword, signInToConsole, useScreenshots } from '../support/console.ts';
import { useOwner, useTestService } from '../support/service.ts';
import { HOOK_TIMEOUT, useMember } from './helpers.ts';

/**
 * Issue 22 section 3, the console's Connections and Messages pages in Chromium against a real
 * service: an Owner creates and connects a sandbox connection, sends a test message, follows it
 * in Messages as the contact simulator reports it delivered and read, sees the contact's answer
 * arrive without a reload and replies; the API holds the same. An Agent has no Connections page.
 */
const service = useTestService();
const OWNER_EMAIL = 'conn-owner@example.com';
const owner = useOwner(service, { email: OWNER_EMAIL });
const agent = useMember(service, owner, 'AGENT');
const browser = useBrowser();
const screenshot = useScreenshots('connections');
/** A full-page screenshot from the top, so the sticky bar stays at the top of the picture. */
async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, name);
}

const CONTACT = '+5511988880001';
const CONTACT_JID = '5511988880001@s.whatsapp.net';

beforeAll(async () => {
  await givePassword(service, owner.userId);
  await givePassword(service, agent.userId);
}, HOOK_TIMEOUT);

const api = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });

/** The bubble of a message in the open chat, by its id. */
const bubble = (page: Page, id: string) => page.locator(`#chat-messages [data-message-id="${id}"]`);

describe('the Connections and Messages pages', () => {
  test('an Owner creates, connects and tries a sandbox connection, and follows the chat live', async () => {
    await browser.withPage(async (page, context) => {
      await signInToConsole(page, service, OWNER_EMAIL, undefined, '/connections');
      await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
      await page.getByText('No connections yet').waitFor();
      await shot(page, 'connections-empty');

      // Create: a sandbox connection by default.
      await page.getByRole('button', { name: 'New connection' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Support line');
      expect(await page.getByLabel('Driver').inputValue()).toBe('sandbox');
      await shot(page, 'connections-create');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Support line' }).waitFor();
      const connectionId = decodeURIComponent(page.url().split('#/connections/')[1]!);
      await page.locator('#connection-status').getByText('DISCONNECTED').waitFor();
      const listed = await api('GET', '/v3/connections');
      expect(listed.body).toHaveLength(1);
      expect(listed.body[0]).toMatchObject({ id: connectionId, name: 'Support line', driver: 'sandbox', status: 'DISCONNECTED' });

      // Connect: the status moves to CONNECTED with the sandbox's phone number.
      await page.getByRole('button', { name: 'Connect', exact: true }).click();
      await page.locator('#connection-status').getByText('CONNECTED', { exact: true }).waitFor();
      const connected = await api('GET', `/v3/connections/${connectionId}`);
      expect(connected.body.status).toBe('CONNECTED');
      await page.getByText(`+${connected.body.phoneNumber}`).first().waitFor();
      await shot(page, 'connection-connected');

      // Rename through PATCH.
      await page.getByLabel('Connection name').fill('Support desk');
      await page.getByRole('button', { name: 'Rename' }).click();
      await page.getByRole('heading', { level: 1, name: 'Support desk' }).waitFor();
      expect((await api('GET', `/v3/connections/${connectionId}`)).body.name).toBe('Support desk');

      // The FREE plan allows one connection: the second is refused with the plan's words.
      await page.goto(consoleUrl(service, '/connections'));
      await page.getByRole('link', { name: 'Support desk' }).waitFor();
      await page.getByRole('row', { name: /Support desk/ }).getByText('CONNECTED').waitFor();
      await shot(page, 'connections-list');
      await page.getByRole('button', { name: 'New connection' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Second line');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await page.getByRole('alert').getByText(/Your plan allows 1 connection/).waitFor();
      await shot(page, 'connections-plan-limit');
      expect((await api('GET', '/v3/connections')).body).toHaveLength(1);
      await page.keyboard.press('Escape');

      // A test message from the connection's page: answered at once with its id and status.
      await page.getByRole('link', { name: 'Support desk' }).click();
      await page.getByLabel('To (phone number)').fill(CONTACT);
      await page.getByLabel('Text', { exact: true }).fill('Your order has shipped');
      await page.getByRole('button', { name: 'Send test message' }).click();
      const answer = page.locator('#test-message-answer');
      await answer.getByText('PENDING').first().waitFor();
      const messageId = (await answer.locator('.mono').textContent())!;
      const stored = await api('GET', `/v3/connections/${connectionId}/chats/messages/${messageId}`);
      expect(stored.body).toMatchObject({ direction: 'outbound', remoteJid: CONTACT_JID, content: { kind: 'text', text: 'Your order has shipped' } });
      // The simulator answers as the number the test message went to.
      expect(await page.getByLabel('Contact’s number').inputValue()).toBe(CONTACT);
      // The answer's status moves on by itself.
      await answer.getByText('Status now:').getByText('SENT').waitFor();
      await shot(page, 'connection-test-message');

      // Its chat in Messages, in a second tab kept open: the status reaches SENT.
      const chatLink = await page.getByRole('link', { name: 'Open its chat in Messages' }).getAttribute('href');
      expect(chatLink).toBe(`#/messages/${connectionId}/${encodeURIComponent(CONTACT_JID)}`);
      const chat = await context.newPage();
      await chat.goto(consoleUrl(service, chatLink!.slice(1)));
      await chat.getByRole('heading', { level: 1, name: 'Messages' }).waitFor();
      await bubble(chat, messageId).getByText('SENT').waitFor();
      expect((await api('GET', `/v3/connections/${connectionId}/chats/messages/${messageId}`)).body.status).toBe('SENT');
      await shot(chat, 'messages-chat-sent');

      // The contact's phone reports it delivered, then read: the open chat follows without a reload.
      const receipt = page.getByRole('listitem', { name: 'Sent message Your order has shipped' });
      await receipt.getByText('SENT').waitFor();
      await receipt.getByRole('button', { name: 'Delivered' }).click();
      await bubble(chat, messageId).getByText('DELIVERED').waitFor();
      expect((await api('GET', `/v3/connections/${connectionId}/chats/messages/${messageId}`)).body.status).toBe('DELIVERED');
      await receipt.getByRole('button', { name: 'Read' }).click();
      await bubble(chat, messageId).getByText('READ').waitFor();
      expect((await api('GET', `/v3/connections/${connectionId}/chats/messages/${messageId}`)).body.status).toBe('READ');

      // The contact writes: the message appears in the open chat, still without a reload.
      await page.getByLabel('Contact’s name').fill('Ana Souza');
      await page.getByLabel('Message from the contact').fill('Thanks! When will it arrive?');
      await page.getByRole('button', { name: 'Write as the contact' }).click();
      await page.getByText('Delivered to the connection.').waitFor();
      await shot(page, 'connection-simulator');
      await chat.getByRole('listitem', { name: 'Received: Thanks! When will it arrive?' }).waitFor();
      await chat.getByRole('heading', { level: 2, name: /Ana Souza/ }).waitFor();

      // A reply from the composer.
      await chat.getByLabel('Reply').fill('Tomorrow morning.');
      await chat.getByRole('button', { name: 'Send', exact: true }).click();
      await chat.getByRole('listitem', { name: 'Sent: Tomorrow morning.' }).getByText('SENT').waitFor();
      await shot(chat, 'messages-chat');

      const history = await api('GET', `/v3/connections/${connectionId}/chats/messages?chat=${CONTACT_JID}`);
      expect(history.body.map((m: any) => [m.direction, m.status])).toEqual([
        ['outbound', 'READ'],
        ['inbound', 'RECEIVED'],
        ['outbound', 'SENT'],
      ]);
      expect(history.body[2].content).toEqual({ kind: 'text', text: 'Tomorrow morning.' });

      // The connection picker and the chat list.
      await chat.goto(consoleUrl(service, '/messages'));
      await chat.getByRole('heading', { level: 2, name: 'Pick a connection' }).waitFor();
      await shot(chat, 'messages-pick');
      await chat.getByRole('link', { name: 'Support desk' }).click();
      await chat.getByRole('list', { name: 'Chats' }).getByText('Ana Souza').waitFor();
      await chat.getByText('No chat open').waitFor();
      await shot(chat, 'messages-chats');

      // Disconnect, then delete (a second click confirms): the list is empty again.
      await page.getByRole('button', { name: 'Disconnect' }).click();
      await page.locator('#connection-status').getByText('DISCONNECTED').waitFor();
      expect((await api('GET', `/v3/connections/${connectionId}`)).body.status).toBe('DISCONNECTED');
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('button', { name: 'Delete: confirm' }).click();
      await page.getByText('No connections yet').waitFor();
      expect((await api('GET', '/v3/connections')).body).toHaveLength(0);
    });
  });

  test('pairing: the QR code follows its rotation live, beside the pairing code, and goes once connected', async () => {
    // No phone pairs here: the row is moved as a QR driver moves it while a phone is awaited.
    const created = await api('POST', '/v3/connections', { name: 'Pairing line' });
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    const driverSets = (fields: { status: 'QR_PENDING' | 'CONNECTED'; qr: string | null; pairing_code: string | null }) =>
      service.runtime.ctx.db.updateTable('connections').set({ ...fields, updated_at: new Date() }).where('id', '=', id).execute();
    try {
      await driverSets({ status: 'QR_PENDING', qr: 'first-qr-payload', pairing_code: 'ABCD1234' });
      await browser.withPage(async (page) => {
        await signInToConsole(page, service, OWNER_EMAIL, undefined, `/connections/${id}`);
        const qr = page.getByRole('img', { name: /QR code to scan/ });
        await qr.waitFor();
        const first = await qr.getAttribute('src');
        expect(first).toStartWith('data:image/png;base64,');
        await page.getByText('ABCD1234').waitFor();
        await shot(page, 'pairing');

        await driverSets({ status: 'QR_PENDING', qr: 'second-qr-payload', pairing_code: 'WXYZ9876' });
        await page.getByText('WXYZ9876').waitFor();
        expect(await qr.getAttribute('src')).not.toBe(first);

        await driverSets({ status: 'CONNECTED', qr: null, pairing_code: null });
        await page.locator('#connection-status').getByText('CONNECTED', { exact: true }).waitFor();
        expect(await page.getByRole('img', { name: /QR code to scan/ }).count()).toBe(0);
      });
    } finally {
      await api('DELETE', `/v3/connections/${id}`);
    }
  });

  test('an Agent does not see Connections in the menu', async () => {
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, agent.email);
      const menu = page.getByRole('navigation', { name: 'Console' });
      await menu.getByRole('link', { name: 'Overview' }).waitFor();
      expect(await menu.getByRole('link', { name: 'Connections' }).count()).toBe(0);
      expect(await menu.getByRole('link', { name: 'Messages' }).count()).toBe(0);
      await shot(page, 'agent-menu');
    });
  });
});
