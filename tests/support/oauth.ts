import { expect } from 'bun:test';
import type { Page } from 'playwright-core';
import { setPassword } from '../../core/identity/passwords.ts';
import { passwordHasher } from '../../adapters/crypto/password-hasher.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import type { Owner, TestService } from './service.ts';

export const TEST_PASSWORD = 'correct horse battery staple';

/** Gives a person a password so they can sign in on the consent pages. */
export async function withPassword(service: TestService, userId: string, password = TEST_PASSWORD): Promise<void> {
  await setPassword(baseStores(service.runtime.ctx.db), passwordHasher, userId, password);
}

/**
 * A person who signs in on the consent pages: the Owner of a new workspace, with an email of
 * their own (`label-…@example.com`) and the password TEST_PASSWORD.
 */
export async function ownerWithPassword(service: TestService, label: string, workspace: string): Promise<Owner & { email: string }> {
  const email = `${label}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const owner = { ...(await service.bootstrap({ email, workspace })), email };
  await withPassword(service, owner.userId);
  return owner;
}

/**
 * Drives the browser from an authorize URL through sign-in (when asked) and the consent screen,
 * and returns the URL the server sent the browser back to (the client's redirect URI), which is
 * intercepted rather than loaded.
 */
export async function authorizeInBrowser(
  page: Page,
  authorizeUrl: string,
  redirectUri: string,
  person: { email: string; password?: string },
  choice: { decision?: 'approve' | 'deny'; workspaceId?: string; uncheck?: string[]; onConsentPage?: (page: Page) => Promise<void> } = {},
): Promise<URL> {
  let landed: string | undefined;
  await page.route(`${redirectUri}**`, async (route) => {
    landed = route.request().url();
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the app' });
  });
  await page.goto(authorizeUrl);
  if (!landed && new URL(page.url()).pathname === '/signin') {
    await page.fill('#email', person.email);
    await page.fill('#password', person.password ?? TEST_PASSWORD);
    await Promise.all([page.waitForLoadState('load'), page.click('#sign-in')]);
  }
  if (!landed) {
    await page.waitForSelector('#approve');
    await choice.onConsentPage?.(page);
    if (choice.workspaceId) await page.check(`#workspace-${choice.workspaceId}`);
    for (const scope of choice.uncheck ?? []) await page.uncheck(`#scope-${scope.replace(/:/g, '-')}`);
    await page.click(choice.decision === 'deny' ? '#deny' : '#approve');
    await page.waitForURL((url) => url.toString().startsWith(redirectUri));
  }
  if (!landed) throw new Error(`the browser never came back to ${redirectUri}; it is at ${page.url()}`);
  return new URL(landed);
}

/** The auth-params of a `Bearer` challenge (quoted-string values unescaped). */
export function challengeParams(header: string | null): Record<string, string> {
  expect(header).toStartWith('Bearer ');
  const params: Record<string, string> = {};
  for (const m of header!.slice(7).matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) params[m[1]!] = m[2]!.replace(/\\(.)/g, '$1');
  return params;
}
