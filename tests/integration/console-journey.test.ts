import { describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { useBrowser } from '../support/browser.ts';
import { useScreenshots } from '../support/console.ts';
import { useInstallation } from '../support/installation.ts';
import { useReceiver } from '../support/webhook-receiver.ts';
import { waitFor } from '../support/wait.ts';

/**
 * Issue 22, "Tests": the whole path a new installation takes, in Chromium, against the service as
 * a user starts it (`bun run start` on its own data directory or Postgres database):
 * the printed set-up link makes the Owner; the Owner creates a sandbox connection and sees it
 * connect, sends a message and sees it reach SENT, writes back as the contact and sees the reply,
 * creates a webhook and sees a delivery in its log, invites an Agent; the Agent accepts, signs in,
 * and the API and websocket accept their session; removing the Agent ends it at once.
 * Screenshots of every step at laptop and phone width go to the folder printed in the output.
 */
const installation = useInstallation('switchboard-console-journey-');
const browser = useBrowser();
const receiver = useReceiver();
const shot = useScreenshots('journey');

const OWNER = { email: 'founder@example.com', password: 'the founder password', workspace: 'Acme Support' };
const AGENT = { email: 'agent.ana@example.com', password: 'the agent password', name: 'Ana Agent' };
const CONTACT = '+5511988887777';

describe('from the set-up link to an Agent at work', () => {
  test('the whole path in the browser, with no curl', async () => {
    const server = await installation.startServer();
    try {
      const link = await waitFor(() => server.log().match(/(http:\/\/[^\s"]+\/setup\?token=[^\s"]+)/)?.[1], { what: 'the set-up link' });
      const origin = new URL(link).origin;
      const owner = await browser.openPage();
      const agent = await browser.openPage();
      try {
        await setUp(owner.page, link);
        await shot(owner.page, '01-overview');

        const connectionId = await createAndConnectSandbox(owner.page);
        await shot(owner.page, '02-connection-connected');

        await sendAndWatchSent(owner.page);
        await replyAsContact(owner.page, 'Hello, is anyone there?');
        await shot(owner.page, '03-messages');

        await createWebhookAndSeeDelivery(owner.page, connectionId);
        await shot(owner.page, '04-webhook-delivery');

        const invitation = await inviteAgent(owner.page);
        await shot(owner.page, '05-members-invited');

        await acceptAndSignIn(agent.page, invitation, origin);
        await shot(agent.page, '06-agent-console');

        // The API and the websocket accept the Agent's session; the roles matrix holds.
        const asAgent = await agent.page.evaluate(async () => {
          const session = await fetch('/v3/session');
          const tokens = await fetch('/v3/api-tokens');
          return { session: session.status, email: (await session.json()).user.email, tokens: tokens.status };
        });
        expect(asAgent).toEqual({ session: 200, email: AGENT.email, tokens: 403 });
        await agent.page.locator('.live.online').waitFor();

        // The Owner removes the Agent: their socket drops at once, and their next page load is the sign-in page.
        await removeAgent(owner.page);
        await agent.page.locator('.live.offline').waitFor();
        await agent.page.reload();
        await agent.page.waitForURL(/\/signin\?return_to=/);
        const after = await fetch(`${origin}/v3/session`, { headers: { cookie: await sessionCookie(agent.page) } });
        expect(after.status).toBe(401);
      } finally {
        await owner.close();
        await agent.close();
      }
    } finally {
      await server.stop();
    }
  }, 240_000);
});

async function setUp(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await page.getByLabel('Your email').fill(OWNER.email);
  await page.getByLabel('Password', { exact: true }).fill(OWNER.password);
  await page.getByLabel('Repeat the password').fill(OWNER.password);
  await page.getByLabel('Workspace name').fill(OWNER.workspace);
  await page.click('#set-up');
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  expect(await page.textContent('#signed-in-as')).toBe(OWNER.email);
}

async function createAndConnectSandbox(page: Page): Promise<string> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Connections' }).click();
  await page.getByRole('button', { name: 'New connection' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Front desk');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Front desk' }).waitFor();
  await page.getByRole('button', { name: 'Connect', exact: true }).click();
  await page.locator('#connection-status').getByText('CONNECTED', { exact: true }).waitFor();
  return new URL(page.url()).hash.split('/').pop()!;
}

async function sendAndWatchSent(page: Page): Promise<void> {
  await page.getByLabel('To (phone number)').fill(CONTACT);
  await page.getByLabel('Text', { exact: true }).fill('Welcome to Acme!');
  await page.getByRole('button', { name: 'Send test message' }).click();
  await page.locator('#test-message-answer').getByText('Status now:').getByText('SENT').waitFor();
}

async function replyAsContact(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message from the contact').fill(text);
  await page.getByRole('button', { name: 'Write as the contact' }).click();
  await page.getByText('Delivered to the connection.').waitFor();
  await page.getByRole('link', { name: 'Open its chat in Messages' }).click();
  await page.getByRole('heading', { level: 1, name: 'Messages' }).waitFor();
  await page.getByRole('listitem', { name: `Received: ${text}` }).waitFor();
  await page.getByRole('listitem', { name: 'Sent: Welcome to Acme!' }).getByText('SENT').waitFor();
}

async function createWebhookAndSeeDelivery(page: Page, connectionId: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('button', { name: 'New webhook' }).click();
  await page.getByRole('textbox', { name: 'URL' }).fill(receiver.url('/journey'));
  await page.getByRole('button', { name: 'Create webhook' }).click();
  // Exactly: the list's own heading, 'Webhooks', would match at once, before the webhook is created,
  // and its creation would then navigate back here from the next page.
  await page.getByRole('heading', { level: 1, name: 'Webhook', exact: true }).waitFor();
  // A new message from the contact: the webhook delivers it, and its log shows the attempt.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Connections' }).click();
  await page.getByRole('link', { name: 'Front desk' }).click();
  await page.getByRole('heading', { level: 1, name: 'Front desk' }).waitFor();
  expect(new URL(page.url()).hash).toBe(`#/connections/${connectionId}`);
  await page.getByLabel('Contact’s number').fill(CONTACT);
  await page.getByLabel('Message from the contact').fill('A second question');
  await page.getByRole('button', { name: 'Write as the contact' }).click();
  await page.getByText('Delivered to the connection.').waitFor();
  await receiver.waitFor('/journey', 1);
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('link', { name: receiver.url('/journey') }).click();
  const delivery = page.getByRole('listitem', { name: 'Delivery messages.upsert' }).first();
  await delivery.getByText('SUCCEEDED').waitFor({ timeout: 20_000 });
  await delivery.getByText('HTTP 200').first().waitFor();
}

async function inviteAgent(page: Page): Promise<string> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Members' }).click();
  await page.getByRole('textbox', { name: 'Email' }).fill(AGENT.email);
  await page.getByRole('button', { name: 'Send invitation' }).click();
  const link = await page.getByRole('textbox', { name: 'Invitation link' }).inputValue();
  expect(link).toContain('/invitations/accept?token=');
  return link;
}

async function acceptAndSignIn(page: Page, invitation: string, origin: string): Promise<void> {
  await page.goto(invitation);
  await page.fill('#password', AGENT.password);
  await page.fill('#password-confirm', AGENT.password);
  await page.fill('#name', AGENT.name);
  await page.click('#accept');
  await page.click('#continue');
  expect(await page.textContent('#signed-in-as')).toBe(AGENT.email);
  // Signed out and in again with the password they chose.
  await page.click('#sign-out');
  await page.waitForURL(`${origin}/signin`);
  await page.fill('#email', AGENT.email);
  await page.fill('#password', AGENT.password);
  await page.click('#sign-in');
  expect(await page.textContent('#signed-in-as')).toBe(AGENT.email);
  const menu = await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents();
  expect(menu).toEqual(['Overview', 'Inbox', 'Contacts', 'Members', 'Your account']);
}

async function removeAgent(page: Page): Promise<void> {
  await page.reload();
  const row = page.getByRole('row', { name: AGENT.email });
  await row.getByRole('button', { name: 'Remove' }).click();
  await row.getByRole('button', { name: 'Remove them now?' }).click();
  await waitFor(async () => (await page.getByRole('row', { name: AGENT.email }).count()) === 0 || undefined, { what: 'the Agent gone from the list' });
}

async function sessionCookie(page: Page): Promise<string> {
  const cookies = await page.context().cookies();
  return cookies.map((c) => `${c.name}=${c.value}`).join('; ');
}
