/** The host's server-rendered page kit (escaping `html` template, layout, CSP headers) for a plugin's pages. */
export { Html, CONTENT_SECURITY_POLICY, html, htmlResponse, isFormPost, layout, messagePage, raw } from '../../adapters/http/pages/html.ts';
