import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { renderConsentPage, SELF_REGISTERED_WARNING, type ConsentView } from '../../adapters/http/pages/consent.ts';
import { pageHeaders } from '../../adapters/http/pages/html.ts';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * The consent screen (spec 5.3) rendered by `renderConsentPage`, in real Chromium: the app's
 * name, logo and site; the self-registration warning or the verified badge; a workspace
 * chooser with the personal account preselected; one box per scope, required ones locked but
 * still submitted; and everything the app chose about itself escaped.
 *
 * The page is served by a small HTTP server (with the pages' security headers) whose decision
 * endpoint echoes what the browser posted, so the test reads the real form submission.
 */

let browser: TestBrowser;
let server: ReturnType<typeof Bun.serve>;
let current = '';
let posted: { path: string; contentType: string; body: string } | undefined;

beforeAll(async () => {
  browser = await startBrowser();
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url);
      if (request.method === 'POST') {
        posted = { path: url.pathname, contentType: request.headers.get('content-type') ?? '', body: await request.text() };
        return new Response('<p id="done">posted</p>', { headers: { 'content-type': 'text/html' } });
      }
      return new Response(current, { headers: pageHeaders() });
    },
  });
}, HOOK_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  server?.stop(true);
}, HOOK_TIMEOUT);

const PERSONAL = '0190f0c1-0000-7000-8000-000000000001';
const SHARED = '0190f0c1-0000-7000-8000-000000000002';

function view(overrides: Partial<ConsentView> = {}, client: Partial<ConsentView['client']> = {}): ConsentView {
  return {
    requestId: '0190f0c1-0000-7000-8000-0000000000aa',
    csrf: 'csrf-token-of-the-session',
    client: { name: 'Claude', logoUri: 'https://assets.example/logo.png', clientUri: 'https://claude.example', verified: false, selfRegistered: true, ...client },
    user: { email: 'ana@example.com' },
    workspaces: [
      { id: PERSONAL, name: 'Ana', isPersonal: true },
      { id: SHARED, name: 'Acme', isPersonal: false },
    ],
    scopes: [
      { scope: 'profile', description: 'Who you are and the workspace', required: true, checked: true },
      { scope: 'messages:send', description: 'Send messages', required: false, checked: true },
      { scope: 'connections:read', description: 'Read connections', required: false, checked: false },
    ],
    ...overrides,
  };
}

/** Serves the rendered page and opens it in a fresh context. */
async function open<T>(v: ConsentView, use: (page: Page) => Promise<T>): Promise<T> {
  current = renderConsentPage(v);
  posted = undefined;
  return browser.withPage(async (page) => {
    await page.goto(`http://127.0.0.1:${server.port}/consent`);
    return use(page);
  });
}

async function submit(page: Page, button: '#approve' | '#deny'): Promise<URLSearchParams> {
  await Promise.all([page.waitForSelector('#done'), page.click(button)]);
  expect(posted?.path).toBe('/v3/oauth/authorize/decision');
  expect(posted?.contentType).toStartWith('application/x-www-form-urlencoded');
  return new URLSearchParams(posted!.body);
}

describe('the form', () => {
  test('approving posts request_id, csrf, the personal workspace, the checked scopes and the locked required one', async () => {
    await open(view(), async (page) => {
      expect(await page.isChecked(`#workspace-${PERSONAL}`)).toBe(true);
      expect(await page.isChecked(`#workspace-${SHARED}`)).toBe(false);
      expect(await page.textContent(`label[for="workspace-${PERSONAL}"]`)).toContain('personal account');

      const required = page.locator('#scope-profile');
      expect(await required.isChecked()).toBe(true);
      expect(await required.isDisabled()).toBe(true);
      expect(await page.isChecked('#scope-messages-send')).toBe(true);
      expect(await page.isChecked('#scope-connections-read')).toBe(false);
      expect(await page.textContent('label[for="scope-messages-send"]')).toContain('Send messages');

      const sent = await submit(page, '#approve');
      expect(sent.get('request_id')).toBe('0190f0c1-0000-7000-8000-0000000000aa');
      expect(sent.get('csrf')).toBe('csrf-token-of-the-session');
      expect(sent.get('workspace_id')).toBe(PERSONAL);
      expect(sent.getAll('scope').sort()).toEqual(['messages:send', 'profile']);
      expect(sent.get('decision')).toBe('approve');
    });
  });

  test('the person may narrow the scopes and pick another workspace; the required scope still goes', async () => {
    await open(view(), async (page) => {
      await page.uncheck('#scope-messages-send');
      await page.check('#scope-connections-read');
      await page.check(`#workspace-${SHARED}`);
      // Clicking the locked box changes nothing.
      await page.click('#scope-profile', { force: true });
      const sent = await submit(page, '#approve');
      expect(sent.get('workspace_id')).toBe(SHARED);
      expect(sent.getAll('scope').sort()).toEqual(['connections:read', 'profile']);
    });
  });

  test('denying posts decision=deny', async () => {
    await open(view(), async (page) => {
      const sent = await submit(page, '#deny');
      expect(sent.get('decision')).toBe('deny');
      expect(sent.get('request_id')).toBe('0190f0c1-0000-7000-8000-0000000000aa');
    });
  });
});

describe('who the app is', () => {
  test('a self-registered, unverified app shows the warning and no badge, with its logo and site', async () => {
    await open(view(), async (page) => {
      expect(await page.textContent('#self-registered-warning')).toBe(SELF_REGISTERED_WARNING);
      expect(await page.locator('#verified-badge').count()).toBe(0);
      expect(await page.textContent('#client-name')).toBe('Claude');
      expect(await page.getAttribute('#client-logo', 'src')).toBe('https://assets.example/logo.png');
      expect(await page.getAttribute('#client-logo', 'referrerpolicy')).toBe('no-referrer');
      expect(await page.getAttribute('#client-site', 'href')).toBe('https://claude.example');
      expect(await page.getAttribute('#client-site', 'rel')).toBe('noopener noreferrer');
      expect(await page.textContent('#signed-in-email')).toBe('ana@example.com');
    });
  });

  test('a verified app shows the badge and no warning, even if it registered itself', async () => {
    await open(view({}, { verified: true, selfRegistered: true }), async (page) => {
      expect(await page.textContent('#verified-badge')).toBe('Verified');
      expect(await page.locator('#self-registered-warning').count()).toBe(0);
    });
  });

  test('an app configured by the platform, not verified, shows neither', async () => {
    await open(view({}, { verified: false, selfRegistered: false }), async (page) => {
      expect(await page.locator('#verified-badge').count()).toBe(0);
      expect(await page.locator('#self-registered-warning').count()).toBe(0);
    });
  });

  test('an error message is shown when given', async () => {
    await open(view({ error: 'Choose a workspace' }), async (page) => {
      expect(await page.textContent('#error')).toBe('Choose a workspace');
    });
  });
});

describe('escaping', () => {
  const hostile = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>"' onmouseover="window.__pwned=3" &amp;`;

  test('a hostile name, site, logo, workspace and description render as text (page.setContent, no CSP to help)', async () => {
    const v = view(
      {
        requestId: `"><script>window.__pwned=4</script>`,
        user: { email: hostile },
        workspaces: [{ id: `x" onclick="window.__pwned=5`, name: hostile, isPersonal: true }],
        scopes: [{ scope: 'messages:send', description: hostile, required: true, checked: true }],
      },
      { name: hostile, logoUri: 'javascript:window.__pwned=6', clientUri: 'javascript:window.__pwned=7' },
    );
    await browser.withPage(async (page) => {
      await page.setContent(renderConsentPage(v));
      expect(await page.textContent('#client-name')).toBe(hostile);
      expect(await page.textContent('#signed-in-email')).toBe(hostile);
      expect(await page.locator('script').count()).toBe(0);
      expect(await page.locator('img').count()).toBe(0); // no logo for a javascript: URL, no injected <img>
      expect(await page.locator('#client-site').count()).toBe(0);
      expect(await page.locator('[onerror], [onclick], [onmouseover]').count()).toBe(0);
      expect(await page.inputValue('input[name="request_id"]')).toBe(v.requestId);
      await page.hover('#client-name');
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    });
  });

  test('only https and data: logos are shown', async () => {
    for (const [logoUri, shown] of [
      ['http://assets.example/logo.png', false],
      ['data:image/png;base64,iVBORw0KGgo=', true],
      ['https://assets.example/logo.png', true],
    ] as const) {
      expect(renderConsentPage(view({}, { logoUri })).includes('id="client-logo"')).toBe(shown);
    }
  });
});
