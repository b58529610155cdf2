import { html, layout, raw, type Html } from '../../kernel/pages.ts';
import { MAX_COMMENT_LENGTH, RATINGS, type CsatResponse, type SurveyView } from '../../../core/helpdesk/csat/csat.ts';

/**
 * The survey's pages (server-rendered, no JavaScript, escaped by the `html` tag): the form, the
 * thank-you, "already answered", and the error pages. Every id a test or a person relies on is
 * stable: `#survey`, `#rating-1`…`#rating-5`, `#comment`, `#submit`, `#thanks`, `#answered`, `#error`.
 */

const RATING_WORDS: Record<number, string> = { 1: 'Very dissatisfied', 2: 'Dissatisfied', 3: 'Neutral', 4: 'Satisfied', 5: 'Very satisfied' };

// The shared layout has no styles for a text area or a row of choices; inline styles are allowed by the CSP.
const SURVEY_STYLE = raw(`<style>
textarea{width:100%;min-height:6rem;padding:.6rem .7rem;font:inherit;border:1px solid #b9c0cb;border-radius:8px}
.ratings{display:flex;gap:.5rem;flex-wrap:wrap}
.ratings label{display:flex;flex-direction:column;align-items:center;font-weight:400;margin:0;padding:.4rem .6rem;border:1px solid #dde1e7;border-radius:8px;min-width:4.5rem;text-align:center}
.ratings strong{font-size:1.2rem}
</style>`);

function heading(view: Pick<SurveyView, 'workspaceName' | 'inboxName'>): Html {
  return html`<p class="muted" id="from"><span id="workspace-name">${view.workspaceName}</span> · <span id="inbox-name">${view.inboxName}</span></p>`;
}

/** The form; after a 400 it shows the problems and keeps what was typed. */
export function surveyPage(view: SurveyView, action: string, previous: { rating?: string; comment?: string; errors?: string[] } = {}): string {
  return layout(
    'How did we do?',
    html`${SURVEY_STYLE}
${heading(view)}
<h1>How did we do?</h1>
<p>Please rate the help you received from ${view.workspaceName}.</p>
${previous.errors?.length ? html`<div class="error" id="error" role="alert">${previous.errors.map((e) => html`<p>${e}</p>`)}</div>` : ''}
<form method="post" action="${action}" id="survey">
<fieldset>
<legend>Your rating</legend>
<div class="ratings">
${RATINGS.map(
  (r) => html`<label for="rating-${r}"><input type="radio" id="rating-${r}" name="rating" value="${r}" required${previous.rating === String(r) ? raw(' checked') : ''}><strong>${r}</strong><small>${RATING_WORDS[r]}</small></label>`,
)}
</div>
</fieldset>
<label for="comment">Anything you would like to tell us? <span class="muted">(optional)</span></label>
<textarea id="comment" name="comment" maxlength="${MAX_COMMENT_LENGTH}">${previous.comment ?? ''}</textarea>
<p class="muted">Up to ${MAX_COMMENT_LENGTH} characters. You can answer once.</p>
<div class="actions"><button type="submit" id="submit">Send</button></div>
</form>`,
  );
}

function answerSummary(response: CsatResponse): Html {
  return html`<p>Your rating: <strong id="given-rating">${response.rating}</strong> of 5 (${RATING_WORDS[response.rating] ?? ''}).</p>
${response.comment ? html`<p class="muted">Your comment: <span id="given-comment">${response.comment}</span></p>` : ''}`;
}

export function thanksPage(view: Pick<SurveyView, 'workspaceName' | 'inboxName'>, response: CsatResponse): string {
  return layout(
    'Thank you',
    html`${heading(view)}
<h1>Thank you!</h1>
<p class="notice" id="thanks" role="status">Your answer was received. Thank you for helping ${view.workspaceName} improve.</p>
${answerSummary(response)}`,
  );
}

export function alreadyAnsweredPage(view: SurveyView): string {
  return layout(
    'Already answered',
    html`${heading(view)}
<h1>Already answered</h1>
<p class="notice" id="answered" role="status">This survey has already been answered. Nothing was changed.</p>
${view.response ? answerSummary(view.response) : ''}`,
  );
}
