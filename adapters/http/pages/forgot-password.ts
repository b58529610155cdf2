import { errorField } from '../../logging/logger.ts';
import { passwordResetMail, resetLinkForEmail } from '../../../core/identity/password-reset.ts';
import { PASSWORD_RESET_MINUTES } from '../../../core/identity/passwords.ts';
import { normalizeEmail } from '../../../core/identity/workspaces.ts';
import { baseStores } from '../../postgres/stores.ts';
import { authFailures, clientAddress } from '../auth-failures.ts';
import type { AppContext } from '../context.ts';
import { formToken, formTokenMatches } from './form-guard.ts';
import { expiredForm, formField, html, htmlResponse, isFormPost, layout, messagePage, webPages } from './html.ts';

/**
 * "Forgot password?": `GET /forgot-password` asks for an email; `POST /forgot-password` mails a
 * reset link (core/identity/password-reset.ts: the set-up page's link, valid one hour, once) when
 * `SMTP_URL` is set and someone has that email. The answer is the same whether or not anyone
 * does, and comes before the mail is sent, so neither its words nor its timing tell. Requests are
 * throttled per email and per address. Without mail the page says to ask an Owner or Admin.
 */
export function forgotPasswordPages(ctx: AppContext) {
  const throttle = authFailures(ctx);

  return webPages('pages.forgot-password')
    .get('/forgot-password', ({ request }) => {
      const { csrf, setCookie } = formToken(ctx, request);
      return htmlResponse(forgotPage({ csrf, mail: Boolean(ctx.mailer) }), { cookies: [setCookie] });
    })
    .post('/forgot-password', async ({ request, body, server }) => {
      if (!isFormPost(request)) return htmlResponse(messagePage('Cannot reset', 'Send the form from the password reset page.'), { status: 415 });
      if (!formTokenMatches(ctx, request, formField(body, 'csrf'))) {
        return expiredForm({ href: '/forgot-password', label: 'Open the form again' }, 'No mail was sent.');
      }
      const mailer = ctx.mailer;
      if (!mailer) return htmlResponse(noMailPage(), { status: 503 });
      let email: string;
      try {
        email = normalizeEmail(formField(body, 'email') ?? '');
      } catch {
        const { csrf, setCookie } = formToken(ctx, request);
        return htmlResponse(forgotPage({ csrf, mail: true, error: 'Enter a valid email address.' }), { status: 400, cookies: [setCookie] });
      }
      const attempt = await throttle.passwordReset(email, clientAddress(ctx, request, server?.requestIP(request)?.address));
      if (!attempt.admitted) {
        const wait = attempt.retryAfterSeconds;
        return htmlResponse(messagePage('Too many requests', `Too many password reset requests. Wait ${wait} second${wait === 1 ? '' : 's'}, then try again.`), {
          status: 429,
          headers: { 'retry-after': String(wait) },
        });
      }
      const deps = { clock: ctx.clock, signingKey: ctx.keys.signing, publicUrl: ctx.config.publicUrl };
      // Not awaited: the answer must not wait longer when the address has an account.
      void resetLinkForEmail(baseStores(ctx.db), deps, email)
        .then((link) => link && mailer.send(passwordResetMail({ to: link.user.email, url: link.url, expiresAt: link.expiresAt })))
        .catch((error) => ctx.log.error({ error: errorField(error) }, 'password reset mail not sent'));
      return htmlResponse(
        messagePage('Check your mail', `If an account uses ${email}, a link to choose a new password is on its way there. It works once, for ${PASSWORD_RESET_MINUTES} minutes.`, {
          kind: 'notice',
          extra: html`<p><a href="/signin" id="sign-in">Back to sign in</a></p>`,
        }),
      );
    });
}

function forgotPage(view: { csrf: string; mail: boolean; error?: string }): string {
  if (!view.mail) return noMailPage();
  return layout(
    'Reset your password',
    html`<h1>Reset your password</h1>
<p>Enter the email of your account; we mail you a link to choose a new password.</p>
${view.error ? html`<p class="error" id="error" role="alert">${view.error}</p>` : ''}
<form method="post" action="/forgot-password">
<input type="hidden" name="csrf" value="${view.csrf}">
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="username" required autofocus>
<div class="actions"><button type="submit" id="send-link">Send the link</button></div>
</form>
<p><a href="/signin" id="sign-in">Back to sign in</a></p>`,
  );
}

function noMailPage(): string {
  return layout(
    'Reset your password',
    html`<h1>Reset your password</h1>
<p class="notice" id="notice" role="status">This Switchboard does not send mail. Ask an Owner or Admin of your workspace for a password reset link.</p>
<p><a href="/signin" id="sign-in">Back to sign in</a></p>`,
  );
}
