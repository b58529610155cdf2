import {
  checkPasswordSetupToken,
  PASSWORD_LINK_INVALID,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  passwordProblems,
  setPassword,
} from '../../../core/identity/passwords.ts';
import type { User } from '../../../core/identity/identity.ts';
import { DomainError } from '../../../core/shared/errors.ts';
import { passwordHasher } from '../../crypto/password-hasher.ts';
import { baseStores } from '../../postgres/stores.ts';
import { announceAccessChange } from '../../realtime/hub.ts';
import type { AppContext } from '../context.ts';
import { endSession, startSession } from '../web-session.ts';
import { formToken, formTokenMatches } from './form-guard.ts';
import { expiredForm, formField, html, htmlResponse, isFormPost, layout, messagePage, webPages } from './html.ts';

/**
 * Setting a password from a signed link (core/identity/passwords.ts; invitations no longer hand
 * these out, people join through /invitations/accept):
 * `GET /account/password?token=…` shows the form, `POST /account/password` sets the password,
 * signs the person in and confirms. The link is valid 7 days and dies once a password is set.
 */
export function passwordSetupPages(ctx: AppContext, home: string) {
  const deps = () => ({ clock: ctx.clock, signingKey: ctx.keys.signing });

  return webPages('pages.password-setup')
    .get(
      '/account/password',
      async ({ request, query }) => {
        const token = formField(query, 'token');
        let user: User;
        try {
          user = await checkPasswordSetupToken(baseStores(ctx.db), deps(), token);
        } catch (error) {
          if (error instanceof DomainError) return deadLink();
          throw error;
        }
        const { csrf, setCookie } = formToken(ctx, request);
        return htmlResponse(passwordPage({ email: user.email, token: token!, csrf }), { cookies: [setCookie] });
      },
    )
    .post(
      '/account/password',
      async ({ request, body }) => {
        if (!isFormPost(request)) return htmlResponse(messagePage('Cannot set the password', 'Send the form from the password page.'), { status: 415 });
        const token = formField(body, 'token');
        if (!formTokenMatches(ctx, request, formField(body, 'csrf'))) {
          return expiredForm(token ? { href: `/account/password?token=${encodeURIComponent(token)}`, label: 'Open the form again' } : undefined);
        }
        const password = formField(body, 'password') ?? '';
        const confirmation = formField(body, 'password_confirm');
        const outcome = await ctx.db.transaction().execute(async (trx) => {
          const stores = baseStores(trx);
          let user: User;
          try {
            user = await checkPasswordSetupToken(stores, deps(), token); // locks the person's row
          } catch (error) {
            if (error instanceof DomainError) return { kind: 'dead' as const };
            throw error;
          }
          const problems = passwordProblems(password);
          if (confirmation !== undefined && confirmation !== password) problems.push('The two passwords do not match');
          if (problems.length > 0) return { kind: 'invalid' as const, user, problems };
          await setPassword(stores, passwordHasher, user.id, password);
          return { kind: 'set' as const, user };
        });

        if (outcome.kind === 'dead') return deadLink();
        if (outcome.kind === 'set') await announceAccessChange(ctx.realtime, { userId: outcome.user.id });
        if (outcome.kind === 'invalid') {
          const { csrf, setCookie } = formToken(ctx, request);
          return htmlResponse(passwordPage({ email: outcome.user.email, token: token!, csrf, errors: outcome.problems }), {
            status: 400,
            cookies: [setCookie],
          });
        }
        await endSession(ctx, request); // whoever was signed in on this browser before
        const { setCookie } = await startSession(ctx, outcome.user.id, request);
        return htmlResponse(
          messagePage('Password set', `Your password is set. You are signed in as ${outcome.user.email}.`, {
            kind: 'notice',
            extra: html`<p><a href="${home}" id="continue">Continue to Switchboard</a></p>`,
          }),
          { cookies: [setCookie] },
        );
      },
    );
}

function deadLink(): Response {
  return htmlResponse(messagePage('Link expired', PASSWORD_LINK_INVALID), { status: 400 });
}

function passwordPage(view: { email: string; token: string; csrf: string; errors?: string[] }): string {
  return layout(
    'Set your password',
    html`<h1>Set your password</h1>
<p>For <strong id="email">${view.email}</strong>.</p>
${view.errors?.length ? html`<div class="error" id="error" role="alert">${view.errors.map((e) => html`<p>${e}</p>`)}</div>` : ''}
<form method="post" action="/account/password">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="token" value="${view.token}">
<input type="text" name="username" value="${view.email}" autocomplete="username" hidden>
<label for="password">New password</label>
<input type="password" id="password" name="password" autocomplete="new-password" required>
<p class="muted" id="password-rule">${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.</p>
<label for="password-confirm">Repeat the password</label>
<input type="password" id="password-confirm" name="password_confirm" autocomplete="new-password" required>
<div class="actions"><button type="submit" id="set-password">Set password</button></div>
</form>`,
  );
}
