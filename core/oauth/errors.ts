import { DomainError, type DomainErrorKind } from '../shared/errors.ts';

/** The `error` codes of spec 7.3–7.5. `interaction_required` and `temporarily_unavailable` are never used. */
export type OAuthErrorCode =
  | 'invalid_client_metadata'
  | 'invalid_redirect_uri'
  | 'invalid_scope'
  | 'invalid_request'
  | 'invalid_client'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_grant'
  | 'invalid_target'
  | 'login_required'
  | 'consent_required'
  | 'access_denied'
  | 'server_error'
  | 'invalid_token'
  | 'insufficient_scope';

/** The kinds an OAuth failure takes: a bad request, an unknown client or token, or a scope not granted. */
export type OAuthErrorKind = Extract<DomainErrorKind, 'invalid_input' | 'unauthenticated' | 'forbidden'>;

/**
 * An OAuth failure. Where it surfaces decides its form: a JSON body `{ error, error_description }`
 * (7.3, 7.5) or, once the client and redirect URI are trusted, a redirect (7.4).
 * The code alone does not decide the kind: `invalid_client` is a bad request at the authorization
 * endpoint but a failed client authentication at the token endpoint.
 */
export class OAuthError extends DomainError {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    kind: OAuthErrorKind = 'invalid_input',
    /** The scope an `insufficient_scope` answer names (7.5). */
    readonly scope?: string,
  ) {
    super(kind, description, 'oauth');
    this.name = 'OAuthError';
  }
}

export const oauthError = (code: OAuthErrorCode, description: string, kind: OAuthErrorKind = 'invalid_input') => new OAuthError(code, description, kind);
