import { beforeAll } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { setPassword } from '../../core/identity/passwords.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import type { TestService } from './service.ts';

/**
 * The web console in tests: signing a member in through `/signin` in Chromium and landing on a
 * console page, and screenshots of each page at laptop and phone width into one folder per run
 * (named in the output, not committed) for a person to look at.
 */

export const CONSOLE_PASSWORD = 'a console test password';

export const VIEWPORTS = { laptop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;

/** Gives a member (made by `bootstrap` or `addMember`) the test password, so they can sign in. */
export async function givePassword(service: TestService, userId: string, password = CONSOLE_PASSWORD): Promise<void> {
  await setPassword(baseStores(service.runtime.ctx.db), passwordHasher, userId, password);
}

/** The service's public origin: the console's writes must come from it (Origin check). */
export function consoleUrl(service: TestService, hashRoute = '/'): string {
  return `${service.runtime.ctx.config.publicUrl}/#${hashRoute}`;
}

/** Signs in at /signin and waits for the console at `hashRoute` to show who is signed in. */
export async function signInToConsole(page: Page, service: TestService, email: string, password = CONSOLE_PASSWORD, hashRoute = '/'): Promise<void> {
  const base = service.runtime.ctx.config.publicUrl;
  await page.goto(`${base}/signin?return_to=${encodeURIComponent(`/#${hashRoute}`)}`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL(`${base}/#${hashRoute}`), page.click('button[type=submit]')]);
  await page.locator('#signed-in-as').waitFor();
}

/** Opens a console page (the session cookie already set) and waits until its heading shows. */
export async function openConsolePage(page: Page, service: TestService, hashRoute: string, heading: string | RegExp): Promise<void> {
  await page.goto(consoleUrl(service, hashRoute));
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/**
 * Waits until a form field's value contains `text`: a value set by the page asynchronously (a
 * file read, a fetch) is not there yet when the step that caused it returns.
 */
export async function waitForValue(field: Locator, text: string, timeout = 20_000): Promise<void> {
  const until = Date.now() + timeout;
  let value = '';
  while (Date.now() < until) {
    value = await field.inputValue();
    if (value.includes(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the field's value never came to contain ${JSON.stringify(text)} (last: ${JSON.stringify(value)})`);
}

/**
 * Where this run's screenshots go: `SCREENSHOT_DIR` or a fresh folder under the system's
 * temporary directory, printed once.
 */
export function useScreenshots(label: string): (page: Page, name: string) => Promise<void> {
  let folder = '';
  beforeAll(() => {
    folder = process.env.SCREENSHOT_DIR ? join(process.env.SCREENSHOT_DIR, label) : join(tmpdir(), `switchboard-screens-${label}-${Date.now()}`);
    mkdirSync(folder, { recursive: true });
    console.log(`[screenshots] ${label}: ${folder}`);
  });
  return async (page, name) => {
    const original = page.viewportSize();
    for (const [width, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      // From the top: a sticky bar would otherwise sit mid-picture in a full-page shot.
      await page.evaluate(() => scrollTo(0, 0));
      await page.waitForTimeout(150);
      await page.screenshot({ path: join(folder, `${name}-${width}.png`), fullPage: true });
    }
    if (original) await page.setViewportSize(original);
  };
}
