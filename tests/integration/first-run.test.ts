import { describe, expect, test } from 'bun:test';
import { useBrowser } from '../support/browser.ts';
import { useInstallation } from '../support/installation.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { waitFor } from '../support/wait.ts';

/**
 * Issue 22, first run: on a database with nobody in it, `bun run start` prints a one-time set-up
 * link `PUBLIC_URL/setup?token=…`; its page makes the first Owner and workspace (through the
 * use case of `cli bootstrap`), signs them in and redirects to the console at `/`. Afterwards the link
 * answers "already set up", and the service prints it no more. A wrong token is a plain 404.
 */
const installation = useInstallation('switchboard-first-run-');
const browser = useBrowser();

const LINK = /(http:\/\/\S+\/setup\?token=([A-Za-z0-9_-]+))/;

/** The set-up link the service printed (read from its output, as an operator reads it). */
async function printedLink(server: ServerProcess): Promise<{ link: string; token: string }> {
  const match = await waitFor(() => server.log().match(LINK) ?? undefined, { what: 'the set-up link in the output' });
  return { link: match[1]!, token: match[2]! };
}

/** Opens the set-up page over HTTP: its status, text, form cookie and CSRF token. */
async function openForm(server: ServerProcess, token: string): Promise<{ status: number; text: string; cookie: string; csrf?: string }> {
  const res = await fetch(`${server.url}/setup?token=${encodeURIComponent(token)}`);
  const text = await res.text();
  return {
    status: res.status,
    text,
    cookie: res.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; '),
    csrf: text.match(/name="csrf" value="([^"]+)"/)?.[1],
  };
}

async function postForm(server: ServerProcess, form: { cookie: string; csrf?: string }, fields: Record<string, string>): Promise<Response> {
  return fetch(`${server.url}/setup`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
    body: new URLSearchParams({ csrf: form.csrf ?? '', ...fields }),
  });
}

const PASSWORD = 'the first owner password';

describe('the set-up link over HTTP', () => {
  test('printed at each start while nobody exists; makes one Owner, racing posts included; then dead and no longer printed', async () => {
    let server = await installation.startServer();
    let token: string;
    try {
      const printed = await printedLink(server);
      token = printed.token;
      const port = new URL(server.url).port;
      // PUBLIC_URL is unset: the link is on http://localhost:<port>.
      expect(printed.link).toBe(`http://localhost:${port}/setup?token=${token}`);
    } finally {
      await server.stop();
    }

    server = await installation.startServer();
    try {
      // The same link again at the next start: nothing stored, nothing used yet.
      expect((await printedLink(server)).token).toBe(token);

      // A wrong or missing token: 404, no form, no hint.
      for (const wrong of [`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, '', 'x'.repeat(300)]) {
        const refused = await openForm(server, wrong);
        expect(refused.status).toBe(404);
        expect(refused.text).not.toContain('<form');
        expect(refused.text).not.toContain('set-up');
      }

      const form = await openForm(server, token);
      expect(form.status).toBe(200);
      expect(form.text).toContain('<label for="email">');
      expect(form.text).toContain('<label for="workspace">');
      expect(form.csrf).toBeDefined();

      // Without the form's CSRF token: nothing is created.
      const forged = await postForm(server, { cookie: '' }, { token, email: 'a@example.com', password: PASSWORD, password_confirm: PASSWORD, workspace: 'W' });
      expect(forged.status).toBe(403);
      // A wrong token with a good form: 404.
      expect((await postForm(server, form, { token: 'nope', email: 'a@example.com', password: PASSWORD, password_confirm: PASSWORD, workspace: 'W' })).status).toBe(404);
      // A password breaking the rule, and no workspace name: the form again with every problem, nothing created.
      const invalid = await postForm(server, form, { token, email: 'not an email', password: 'short', password_confirm: 'short', workspace: ' ' });
      expect(invalid.status).toBe(400);
      const invalidText = await invalid.text();
      expect(invalidText).toContain('at least 10 characters');
      expect(invalidText).toContain('valid email');
      expect(invalidText).toContain('name for the workspace');
      expect((await openForm(server, token)).status).toBe(200);

      // Two posts at once: exactly one makes the Owner; the other is told it is already set up.
      const [first, second] = await Promise.all(
        ['owner-a@example.com', 'owner-b@example.com'].map((email) =>
          postForm(server, form, { token, email, name: 'First Owner', password: PASSWORD, password_confirm: PASSWORD, workspace: 'Acme' }),
        ),
      );
      const answers = [first!, second!];
      const won = answers.filter((r) => r.status === 303);
      const lost = answers.filter((r) => r.status !== 303);
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]!.status).toBe(410);
      expect(await lost[0]!.text()).toContain('already set up');
      const winner = won[0]!;
      expect(winner.headers.get('location')).toBe('/');
      const session = winner.headers.getSetCookie().find((c) => c.includes('sb_session='));
      expect(session).toBeDefined();

      // Signed in: the account page names the winner.
      const account = await fetch(`${server.url}/account`, { redirect: 'manual', headers: { cookie: session!.split(';')[0]! } });
      expect(account.status).toBe(200);
      const accountText = await account.text();
      const email = accountText.match(/id="signed-in-email">([^<]+)</)![1]!;
      expect(['owner-a@example.com', 'owner-b@example.com']).toContain(email);

      // The link is dead: a clear page, not a form and not a 500, on GET and on POST.
      const after = await openForm(server, token);
      expect(after.status).toBe(410);
      expect(after.text).toContain('already set up');
      expect(after.text).not.toContain('<form');
      const again = await postForm(server, form, { token, email: 'late@example.com', password: PASSWORD, password_confirm: PASSWORD, workspace: 'Late' });
      expect(again.status).toBe(410);
    } finally {
      await server.stop();
    }

    // The Owner signs in with the password; the service prints no link at its next start.
    server = await installation.startServer();
    try {
      const signIn = await fetch(`${server.url}/signin`);
      const signInText = await signIn.text();
      const cookie = signIn.headers.getSetCookie().map((c) => c.split(';')[0]!).join('; ');
      const csrf = signInText.match(/name="csrf" value="([^"]+)"/)![1]!;
      const winnerEmail = (await fetch(`${server.url}/setup?token=${token}`)).status === 410 ? undefined : 'unexpected';
      expect(winnerEmail).toBeUndefined();
      let signedIn = 0;
      for (const email of ['owner-a@example.com', 'owner-b@example.com']) {
        const res = await fetch(`${server.url}/signin`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
          body: new URLSearchParams({ csrf, return_to: '/account', email, password: PASSWORD }),
        });
        if (res.status === 303) signedIn++;
      }
      expect(signedIn).toBe(1);
      expect(server.log()).toContain('listening on');
      expect(server.log()).not.toContain('/setup?token=');
      expect(server.log()).not.toContain('token=');
    } finally {
      await server.stop();
    }
  });
});

describe('the set-up page in Chromium', () => {
  const fresh = useInstallation('switchboard-first-run-browser-');

  test('filled in and sent: the Owner is signed in, in the console', async () => {
    const server = await fresh.startServer();
    try {
      const { token } = await printedLink(server);
      await browser.withPage(async (page) => {
        const opened = await page.goto(`${server.url}/setup?token=${token}`);
        expect(opened!.status()).toBe(200);
        expect(opened!.headers()['content-security-policy']).toContain("default-src 'none'");
        await page.getByLabel('Your email').fill('founder@example.com');
        await page.getByLabel('Your name').fill('Ada Founder');
        await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await page.getByLabel('Repeat the password').fill(PASSWORD);
        await page.getByLabel('Workspace name').fill('Founders');
        await page.screenshot({ path: '/tmp/shots-22/setup.png', fullPage: true });
        await Promise.all([page.waitForURL(/:\d+\/(#\/)?$/), page.click('#set-up')]);
        // The console (the console plugin's home page) shows who is signed in, in the new workspace.
        expect(await page.textContent('#signed-in-as')).toBe('founder@example.com');
        await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
        expect(await page.textContent('main#content')).toContain('Founders');
        const cookies = await page.context().cookies();
        expect(cookies.find((c) => c.name.endsWith('sb_session'))).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
      });
      // The Owner's new workspace is there, with them as its Owner.
      await browser.withPage(async (page) => {
        const reopened = await page.goto(`${server.url}/setup?token=${token}`);
        expect(reopened!.status()).toBe(410);
        expect(await page.textContent('h1')).toBe('Already set up');
      });
    } finally {
      await server.stop();
    }
  });
});
