import { afterAll, beforeAll } from 'bun:test';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

/**
 * Real headless Chromium for browser tests: Debian's package at /usr/bin/chromium (CI installs
 * it), driven by playwright-core; never a downloaded browser (ARCHITECTURE.md).
 *
 *   const browser = await startBrowser();            // beforeAll
 *   await browser.withPage(async (page) => { … });   // a fresh context (no cookies) per use
 *   await browser.close();                           // afterAll
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  browser: Browser;
  /** A page in a new, empty context (its own cookies); close it with `close()`. */
  openPage(options?: BrowserContextOptions): Promise<{ page: Page; context: BrowserContext; close(): Promise<void> }>;
  /** Runs `use` with a page in a new context and closes the context afterwards, whatever happens. */
  withPage<T>(use: (page: Page, context: BrowserContext) => Promise<T>, options?: BrowserContextOptions): Promise<T>;
  close(): Promise<void>;
}

export async function startBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const openPage: TestBrowser['openPage'] = async (options) => {
    const context = await browser.newContext(options);
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    return { page, context, close: () => context.close() };
  };
  return {
    browser,
    openPage,
    async withPage(use, options) {
      const { page, context, close } = await openPage(options);
      try {
        return await use(page, context);
      } finally {
        await close();
      }
    },
    async close() {
      await browser.close();
    },
  };
}

/**
 * The browser of a test file: launched before its tests, closed after them. Answers it at once,
 * to be used from the hooks and tests that run after the launch.
 */
export function useBrowser(): Omit<TestBrowser, 'close'> {
  let started: TestBrowser | undefined;
  const running = (): TestBrowser => {
    if (!started) throw new Error('the browser is used before its beforeAll hook ran (or after it closed)');
    return started;
  };
  beforeAll(async () => {
    started = await startBrowser();
  }, 60_000);
  afterAll(async () => {
    await started?.close();
    started = undefined;
  }, 60_000);
  return {
    get browser() {
      return running().browser;
    },
    openPage: (options) => running().openPage(options),
    withPage: (use, options) => running().withPage(use, options),
  };
}

/** One-off: launches Chromium, runs `use` on a fresh page, and closes everything. */
export async function withBrowserPage<T>(use: (page: Page, context: BrowserContext) => Promise<T>, options?: BrowserContextOptions): Promise<T> {
  const browser = await startBrowser();
  try {
    return await browser.withPage(use, options);
  } finally {
    await browser.close();
  }
}
