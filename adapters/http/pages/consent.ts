import { html, layout, type Html } from './html.ts';

/**
 * The OAuth consent screen (spec 5.3), as a pure renderer; the authorize routes own the flow.
 * The form posts (form-urlencoded) to `/v3/oauth/authorize/decision`: `request_id`, `csrf`,
 * `workspace_id`, `scope` (once per checked box; a required scope's box is locked and a hidden
 * field submits it) and `decision` = `approve` | `deny` (the button pressed).
 */
export interface ConsentView {
  requestId: string;
  csrf: string;
  client: { name: string; logoUri: string | null; clientUri: string | null; verified: boolean; selfRegistered: boolean; metadataDocumentHost?: string | null };
  user: { email: string };
  workspaces: { id: string; name: string; isPersonal: boolean }[]; // where the person is Owner or Admin; the personal one included
  /** `granted`: already allowed under the app's standing approval (a step-up asks for the others). */
  scopes: { scope: string; description: string; required: boolean; checked: boolean; granted?: boolean }[];
  /** The approval the app already holds, when it comes back for more (step-up). */
  standing?: { workspaceId: string; workspaceName: string } | null;
  error?: string;
}

export const CONSENT_DECISION_PATH = '/v3/oauth/authorize/decision';
export const SELF_REGISTERED_WARNING = 'This app registered itself; its name was chosen by the app, not verified';
export const METADATA_DOCUMENT_WARNING = 'This app describes itself in a document published at';

/** `scope-<scope with : replaced by ->`, e.g. `scope-messages-send`. */
export function scopeElementId(scope: string): string {
  return `scope-${scope.replace(/:/g, '-')}`;
}

export function renderConsentPage(view: ConsentView): string {
  const logo = imageUrl(view.client.logoUri);
  const site = siteUrl(view.client.clientUri);
  const preselected = view.standing?.workspaceId ?? view.workspaces.find((w) => w.isPersonal)?.id ?? view.workspaces[0]?.id;
  const added = view.standing ? view.scopes.filter((s) => !s.granted).map((s) => s.scope) : [];
  const documentHost = view.client.metadataDocumentHost;

  return layout(
    `Authorize ${view.client.name}`,
    html`<div class="app">
${logo ? html`<img id="client-logo" src="${logo}" alt="" referrerpolicy="no-referrer" width="56" height="56">` : ''}
<div>
<h1 id="client-name">${view.client.name}</h1>
${view.client.verified ? html`<span class="badge" id="verified-badge" title="Verified by the platform">Verified</span>` : ''}
${site ? html`<p class="muted"><a id="client-site" href="${site}" rel="noopener noreferrer" target="_blank">${site}</a></p>` : ''}
</div>
</div>
${
  documentHost
    ? html`<p class="warning" id="metadata-document-host" role="note">${METADATA_DOCUMENT_WARNING} <strong>${documentHost}</strong>; its name was chosen by the app${view.client.verified ? '' : ', not verified'}.</p>`
    : view.client.selfRegistered && !view.client.verified
      ? html`<p class="warning" id="self-registered-warning" role="note">${SELF_REGISTERED_WARNING}</p>`
      : ''
}
<p>wants to access your Switchboard account. Signed in as <strong id="signed-in-email">${view.user.email}</strong>.</p>
${view.standing && added.length > 0 ? html`<p id="step-up" role="note">This app already has access to <strong>${view.standing.workspaceName}</strong> and asks for more: ${added.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s}</code>`)}.</p>` : ''}
${view.error ? html`<p class="error" id="error" role="alert">${view.error}</p>` : ''}
<form method="post" action="${CONSENT_DECISION_PATH}" id="consent">
<input type="hidden" name="request_id" value="${view.requestId}">
<input type="hidden" name="csrf" value="${view.csrf}">
<fieldset id="workspaces">
<legend>Workspace</legend>
${
  view.workspaces.length === 0
    ? html`<p class="muted">You are not an Owner or Admin of any workspace.</p>`
    : view.workspaces.map(
        (w) => html`<label class="choice" for="workspace-${w.id}">
<input type="radio" id="workspace-${w.id}" name="workspace_id" value="${w.id}"${w.id === preselected ? html` checked` : ''}>
<span>${w.name}${w.isPersonal ? html` <small>Your personal account</small>` : ''}</span>
</label>`,
      )
}
</fieldset>
<fieldset id="scopes">
<legend>Permissions</legend>
${view.scopes.map(scopeChoice)}
</fieldset>
<div class="actions">
<button type="submit" id="approve" name="decision" value="approve">Allow</button>
<button type="submit" id="deny" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`,
  );
}

function scopeChoice(s: ConsentView['scopes'][number]): Html {
  const id = scopeElementId(s.scope);
  if (s.required) {
    // A disabled box is not submitted: the hidden field carries the locked scope.
    return html`<label class="choice" for="${id}">
<input type="checkbox" id="${id}" value="${s.scope}" checked disabled aria-describedby="${id}-required">
<input type="hidden" name="scope" value="${s.scope}">
<span><code>${s.scope}</code> <small>${s.description}</small><small id="${id}-required">Required by this app</small></span>
</label>`;
  }
  return html`<label class="choice" for="${id}">
<input type="checkbox" id="${id}" name="scope" value="${s.scope}"${s.checked ? html` checked` : ''}>
<span><code>${s.scope}</code> <small>${s.description}</small>${s.granted ? html`<small id="${id}-granted">Already allowed</small>` : ''}</span>
</label>`;
}

/** A logo URL to show: https, or an inline data: image; anything else is not shown. */
function imageUrl(uri: string | null): string | undefined {
  if (!uri) return undefined;
  if (/^data:image\/[a-z0-9.+-]+[;,]/i.test(uri)) return uri;
  return parsed(uri)?.protocol === 'https:' ? uri : undefined;
}

/** The app's site as a link: only http(s) (never `javascript:` and the like). */
function siteUrl(uri: string | null): string | undefined {
  if (!uri) return undefined;
  const url = parsed(uri);
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? uri : undefined;
}

function parsed(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}
