/**
 * Server-rendered pages: an escaping `html` template tag, the one layout (inline CSS, no
 * external assets, no JavaScript) and the security headers every page answer carries.
 *
 * Interpolated values are escaped unless they are `Html` made by this tag (or `raw`); arrays are
 * joined; `null`, `undefined` and `false` render nothing.
 */
import { Elysia } from 'elysia';

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Trusted markup, inserted as is: never user input. */
export function raw(markup: string): Html {
  return new Html(markup);
}

function render(value: Part): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * `default-src 'none'` shuts out scripts, frames, fonts and connections; images may come from
 * https or data: URLs (client logos); inline styles for the layout below. No `form-action`: the
 * consent form's answer is a redirect to the client's redirect URI, which it would block.
 */
export const CONTENT_SECURITY_POLICY = "default-src 'none'; img-src https: data:; style-src 'unsafe-inline'; frame-ancestors 'none'";

export function pageHeaders(): Headers {
  return new Headers({
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
}

/** An HTML answer with the page headers; each of `cookies` becomes its own Set-Cookie header. */
export function htmlResponse(
  body: string | Html,
  init: { status?: number; cookies?: (string | undefined)[]; headers?: Record<string, string> } = {},
): Response {
  const headers = pageHeaders();
  for (const [name, value] of Object.entries(init.headers ?? {})) headers.set(name, value);
  for (const cookie of init.cookies ?? []) if (cookie) headers.append('set-cookie', cookie);
  return new Response(String(body), { status: init.status ?? 200, headers });
}

/** 303 See Other to a same-origin path (the answer to a posted form), with the page headers. */
export function seeOther(location: string, cookies: (string | undefined)[] = []): Response {
  const headers = pageHeaders();
  headers.delete('content-type');
  headers.set('location', location);
  for (const cookie of cookies) if (cookie) headers.append('set-cookie', cookie);
  return new Response(null, { status: 303, headers });
}

const STYLE = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1d2330}
main{max-width:30rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid #dde1e7;border-radius:12px}
h1{font-size:1.4rem;margin:0 0 1rem}
p{margin:.5rem 0}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=email],input[type=password],input[type=text]{width:100%;padding:.6rem .7rem;font:inherit;border:1px solid #b9c0cb;border-radius:8px}
button{font:inherit;padding:.6rem 1.2rem;border-radius:8px;border:1px solid #2456c7;background:#2f6bef;color:#fff;cursor:pointer;margin-top:1.25rem}
button.secondary{background:#fff;color:#1d2330;border-color:#b9c0cb}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
.error{background:#fdecec;border:1px solid #f3b4b4;color:#8a1c1c;padding:.6rem .8rem;border-radius:8px;margin:1rem 0}
.notice{background:#eaf6ec;border:1px solid #a9d8b2;color:#1c5a2a;padding:.6rem .8rem;border-radius:8px;margin:1rem 0}
.warning{background:#fff6e0;border:1px solid #f0d089;color:#6b4b00;padding:.6rem .8rem;border-radius:8px;margin:1rem 0}
.badge{display:inline-block;font-size:.8rem;font-weight:600;padding:.1rem .5rem;border-radius:999px;background:#e3f1ff;color:#0b4f96;border:1px solid #9cc8f5;vertical-align:middle}
.muted{color:#5c6677;font-size:.9rem}
.app{display:flex;gap:1rem;align-items:center;margin-bottom:1rem}
.app img{width:56px;height:56px;border-radius:10px;object-fit:contain;border:1px solid #dde1e7}
fieldset{border:1px solid #dde1e7;border-radius:8px;margin:1rem 0;padding:.5rem 1rem 1rem}
legend{font-weight:600;padding:0 .25rem}
.choice{display:flex;gap:.6rem;align-items:flex-start;margin:.6rem 0;font-weight:400}
.choice input{margin-top:.3rem}
.choice small{display:block;color:#5c6677}
`;

/** The shared layout: a complete document around `body`. */
export function layout(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Switchboard</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`.value;
}

/** The router of a feature's web pages: named once, and left out of the OpenAPI document (pages are no API operations). */
export function webPages(name: string) {
  return new Elysia({ name, detail: { hide: true } });
}

/** A page with a heading and one message (errors, confirmations). */
export function messagePage(title: string, message: string, options: { kind?: 'error' | 'notice'; extra?: Html } = {}): string {
  const kind = options.kind ?? 'error';
  return layout(
    title,
    html`<h1>${title}</h1>
<p class="${kind}" id="${kind === 'error' ? 'error' : 'notice'}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</p>
${options.extra}`,
  );
}

/**
 * 403 for a form whose CSRF token does not match (expired, or not sent from this site), with a
 * link to a fresh form where there is one.
 */
export function expiredForm(retry: { href: string; label: string } | undefined, outcome = 'Nothing was changed.'): Response {
  return htmlResponse(
    messagePage('Form expired', `This form has expired or was not sent from this site. ${outcome}`, {
      extra: retry ? html`<p><a href="${retry.href}" id="retry">${retry.label}</a></p>` : undefined,
    }),
    { status: 403 },
  );
}

/** Whether the request carries a form (application/x-www-form-urlencoded) body. */
export function isFormPost(request: Request): boolean {
  return (request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');
}

/** A single text field of a parsed form body: undefined when absent, repeated or not text. */
export function formField(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * `return_to` made safe: a same-origin path beginning with exactly one `/` (never `//`, `/\`,
 * an absolute URL, whitespace or control characters, which browsers strip or fold into `//`).
 * Anything else gives `fallback`.
 */
export function safeReturnPath(value: unknown, fallback = '/account'): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096) return fallback;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return fallback;
  // eslint-disable-next-line no-control-regex
  if (/[\\\s\u0000-\u001f\u007f]/.test(value)) return fallback;
  const base = 'http://switchboard.invalid';
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return fallback;
  }
  if (url.origin !== base) return fallback;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.startsWith('/') && !path.startsWith('//') ? path : fallback;
}
