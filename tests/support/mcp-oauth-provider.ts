import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { TestBrowser } from './browser.ts';
import { authorizeInBrowser } from './oauth.ts';

/**
 * An in-memory `OAuthClientProvider` for the MCP SDK client whose "user agent" is real Chromium:
 * `redirectToAuthorization` signs the person in, approves on the consent page (choosing a
 * workspace, unchecking scopes if told) and keeps what came back on the redirect URI.
 *
 *   const provider = new BrowserOAuthProvider(browser, person, { workspaceId });
 *   await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })); // throws UnauthorizedError
 *   await transport.finishAuth(provider.code!);
 */
export class BrowserOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl: string;
  /** Every authorize URL the SDK sent the browser to, in order. */
  readonly authorizeUrls: URL[] = [];
  /** Every URL the browser came back to (code, state, iss, or an error). */
  readonly callbacks: URL[] = [];
  private client?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier?: string;
  private lastState?: string;

  constructor(
    private readonly browser: TestBrowser,
    private readonly person: { email: string; password?: string },
    public choice: { workspaceId?: string; uncheck?: string[]; decision?: 'approve' | 'deny'; onConsentPage?: (page: import('playwright-core').Page) => Promise<void> } = {},
    private readonly metadata: Partial<OAuthClientMetadata> = {},
    redirectUrl = 'http://127.0.0.1:1/callback',
  ) {
    this.redirectUrl = redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP test assistant',
      redirect_uris: [this.redirectUrl],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...this.metadata,
    };
  }

  state(): string {
    this.lastState = crypto.randomUUID();
    return this.lastState;
  }

  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  /** What the SDK asked to forget (it does after `invalid_client` / `invalid_grant`), in order. */
  readonly invalidated: string[] = [];
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    this.invalidated.push(scope);
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizeUrls.push(new URL(url));
    const back = await this.browser.withPage((page) => authorizeInBrowser(page, url.toString(), this.redirectUrl, this.person, this.choice));
    this.callbacks.push(back);
  }

  /** The code from the last callback, after checking state came back unchanged. */
  get code(): string {
    const back = this.callbacks.at(-1);
    if (!back) throw new Error('the browser never came back');
    if (back.searchParams.get('state') !== this.lastState) throw new Error(`state mismatch on ${back}`);
    const code = back.searchParams.get('code');
    if (!code) throw new Error(`no code on the callback: ${back}`);
    return code;
  }
}

export interface WireEntry {
  method: string;
  url: string;
  /** The request body as sent (form or JSON text), for the OAuth endpoints. */
  body?: string;
  authorization?: string;
  status: number;
  wwwAuthenticate: string | null;
}

/** A fetch that records every request the SDK makes (for the transport's `fetch` option). */
export function recordingFetch(log: WireEntry[]): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    const body = typeof init?.body === 'string' ? init.body : init?.body instanceof URLSearchParams ? init.body.toString() : undefined;
    const response = await fetch(url, init);
    log.push({
      method: init?.method ?? 'GET',
      url: String(url),
      body,
      authorization: headers.get('authorization') ?? undefined,
      status: response.status,
      wwwAuthenticate: response.headers.get('www-authenticate'),
    });
    return response;
  };
}
