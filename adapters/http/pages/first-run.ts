import {
  FIRST_RUN_PATH,
  firstOwnerProblems,
  firstRunTokenMatches,
  PERSON_NAME_MAX_LENGTH,
  setUpFirstOwner,
  WORKSPACE_NAME_MAX_LENGTH,
} from '../../../core/identity/first-run.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../../core/identity/passwords.ts';
import { DomainError } from '../../../core/shared/errors.ts';
import { passwordHasher } from '../../crypto/password-hasher.ts';
import { baseStores } from '../../postgres/stores.ts';
import { authFailures, clientAddress } from '../auth-failures.ts';
import type { AppContext } from '../context.ts';
import { endSession, startSession } from '../web-session.ts';
import { formToken, formTokenMatches } from './form-guard.ts';
import { expiredForm, formField, html, htmlResponse, isFormPost, layout, messagePage, seeOther, webPages } from './html.ts';


/**
 * First run (core/identity/first-run.ts): `GET /setup?token=…` shows the form that makes the
 * first Owner and workspace while nobody exists; `POST /setup` makes them, signs the Owner in and
 * redirects to the home page (`home`). Once anyone exists the link answers "already set up". A wrong
 * token is a plain 404 (and counts against the client's signed-link failures).
 */
export function firstRunPages(ctx: AppContext, home: string) {
  const refuse = async (request: Request, peer: string | undefined): Promise<Response> => {
    await authFailures(ctx).failed('signed-link', clientAddress(ctx, request, peer));
    return htmlResponse(messagePage('Not found', 'There is nothing at this address.'), { status: 404 });
  };

  return webPages('pages.first-run')
    .get(FIRST_RUN_PATH, async ({ request, query, server }) => {
      const token = formField(query, 'token');
      if (!firstRunTokenMatches(ctx.keys.signing, token)) return refuse(request, server?.requestIP(request)?.address);
      if (await baseStores(ctx.db).identity.anyUser()) return alreadySetUp();
      const { csrf, setCookie } = formToken(ctx, request);
      return htmlResponse(setupPage({ token: token!, csrf }), { cookies: [setCookie] });
    })
    .post(FIRST_RUN_PATH, async ({ request, body, server }) => {
      if (!isFormPost(request)) return htmlResponse(messagePage('Cannot set up', 'Send the form from the set-up page.'), { status: 415 });
      const token = formField(body, 'token');
      if (!firstRunTokenMatches(ctx.keys.signing, token)) return refuse(request, server?.requestIP(request)?.address);
      if (await baseStores(ctx.db).identity.anyUser()) return alreadySetUp();
      if (!formTokenMatches(ctx, request, formField(body, 'csrf'))) {
        return expiredForm({ href: `${FIRST_RUN_PATH}?token=${encodeURIComponent(token!)}`, label: 'Open the set-up form again' }, 'Nothing was created.');
      }
      const input = {
        email: formField(body, 'email') ?? '',
        name: formField(body, 'name') ?? '',
        password: formField(body, 'password') ?? '',
        workspace: formField(body, 'workspace') ?? '',
      };
      const problems = firstOwnerProblems({ ...input, passwordConfirmation: formField(body, 'password_confirm') });
      if (problems.length > 0) {
        const { csrf, setCookie } = formToken(ctx, request);
        return htmlResponse(setupPage({ token: token!, csrf, values: input, errors: problems }), { status: 400, cookies: [setCookie] });
      }

      let outcome: Awaited<ReturnType<typeof setUpFirstOwner>>;
      try {
        // Serializable: of two set-ups at once, both of which saw nobody, only one commits.
        outcome = await ctx.db
          .transaction()
          .setIsolationLevel('serializable')
          .execute((trx) => setUpFirstOwner(baseStores(trx), { ...ctx, hasher: passwordHasher }, input));
      } catch (error) {
        if (error instanceof DomainError) {
          const { csrf, setCookie } = formToken(ctx, request);
          return htmlResponse(setupPage({ token: token!, csrf, values: input, errors: error.messages ?? [error.message] }), { status: 400, cookies: [setCookie] });
        }
        // The losing one of two concurrent set-ups (a serialization failure, or the same email twice).
        if (await baseStores(ctx.db).identity.anyUser()) return alreadySetUp();
        throw error;
      }
      if (outcome === 'already-set-up') return alreadySetUp();
      await endSession(ctx, request);
      const { setCookie } = await startSession(ctx, outcome.user.id);
      return seeOther(home, [setCookie]);
    });
}

function alreadySetUp(): Response {
  return htmlResponse(
    messagePage('Already set up', 'This Switchboard is already set up: its first Owner exists, so this set-up link no longer works.', {
      extra: html`<p><a href="/signin" id="sign-in">Sign in</a></p>`,
    }),
    { status: 410 },
  );
}

function setupPage(view: { token: string; csrf: string; values?: { email: string; name: string; workspace: string }; errors?: string[] }): string {
  const values = view.values ?? { email: '', name: '', workspace: '' };
  return layout(
    'Set up Switchboard',
    html`<h1>Set up Switchboard</h1>
<p>Nobody uses this Switchboard yet. Create its first Owner (you) and their workspace; you can invite others afterwards.</p>
${view.errors?.length ? html`<div class="error" id="error" role="alert">${view.errors.map((e) => html`<p>${e}</p>`)}</div>` : ''}
<form method="post" action="${FIRST_RUN_PATH}">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="token" value="${view.token}">
<label for="email">Your email</label>
<input type="email" id="email" name="email" value="${values.email}" autocomplete="username" required autofocus>
<label for="name">Your name <span class="muted">(optional)</span></label>
<input type="text" id="name" name="name" value="${values.name}" autocomplete="name" maxlength="${PERSON_NAME_MAX_LENGTH}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="new-password" required aria-describedby="password-rule">
<p class="muted" id="password-rule">${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.</p>
<label for="password-confirm">Repeat the password</label>
<input type="password" id="password-confirm" name="password_confirm" autocomplete="new-password" required>
<label for="workspace">Workspace name</label>
<input type="text" id="workspace" name="workspace" value="${values.workspace}" maxlength="${WORKSPACE_NAME_MAX_LENGTH}" required>
<div class="actions"><button type="submit" id="set-up">Create the Owner and workspace</button></div>
</form>`,
  );
}
