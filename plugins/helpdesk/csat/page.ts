import { Elysia } from 'elysia';
import { answerSurvey, openSurvey, type CsatState, type SurveyView } from '../../../core/helpdesk/csat/csat.ts';
import { DomainError } from '../../../core/shared/errors.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { CONTENT_SECURITY_POLICY, htmlResponse, isFormPost, messagePage } from '../../kernel/pages.ts';
import { rateLimiter } from '../../kernel/http.ts';
import { csatStores } from './store.ts';
import { alreadyAnsweredPage, surveyPage, thanksPage } from './page-views.ts';

/**
 * Requests per client IP and minute that count against the limit: every submission, and every
 * link that names no survey (guessing). Viewing a real survey gives its slot back. Once over,
 * every request is 429 — real links too, so a guesser learns nothing — until a minute passes.
 */
export const CSAT_ATTEMPTS_PER_MINUTE = 20;

/**
 * The pages add `form-action 'self'` to the shared policy: the form posts only to this service
 * (the consent page cannot have it, its answer redirects to the client).
 */
export const CSAT_PAGE_POLICY = `${CONTENT_SECURITY_POLICY}; form-action 'self'`;

export const surveyPath = (conversationId: string) => `/public/helpdesk/csat/${conversationId}`;

/**
 * The survey link (spec 4.5, 5.6): `GET /public/helpdesk/csat/{conversationId}` shows the form,
 * `POST` stores the answer once. "Conversation id only; no token, no expiry; anyone with the
 * link may view and submit once": the id in the path is the credential.
 *
 * No CSRF token: the pages use no cookie and no session, so a forged cross-site post carries no
 * authority the forger lacks — to forge one they need the link, and with it they may submit
 * themselves. What protects the survey is the id's unguessability (UUID v7: 74 random bits),
 * the per-IP limit on guesses, and the single answer. `Referrer-Policy: no-referrer` keeps the
 * link out of other sites' logs.
 */
export function csatPages(ctx: PluginContext) {
  const limiter = rateLimiter({ limit: CSAT_ATTEMPTS_PER_MINUTE, windowMs: 60_000, clock: ctx.clock });
  const hidden = { detail: { hide: true } };
  const answer = (body: string, status = 200) =>
    htmlResponse(body, { status, headers: { 'content-security-policy': CSAT_PAGE_POLICY, 'x-robots-tag': 'noindex, nofollow' } });
  const notFoundPage = () => answer(messagePage('Survey not found', 'This survey link is not valid. Check that you opened the whole link from your message.'), 404);
  const tooMany = () =>
    htmlResponse(messagePage('Too many attempts', 'Too many survey requests from your network. Wait a minute, then try again.'), {
      status: 429,
      headers: { 'retry-after': '60', 'content-security-policy': CSAT_PAGE_POLICY },
    });
  const ipOf = (request: Request, server: { requestIP(r: Request): { address: string } | null } | null) => server?.requestIP(request)?.address ?? 'unknown';
  const open = async (id: string): Promise<(SurveyView & { state: CsatState }) | undefined> => {
    try {
      return await openSurvey(ctx.storage.read(csatStores), id);
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'not_found') return undefined;
      throw error;
    }
  };

  return new Elysia({ name: 'plugins.helpdesk.csat.pages' })
    .get(
      '/public/helpdesk/csat/:conversationId',
      async ({ request, params, server }) => {
        const ip = ipOf(request, server);
        if (!limiter.hit(ip)) return tooMany();
        const view = await open(params.conversationId);
        if (!view) return notFoundPage();
        limiter.release(ip);
        if (view.state === 'ANSWERED') return answer(alreadyAnsweredPage(view));
        return answer(surveyPage(view, surveyPath(view.survey.conversationId)));
      },
      hidden,
    )
    .post(
      '/public/helpdesk/csat/:conversationId',
      async ({ request, params, body, server }) => {
        if (!limiter.hit(ipOf(request, server))) return tooMany();
        if (!isFormPost(request)) return answer(messagePage('Cannot send the survey', 'Send the survey form from the survey page.'), 415);
        const form = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
        try {
          const outcome = await ctx.storage.transaction(csatStores, (s) => answerSurvey(s, ctx, params.conversationId, { rating: form.rating, comment: form.comment }));
          if (!outcome.answered) return answer(alreadyAnsweredPage(outcome.view), 409);
          return answer(thanksPage(outcome.view, outcome.response));
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          if (error.kind === 'not_found') return notFoundPage();
          if (error.kind !== 'invalid_input') throw error;
          const view = await open(params.conversationId);
          if (!view) return notFoundPage();
          const typed = (value: unknown) => (typeof value === 'string' ? value : undefined);
          return answer(surveyPage(view, surveyPath(view.survey.conversationId), { rating: typed(form.rating), comment: typed(form.comment), errors: error.messages ?? [error.message] }), 400);
        }
      },
      hidden,
    );
}
