import { acceptInvitation, declineInvitation, InvitationUnusable, openInvitation, type InvitationDetails } from '../../../core/identity/invitations.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../../core/identity/passwords.ts';
import { DomainError } from '../../../core/shared/errors.ts';
import { passwordHasher } from '../../crypto/password-hasher.ts';
import { baseStores } from '../../postgres/stores.ts';
import type { AppContext } from '../context.ts';
import { authFailures, clientAddress } from '../auth-failures.ts';
import { endSession, startSession } from '../web-session.ts';
import { announceAccessChange } from '../../realtime/hub.ts';
import { formToken, formTokenMatches } from './form-guard.ts';
import { expiredForm, formField, html, type Html, htmlResponse, isFormPost, layout, messagePage, webPages } from './html.ts';

/**
 * Answering an invitation: `GET /invitations/accept?token=…` shows the workspace, the roles and
 * who invites, with one form for both cases (the page does not tell whether the address has an
 * account): a password (and a name) to join. `POST /invitations/accept` with `action=accept`
 * joins, with the existing account's password or as a new account with the chosen one, and
 * signs in; `action=decline` declines. Wrong passwords count against the sign-in limit per IP.
 * A mailed invitation to an address whose account nobody verified also offers `action=takeover`:
 * the chosen password replaces the account's, and every session, API token and OAuth grant of
 * the account ends (core/identity/account-reclaim.ts); open sockets are re-checked at once.
 */
export function invitationPages(ctx: AppContext, home: string) {
  const throttle = authFailures(ctx);

  return webPages('pages.invitation')
    .get(
      '/invitations/accept',
      async ({ request, query }) => {
        const token = formField(query, 'token');
        const details = await orUnusable(openInvitation(baseStores(ctx.db), ctx, token));
        if (details instanceof Response) return details;
        const { csrf, setCookie } = formToken(ctx, request);
        return htmlResponse(invitationPage({ details, token: token!, csrf }), { cookies: [setCookie] });
      },
    )
    .post(
      '/invitations/accept',
      async ({ request, body, server }) => {
        if (!isFormPost(request)) return htmlResponse(messagePage('Cannot answer the invitation', 'Send the form from the invitation page.'), { status: 415 });
        const token = formField(body, 'token');
        if (!formTokenMatches(ctx, request, formField(body, 'csrf'))) {
          return expiredForm(token ? { href: `/invitations/accept?token=${encodeURIComponent(token)}`, label: 'Open the invitation again' } : undefined);
        }

        if (formField(body, 'action') === 'decline') {
          const declined = await orUnusable(ctx.db.transaction().execute((trx) => declineInvitation(baseStores(trx), ctx, token)));
          if (declined instanceof Response) return declined;
          return htmlResponse(messagePage('Invitation declined', 'You declined the invitation. Nothing else changed.', { kind: 'notice' }));
        }

        // A password typed here is a sign-in attempt for the invited address: the same throttle
        // (per account, per address, in Postgres) as /signin, so an inviter holding the link
        // cannot guess an existing account's password faster than at the sign-in page.
        const invited = await orUnusable(openInvitation(baseStores(ctx.db), ctx, token));
        if (invited instanceof Response) return invited;
        const attempt = await throttle.signIn(invited.invitation.email, clientAddress(ctx, request, server?.requestIP(request)?.address));
        if (!attempt.admitted) {
          return htmlResponse(messagePage('Too many attempts', `Too many failed attempts. Wait ${attempt.retryAfterSeconds} seconds, then try again.`), {
            status: 429,
            headers: { 'retry-after': String(attempt.retryAfterSeconds) },
          });
        }
        const password = formField(body, 'password') ?? '';
        const confirmation = formField(body, 'password_confirm');
        const takeOver = formField(body, 'action') === 'takeover';
        try {
          if (confirmation !== undefined && confirmation !== password) throw new DomainError('invalid_input', 'The two passwords do not match.');
          if (takeOver && confirmation === undefined) throw new DomainError('invalid_input', 'Repeat the new password.');
          const joined = await ctx.db
            .transaction()
            .execute((trx) => acceptInvitation(baseStores(trx), { ...ctx, hasher: passwordHasher }, token, { password, name: formField(body, 'name'), takeOver }));
          // Sockets opened with the sessions and tokens just ended are dropped now, not at their next heartbeat.
          if (joined.tookOver) await announceAccessChange(ctx.realtime, { userId: joined.user.id });
          await attempt.succeeded();
          await endSession(ctx, request); // whoever was signed in on this browser before
          const { setCookie } = await startSession(ctx, joined.user.id, request);
          return htmlResponse(
            messagePage('Welcome', `You joined ${joined.workspace.name}. You are signed in as ${joined.user.email}.`, {
              kind: 'notice',
              extra: html`<p><a href="${home}" id="continue">Continue to Switchboard</a></p>`,
            }),
            { cookies: [setCookie] },
          );
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          if (error instanceof InvitationUnusable) return unusable(error);
          const details = await orUnusable(openInvitation(baseStores(ctx.db), ctx, token));
          if (details instanceof Response) return details;
          const { csrf, setCookie } = formToken(ctx, request);
          return htmlResponse(invitationPage({ details, token: token!, csrf, errors: error.messages ?? [error.message], name: formField(body, 'name') }), {
            status: 400,
            cookies: [setCookie],
          });
        }
      },
    );
}

/** The step's outcome, or the "not valid" page when the invitation cannot be used (unknown, expired, answered). */
async function orUnusable<T>(step: Promise<T>): Promise<T | Response> {
  try {
    return await step;
  } catch (error) {
    if (error instanceof DomainError) return unusable(error);
    throw error;
  }
}

function unusable(error: DomainError): Response {
  return htmlResponse(messagePage('Invitation not valid', error.message), { status: 400 });
}

function joinFields(name: string | undefined): Html {
  return html`<p class="muted">If you already have a Switchboard account with this address, enter its password. If you are new, choose a password
(${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters) and your name.</p>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password">
<label for="password-confirm">Repeat the password</label>
<input type="password" id="password-confirm" name="password_confirm" autocomplete="off">
<label for="name">Your name (new accounts only)</label>
<input type="text" id="name" name="name" value="${name ?? ''}" maxlength="120" autocomplete="name">
<div class="actions">
<button type="submit" id="accept" name="action" value="accept">Accept and join</button>
<button type="submit" id="decline" name="action" value="decline" class="secondary">Decline</button>
</div>`;
}

/** A mailed invitation to an address whose account nobody confirmed: join with its password, or take it over. */
function takeOverFields(name: string | undefined): Html {
  return html`<div class="notice" id="takeover-notice"><p>An account with this address already exists, but nobody has confirmed the address yet.
If it is yours, enter its password and accept. If you did not make it or do not know its password, choose a new password
(${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters) and take it over: everyone signed in to it is signed out, its API tokens and
app authorizations stop working, it leaves the workspaces it joined through an invitation link, and it gets a new personal workspace.</p></div>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="new-password">
<label for="password-confirm">Repeat the password</label>
<input type="password" id="password-confirm" name="password_confirm" autocomplete="off">
<label for="name">Your name</label>
<input type="text" id="name" name="name" value="${name ?? ''}" maxlength="120" autocomplete="name">
<div class="actions">
<button type="submit" id="accept" name="action" value="accept">Accept with its password</button>
<button type="submit" id="takeover" name="action" value="takeover">Take the account over with this new password</button>
<button type="submit" id="decline" name="action" value="decline" class="secondary">Decline</button>
</div>`;
}

function invitationPage(view: { details: InvitationDetails; token: string; csrf: string; errors?: string[]; name?: string }): string {
  const { invitation, workspace, inviterName, canTakeOver } = view.details;
  return layout(
    `Join ${workspace.name}`,
    html`<h1>Join <span id="workspace">${workspace.name}</span></h1>
<p>${inviterName ? html`<strong id="inviter">${inviterName}</strong> invites` : 'You are invited as'} <strong id="email">${invitation.email}</strong>
as <strong id="roles">${invitation.roles.join(', ')}</strong>.</p>
${view.errors?.length ? html`<div class="error" id="error" role="alert">${view.errors.map((e) => html`<p>${e}</p>`)}</div>` : ''}
<form method="post" action="/invitations/accept">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="token" value="${view.token}">
<input type="text" name="username" value="${invitation.email}" autocomplete="username" hidden>
${canTakeOver ? takeOverFields(view.name) : joinFields(view.name)}
</form>
<p class="muted">This invitation works until ${invitation.expiresAt.toISOString()}.</p>`,
  );
}
