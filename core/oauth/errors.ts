import { DomainError } from '../shared/errors.ts';

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

/**
 * An OAuth failure. Where it surfaces decides its form: a JSON body `{ error, error_description }`
 * (7.3, 7.5) or, once the client and redirect URI are trusted, a redirect (7.4).
 */
export class OAuthError extends DomainError {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    status = 400,
    /** The scope an `insufficient_scope` answer names (7.5). */
    readonly scope?: string,
  ) {
    super(status, description, 'oauth');
    this.name = 'OAuthError';
  }
}

export const oauthError = (code: OAuthErrorCode, description: string, status = 400) => new OAuthError(code, description, status);
