import { beforeAll, describe, expect, test } from 'bun:test';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../plugins/console/routes.ts';
import { AVAILABLE_PLUGINS } from '../../plugins/index.ts';
import { useBrowser } from '../support/browser.ts';
import { CONSOLE_PASSWORD, consoleUrl, givePassword, signInToConsole, useScreenshots } from '../support/console.ts';
import { signIn } from '../support/installation.ts';
import { startTestService, useOwner, useTestService } from '../support/service.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { HOOK_TIMEOUT, useMember } from './helpers.ts';

/**
 * Issue 22, section 3: the console is the `console` plugin's one document at `/` and its hashed
 * assets, all served by the service (it works with no internet), under a strict CSP; signed out
 * it sends the person to /signin and back; signed in it shows the pages the member's roles
 * allow, opens the `/helpdesk` websocket with the session, switches workspaces with
 * `X-Account-Id`, and lists and ends the member's own sessions.
 */
const service = useTestService();
const owner = useOwner(service, { workspace: 'Console Co' });
const agent = useMember(service, owner, 'AGENT');
const browser = useBrowser();
const shot = useScreenshots('console');
let ownerEmail: string;

beforeAll(async () => {
  await givePassword(service, owner.userId);
  await givePassword(service, agent.userId);
  ownerEmail = (await baseStores(service.runtime.ctx.db).identity.getUser(owner.userId))!.email;
}, HOOK_TIMEOUT);

describe('served by the service', () => {
  test('`/` is one small document under a strict CSP; its script and stylesheet are hashed, immutable, same-origin', async () => {
    const res = await fetch(`${service.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('text/html');
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
    expect(CONSOLE_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONSOLE_CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const page = await res.text();
    const script = page.match(/src="(\/console\/assets\/main-[a-z0-9]+\.js)"/)?.[1];
    const style = page.match(/href="(\/console\/assets\/main-[a-z0-9]+\.css)"/)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();
    expect(page).not.toMatch(/(src|href)="https?:/);

    for (const [path, type] of [
      [script!, 'text/javascript'],
      [style!, 'text/css'],
    ] as const) {
      const asset = await fetch(`${service.url}${path}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toStartWith(type);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    }
    expect((await fetch(`${service.url}/console/assets/main-nothere.js`)).status).toBe(404);
    expect((await fetch(`${service.url}/console/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
  });

  test('with the plugin left out of PLUGINS, `/` is a 404 and signing in lands on /account', async () => {
    const plain = await startTestService({ plugins: AVAILABLE_PLUGINS.filter((p) => p.name !== 'console') });
    try {
      expect((await fetch(`${plain.url}/`)).status).toBe(404);
      const form = await fetch(`${plain.url}/signin`);
      expect(await form.text()).toContain('name="return_to" value="/account"');
    } finally {
      await plain.stop();
    }
  });
});

describe('in Chromium', () => {
  test('signed out, `/` goes to /signin and back; the Owner sees every page, live, with no request leaving the host', async () => {
    const own = new URL(consoleUrl(service)).host;
    const offHost: string[] = [];
    await browser.withPage(async (page) => {
      // Watched, not intercepted: request interception alongside the page's websocket trips
      // playwright-core (frames of a socket it already forgot), and a request to another host
      // is recorded here whether it would have succeeded or not.
      const watch = (address: string) => {
        const url = new URL(address);
        if (url.host !== own && url.protocol !== 'data:') offHost.push(url.href);
      };
      page.on('request', (request) => watch(request.url()));
      page.on('websocket', (socket) => watch(socket.url()));
      await page.goto(consoleUrl(service, '/members'));
      await page.waitForURL(/\/signin\?return_to=/);
      expect(new URL(page.url()).searchParams.get('return_to')).toBe('/#/members');

      await signInToConsole(page, service, ownerEmail, CONSOLE_PASSWORD, '/');
      expect(await page.textContent('#signed-in-as')).toBe(ownerEmail);
      const menu = page.getByRole('navigation', { name: 'Console' });
      for (const name of ['Overview', 'Connections', 'Messages', 'Webhooks', 'Campaigns', 'Templates & Flows', 'API tokens', 'Members', 'OAuth apps', 'Your account']) {
        expect(await menu.getByRole('link', { name, exact: true }).count()).toBe(1);
      }
      // The websocket accepted the session.
      await page.locator('.live.online').waitFor();
      await page.getByRole('heading', { name: 'Message credits' }).waitFor();
      await shot(page, 'overview');
    });
    expect(offHost).toEqual([]);
  });

  test('an Agent sees only what the roles matrix gives them; a page beyond it says so', async () => {
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, agent.email);
      const menu = page.getByRole('navigation', { name: 'Console' });
      const links = await menu.getByRole('link').allTextContents();
      expect(links).toEqual(['Overview', 'Inbox', 'Contacts', 'Members', 'Your account']);
      await page.locator('.live.online').waitFor();
      await page.goto(consoleUrl(service, '/tokens'));
      await page.getByRole('heading', { level: 1, name: 'Not here' }).waitFor();
      await shot(page, 'agent-not-here');
    });
  });

  test('the workspace switcher acts in the chosen workspace (X-Account-Id on every call)', async () => {
    const workspaces = (await service.call('GET', '/v3/accounts', { apikey: owner.token })).body as { id: string; name: string }[];
    const personal = workspaces.find((w) => w.id !== owner.workspaceId)!;
    expect(personal).toBeDefined();
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, ownerEmail);
      expect(await page.textContent('main#content')).toContain('Console Co');
      // The overview reads the chosen workspace's plan usage, naming it in X-Account-Id.
      const [summary] = await Promise.all([
        page.waitForRequest((request) => request.url().includes('/v3/summary') && request.headers()['x-account-id'] !== owner.workspaceId),
        page.getByLabel('Workspace').selectOption(personal.id),
      ]);
      expect(summary.headers()['x-account-id']).toBe(personal.id);
      await page.getByText(`${personal.name}: plan usage`).waitFor();
      // The choice holds for this tab across a reload.
      await page.reload();
      await page.getByText(`${personal.name}: plan usage`).waitFor();
    });
  });

  test('your account lists your sessions and ends another one; the API agrees', async () => {
    expect(await signIn(service.runtime.ctx.config.publicUrl, ownerEmail, CONSOLE_PASSWORD)).toBe(303);
    await browser.withPage(async (page) => {
      await signInToConsole(page, service, ownerEmail, CONSOLE_PASSWORD, '/account');
      const table = page.getByRole('table', { name: 'Your sign-in sessions' });
      await table.getByText('this browser').waitFor();
      const before = await table.locator('tbody tr').count();
      expect(before).toBeGreaterThanOrEqual(2);
      await shot(page, 'account');
      await page.getByRole('button', { name: 'Sign out other sessions' }).click();
      await page.getByRole('button', { name: 'Sign out the others?' }).click();
      await page.waitForFunction(
        () => [...document.querySelectorAll('table')].find((t) => t.querySelector('caption')?.textContent === 'Your sign-in sessions')?.querySelectorAll('tbody tr').length === 1,
      );
      const own = await page.evaluate(async () => (await fetch('/v3/sessions')).json());
      expect(own.data).toHaveLength(1);
      expect(own.data[0].current).toBe(true);
    });
  });
});
