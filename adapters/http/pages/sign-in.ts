import { verifySignIn } from '../../../core/identity/passwords.ts';
import { passwordHasher } from '../../crypto/password-hasher.ts';
import { baseStores } from '../../postgres/stores.ts';
import type { AppContext } from '../context.ts';
import { csrfMatches, currentSession, endSession, startSession } from '../web-session.ts';
import { formToken, formTokenMatches } from './form-guard.ts';
import { expiredForm, formField, html, htmlResponse, isFormPost, layout, messagePage, safeReturnPath, seeOther, webPages } from './html.ts';
import { authFailures, clientAddress } from '../auth-failures.ts';

/**
 * Person sign-in on the service's own pages (email and password), before approving an app:
 * `GET /signin?return_to=<path>` shows the form; `POST /signin` signs in and answers 303 to
 * `return_to` (same-origin paths only; default `home`: the console when it is loaded, else `/account`); `POST /signout` ends the session;
 * `GET /account` shows who is signed in.
 */
export function signInPages(ctx: AppContext, home: string) {
  const throttle = authFailures(ctx);

  return webPages('pages.sign-in')
    .get(
      '/signin',
      async ({ request, query }) => {
        const returnTo = safeReturnPath(formField(query, 'return_to'), home);
        if (await currentSession(ctx, request)) return seeOther(returnTo);
        const { csrf, setCookie } = formToken(ctx, request);
        return htmlResponse(signInPage({ csrf, returnTo }), { cookies: [setCookie] });
      },
    )
    .post(
      '/signin',
      async ({ request, body, server }) => {
        if (!isFormPost(request)) return htmlResponse(messagePage('Cannot sign in', 'Send the sign-in form from the sign-in page.'), { status: 415 });
        const returnTo = safeReturnPath(formField(body, 'return_to'), home);
        if (!formTokenMatches(ctx, request, formField(body, 'csrf'))) return expiredSignInForm(returnTo);
        // Throttled per account and address with a growing delay, never a block (auth-failures.ts);
        // the attempt counts before the (slow) verification, and is forgiven when it succeeds.
        const email = formField(body, 'email') ?? '';
        const attempt = await throttle.signIn(email, clientAddress(ctx, request, server?.requestIP(request)?.address));
        if (!attempt.admitted) {
          const wait = attempt.retryAfterSeconds;
          return htmlResponse(messagePage('Too many attempts', `Too many failed sign-in attempts. Wait ${wait} second${wait === 1 ? '' : 's'}, then try again.`), {
            status: 429,
            headers: { 'retry-after': String(wait) },
          });
        }

        const user = await verifySignIn(baseStores(ctx.db), passwordHasher, email, formField(body, 'password') ?? '');
        if (!user) {
          const { csrf, setCookie } = formToken(ctx, request);
          return htmlResponse(signInPage({ csrf, returnTo, email, error: 'Wrong email or password.' }), { status: 401, cookies: [setCookie] });
        }
        await attempt.succeeded();
        await endSession(ctx, request); // a session held before (another person's) ends here
        const { setCookie } = await startSession(ctx, user.id, request);
        return seeOther(returnTo, [setCookie]);
      },
    )
    .post(
      '/signout',
      async ({ request, body }) => {
        const session = await currentSession(ctx, request);
        if (!session) return seeOther('/signin');
        if (!isFormPost(request) || !csrfMatches(session, formField(body, 'csrf'))) return expiredSignInForm('/account');
        return seeOther('/signin', [await endSession(ctx, request)]);
      },
    )
    .get(
      '/account',
      async ({ request }) => {
        const session = await currentSession(ctx, request);
        const user = session && (await baseStores(ctx.db).identity.getUser(session.userId));
        if (!session || !user) return seeOther('/signin?return_to=%2Faccount');
        return htmlResponse(
          layout(
            'Your account',
            html`<h1>Your account</h1>
<p>Signed in as <strong id="signed-in-email">${user.email}</strong>${user.name && user.name !== user.email ? html` <span class="muted">(${user.name})</span>` : ''}.</p>
<form method="post" action="/signout">
<input type="hidden" name="csrf" value="${session.csrf}">
<button type="submit" id="sign-out" class="secondary">Sign out</button>
</form>`,
          ),
        );
      },
    );
}

function signInPage(view: { csrf: string; returnTo: string; email?: string; error?: string }): string {
  return layout(
    'Sign in',
    html`<h1>Sign in to Switchboard</h1>
${view.error ? html`<p class="error" id="error" role="alert">${view.error}</p>` : ''}
<form method="post" action="/signin">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="return_to" value="${view.returnTo}">
<label for="email">Email</label>
<input type="email" id="email" name="email" value="${view.email ?? ''}" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" id="sign-in">Sign in</button></div>
</form>
<p><a href="/forgot-password" id="forgot-password">Forgot password?</a></p>`,
  );
}

/** 403: the form's CSRF token is missing or wrong (expired cookie, or a post from another site). */
function expiredSignInForm(returnTo: string): Response {
  return expiredForm({ href: `/signin?return_to=${encodeURIComponent(returnTo)}`, label: 'Go back to sign in' }, 'Nothing was done.');
}
