import { describe, expect, test } from 'bun:test';
import { SCALAR_SCRIPT_PATH } from '../../adapters/http/docs-assets.ts';
import { useBrowser } from '../support/browser.ts';
import { useTestService } from '../support/service.ts';

/**
 * Issue 22: `/docs` works with no internet. The reference UI (Scalar, from the
 * `@scalar/api-reference` package) is served by the service with a long cache; no request of
 * the page leaves the service's host (no CDN, no web fonts).
 */
const service = useTestService();
const browser = useBrowser();

describe('/docs offline', () => {
  test('the reference UI script is served by the service, cacheable, as JavaScript', async () => {
    const page = await (await fetch(`${service.url}/docs`)).text();
    expect(page).toContain(`src="${SCALAR_SCRIPT_PATH}"`);
    expect(page).not.toMatch(/src="https?:/);
    const script = await fetch(`${service.url}${SCALAR_SCRIPT_PATH}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toStartWith('text/javascript');
    expect(script.headers.get('cache-control')).toContain('max-age=31536000');
    expect((await script.text()).length).toBeGreaterThan(100_000);
  });

  test('in Chromium with every other host cut off, the page renders the API title', async () => {
    const own = new URL(service.url).host;
    const offHost: string[] = [];
    await browser.withPage(async (page) => {
      await page.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (url.host === own || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
        offHost.push(url.href);
        return route.abort();
      });
      await page.goto(`${service.url}/docs`);
      await page.locator('body').getByText('Switchboard API').first().waitFor({ state: 'visible' });
      await page.screenshot({ path: '/tmp/shots-22/docs.png' });
    });
    expect(offHost).toEqual([]);
  });
});
