import { beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { useBrowser } from '../support/browser.ts';
import { givePassword, openConsolePage, signInToConsole, useScreenshots } from '../support/console.ts';
import { TEST_MEMBER_PASSWORD } from '../support/invitations.ts';
import { MovableClock } from '../support/movable-clock.ts';
import { useOwner, useTestService } from '../support/service.ts';
import { useReceiver, type Hit } from '../support/webhook-receiver.ts';
import { addMember, HOOK_TIMEOUT, uniqueEmail, useMember } from './helpers.ts';

/**
 * Issue 22 section 3, the console's Webhooks, API tokens and Members pages in real Chromium
 * against a real service: an Owner makes a webhook to a real receiver, reads its secret, sees a
 * failing delivery's attempts and redelivers it; makes an API token whose secret works; invites an
 * Agent; and an Agent sees Members read-only and no API tokens page.
 */

const receiver = useReceiver();
/** Moved forward to bring a failing delivery's retries (5 s, then 10 s) due at once. */
const clock = new MovableClock();
const service = useTestService({ clock });
const owner = useOwner(service);
const agent = useMember(service, owner, 'AGENT');
const browser = useBrowser();
const shot = useScreenshots('webhooks-members');
let ownerEmail: string;

beforeAll(async () => {
  await givePassword(service, owner.userId);
  ownerEmail = (await baseStores(service.runtime.ctx.db).identity.getUser(owner.userId))!.email;
}, HOOK_TIMEOUT);

const asOwner = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey: owner.token, body });

/** Spec 6.4, as a receiver checks it: `sha256=` hex HMAC-SHA256 of `<timestamp>.<raw body>`. */
function signedWith(secret: string, hit: Hit): boolean {
  const timestamp = hit.headers.get('x-switchboard-timestamp');
  const expected = 'sha256=' + createHmac('sha256', secret).update(`${timestamp}.`).update(hit.raw).digest('hex');
  return timestamp !== null && hit.headers.get('x-switchboard-signature-256') === expected;
}

/**
 * Runs the verification code the page shows for `language` (its verify function, without the web
 * framework around it) on a delivery as received: true when it accepts it. Skipped (undefined)
 * when the language's interpreter is not on this machine.
 */
async function snippetAccepts(page: Page, language: 'node' | 'python', secret: string, raw: Uint8Array, headers: Headers): Promise<boolean | undefined> {
  const interpreter = Bun.which(language === 'node' ? 'node' : 'python3');
  if (!interpreter) return undefined;
  await page.getByLabel("Your receiver's language").selectOption(language);
  const shown = (await page.locator('pre.snippet').textContent())!;
  const folder = mkdtempSync(join(tmpdir(), 'snippet-'));
  writeFileSync(join(folder, 'body'), raw);
  const program =
    language === 'node'
      ? `import { readFileSync } from 'node:fs';\n${shown.split('\nconst app')[0]!.replace(/^import express.*$/m, '')}\nconst [, , body, ts, sig] = process.argv;\nconsole.log(verify(readFileSync(body), ts, sig));`
      : `import sys\n${shown.split('\napp = Flask')[0]!.replace(/^from flask .*$/m, '')}\nprint(str(verify(open(sys.argv[1], "rb").read(), sys.argv[2], sys.argv[3])).lower())`;
  const file = join(folder, language === 'node' ? 'verify.mjs' : 'verify.py');
  writeFileSync(file, program);
  const run = Bun.spawnSync([interpreter, file, join(folder, 'body'), headers.get('x-switchboard-timestamp') ?? '', headers.get('x-switchboard-signature-256') ?? ''], {
    env: { ...process.env, SWITCHBOARD_WEBHOOK_SECRET: secret },
  });
  if (run.exitCode !== 0) throw new Error(`the ${language} snippet failed: ${run.stderr.toString()}`);
  return run.stdout.toString().trim() === 'true';
}

/**
 * Waits until the realtime indicator says Live. The shell re-renders its page when the socket's
 * state changes, and today that remounts the page (its state, typed text included, is lost), so
 * typing starts after it.
 */
async function settled(page: Page): Promise<void> {
  await page.locator('.topbar .live', { hasText: 'Live' }).waitFor();
}

async function attemptsMade(webhookId: string): Promise<number> {
  const { body } = await asOwner('GET', `/v3/webhooks/${webhookId}/deliveries`);
  return body.data[0]?.attempts ?? 0;
}

/** Waits for the delivery's attempt `n` to be logged, then moves the clock past its retry delay. */
async function failAttempt(webhookId: string, n: number, retryInMs: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await attemptsMade(webhookId)) < n) {
    if (Date.now() > deadline) throw new Error(`attempt ${n} never logged`);
    await Bun.sleep(100);
  }
  clock.advance(retryInMs);
}

describe('the console as an Owner', () => {
  test('a webhook made in the form posts to a real receiver; its secret signs; a failed delivery shows each attempt and goes out again', async () => {
    const connection = (await asOwner('POST', '/v3/connections', { name: 'Sales line' })).body;
    expect((await asOwner('POST', `/v3/connections/${connection.id}/connect`)).body.status).toBe('CONNECTED');
    const path = '/hooks/console';
    receiver.script(path, 500, 500, 500);

    await browser.withPage(async (page) => {
      await signInToConsole(page, service, ownerEmail, undefined, '/webhooks');
      await settled(page);
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await page.getByText('No webhooks yet').waitFor();
      await shot(page, 'webhooks-empty');

      await page.getByRole('button', { name: 'New webhook' }).click();
      await page.getByRole('textbox', { name: 'URL' }).fill(receiver.url(path));
      expect(await page.getByRole('checkbox', { name: /^messages\.upsert/ }).isChecked()).toBe(true);
      await page.getByRole('checkbox', { name: /^send\.message/ }).check();
      await page.getByRole('checkbox', { name: /^Sales line/ }).check();
      expect(await page.getByRole('checkbox', { name: /^Sign each delivery/ }).isChecked()).toBe(true);
      await shot(page, 'webhooks-new');
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await page.getByRole('heading', { level: 1, name: 'Webhook', exact: true }).waitFor();

      const listed = (await asOwner('GET', '/v3/webhooks')).body.data;
      expect(listed).toHaveLength(1);
      const webhook = listed[0];
      expect(webhook).toMatchObject({ url: receiver.url(path), connections: [connection.id], hmacEnabled: true, messageGroupDelay: null });
      expect(webhook.events.sort()).toEqual(['messages.upsert', 'send.message']);
      expect(page.url()).toEndWith(`#/webhooks/${webhook.id}`);

      // Changed in the edit form: a batching window.
      await page.getByRole('button', { name: 'Edit' }).click();
      await page.getByRole('checkbox', { name: /^Batch messages/ }).check();
      await page.getByRole('spinbutton', { name: 'Batching window (seconds, 1 to 300)' }).fill('12');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('12 s window').waitFor();
      expect((await asOwner('GET', `/v3/webhooks/${webhook.id}`)).body.messageGroupDelay).toBe(12);
      await page.getByRole('button', { name: 'Edit' }).click();
      await page.getByRole('checkbox', { name: /^Batch messages/ }).uncheck();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('button', { name: 'Edit' }).waitFor();
      expect((await asOwner('GET', `/v3/webhooks/${webhook.id}`)).body.messageGroupDelay).toBeNull();

      await page.getByRole('button', { name: 'Reveal secret' }).click();
      const secret = await page.getByRole('textbox', { name: 'Signing secret', exact: true }).inputValue();
      expect(secret).toBe((await asOwner('GET', `/v3/webhooks/${webhook.id}/secret`)).body.secret);

      // An incoming message on the bound connection: the receiver answers 500 three times.
      expect((await asOwner('POST', `/v3/connections/${connection.id}/sandbox/messages`, { from: '5511987654321', text: 'hello from the sandbox' })).status).toBe(201);
      await failAttempt(webhook.id, 1, 6_000);
      await failAttempt(webhook.id, 2, 11_000);
      const delivery = page.getByRole('listitem', { name: 'Delivery messages.upsert' });
      await delivery.getByText('FAILED').waitFor({ timeout: 20_000 });
      expect(await delivery.getByText('HTTP 500').count()).toBe(3);
      expect(await delivery.getByText('3 attempts').count()).toBe(1);
      expect(await delivery.locator('details pre').textContent()).toContain('hello from the sandbox');
      await shot(page, 'webhook-failed');

      await delivery.getByRole('button', { name: 'Redeliver' }).click();
      await delivery.getByText('SUCCEEDED').waitFor({ timeout: 10_000 });
      await delivery.getByText('HTTP 200').waitFor();
      const hits = receiver.hits(path);
      expect(hits).toHaveLength(4);
      expect(hits.every((hit) => signedWith(secret, hit))).toBe(true);
      expect(hits[3]!.json.event).toBe('messages.upsert');
      await shot(page, 'webhook-redelivered');

      // The code shown for the receiver accepts a real delivery, and refuses it altered by one byte.
      const hit = hits[3]!;
      for (const language of ['node', 'python'] as const) {
        const accepts = await snippetAccepts(page, language, secret, hit.raw, hit.headers);
        if (accepts === undefined) continue;
        expect(accepts).toBe(true);
        expect(await snippetAccepts(page, language, secret, new TextEncoder().encode(hit.text + ' '), hit.headers)).toBe(false);
        expect(await snippetAccepts(page, language, `${secret}x`, hit.raw, hit.headers)).toBe(false);
      }

      await page.getByRole('link', { name: '← All webhooks' }).click();
      await page.getByRole('link', { name: receiver.url(path) }).waitFor();
      await shot(page, 'webhooks-list');
    });
  }, 60_000);

  test('an API token made in the console is shown once and works; renamed, rotated and revoked there', async () => {
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, ownerEmail, undefined, '/tokens');
      await settled(page);
      await page.getByRole('heading', { level: 1, name: 'API tokens' }).waitFor();
      // The list loaded: the page has settled before typing.
      await page.getByRole('row', { name: 'agent-token' }).waitFor();
      await page.getByRole('textbox', { name: 'Name', exact: true }).fill('CI deploy');
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.getByText('Shown once.').waitFor();
      const secret = await page.getByRole('textbox', { name: 'Token secret' }).inputValue();
      expect(secret).toStartWith('sk_live');
      expect((await service.call('GET', '/v3/accounts', { apikey: secret })).status).toBe(200);
      const row = page.getByRole('row', { name: 'CI deploy' });
      await row.getByText(`sk_live_…${secret.slice(-4)}`).waitFor();
      await shot(page, 'tokens-created');

      await row.getByRole('button', { name: 'Rename CI deploy' }).click();
      await page.getByLabel('New name').fill('CI deploy (prod)');
      await page.getByRole('button', { name: 'Save name' }).click();
      const renamed = page.getByRole('row', { name: 'CI deploy (prod)' });
      await renamed.waitFor();
      const tokens = (await asOwner('GET', '/v3/api-tokens')).body.data;
      expect(tokens.map((t: { name: string }) => t.name)).toContain('CI deploy (prod)');

      // Rotated: the new secret is shown once and works; the old one is dead.
      await renamed.getByRole('button', { name: 'Rotate' }).click();
      await renamed.getByRole('button', { name: 'Old secret dies: rotate?' }).click();
      await page.getByRole('heading', { name: 'New secret of “CI deploy (prod)”' }).waitFor();
      const rotated = await page.getByRole('textbox', { name: 'Token secret' }).inputValue();
      expect(rotated).not.toBe(secret);
      expect((await service.call('GET', '/v3/accounts', { apikey: secret })).status).toBe(401);
      expect((await service.call('GET', '/v3/accounts', { apikey: rotated })).status).toBe(200);

      await renamed.getByRole('button', { name: 'Revoke' }).click();
      await renamed.getByRole('button', { name: 'Revoke now?' }).click();
      await renamed.waitFor({ state: 'detached' });
      expect((await service.call('GET', '/v3/accounts', { apikey: rotated })).status).toBe(401);
    });
  });

  test('inviting an Agent shows the link to pass on and the pending invitation; a member’s roles changed, a reset link, signed out, removed', async () => {
    const email = uniqueEmail('invited');
    const manager = await addMember(service, owner.token, 'MANAGER');
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, ownerEmail, undefined, '/members');
      await settled(page);
      await page.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
      await page.getByRole('row', { name: agent.email }).waitFor();
      await page.getByRole('textbox', { name: 'Email' }).fill(email);
      expect(await page.getByRole('checkbox', { name: /^Agent/ }).isChecked()).toBe(true);
      await page.getByRole('button', { name: 'Send invitation' }).click();
      const link = await page.getByRole('textbox', { name: 'Invitation link' }).inputValue();
      expect(link).toContain('/invitations/accept?token=');
      await page.getByRole('row', { name: `Invitation ${email}` }).waitFor();
      const pending = (await asOwner('GET', '/v3/members/invitations')).body.data;
      expect(pending.map((i: { email: string; roles: string[] }) => [i.email, i.roles])).toContainEqual([email, ['AGENT']]);

      const agentRow = page.getByRole('row', { name: agent.email });
      await agentRow.getByRole('button', { name: 'Reset link' }).click();
      expect(await page.getByRole('textbox', { name: `Password reset link for ${agent.email}` }).inputValue()).toContain('/account/password?token=');
      await shot(page, 'members-owner');

      await agentRow.getByRole('button', { name: 'Sign out everywhere' }).click();
      await agentRow.getByRole('button', { name: 'End all their sessions?' }).click();
      await page.getByText(/Signed out everywhere: \d+ sessions? ended/).waitFor();

      const managerRow = page.getByRole('row', { name: manager.email });
      await managerRow.getByRole('button', { name: 'Change roles' }).click();
      await page.getByRole('dialog').getByRole('checkbox', { name: /^Manager/ }).uncheck();
      await page.getByRole('dialog').getByRole('checkbox', { name: /^Admin/ }).check();
      await page.getByRole('button', { name: 'Save roles' }).click();
      await managerRow.getByRole('cell', { name: 'Admin', exact: true }).waitFor();
      const members = (await asOwner('GET', '/v3/members')).body.data;
      expect(members.find((m: { userId: string }) => m.userId === manager.userId).roles).toEqual(['ADMIN']);

      await managerRow.getByRole('button', { name: 'Remove' }).click();
      await managerRow.getByRole('button', { name: 'Remove them now?' }).click();
      await managerRow.waitFor({ state: 'detached' });
      expect((await asOwner('GET', '/v3/members')).body.data.some((m: { userId: string }) => m.userId === manager.userId)).toBe(false);
    });
  });
});

describe('the console as an Agent', () => {
  test('Members is read-only and there is no API tokens page', async () => {
    await browser.withPage(async (page: Page) => {
      await signInToConsole(page, service, agent.email, TEST_MEMBER_PASSWORD, '/members');
      await settled(page);
      await page.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
      await page.getByRole('row', { name: agent.email }).waitFor();
      expect(await page.getByRole('button', { name: 'Send invitation' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: /Change roles|Remove|Reset link|Sign out everywhere|Cancel invitation/ }).count()).toBe(0);
      expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'API tokens' }).count()).toBe(0);
      await shot(page, 'members-agent');
      await openConsolePage(page, service, '/tokens', /.+/);
      expect(await page.getByRole('button', { name: 'Create token' }).count()).toBe(0);
    });
  });
});
