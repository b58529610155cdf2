import type { Scope } from './scopes.ts';

/** An OAuth client (spec 2.5) and the values its registration fields may take. */
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/** The name the consent screen shows when a client registered none (spec 4.1). */
export const DEFAULT_CLIENT_NAME = 'Aplicativo sem nome';
export const MAX_REDIRECT_URIS = 10;
export const MAX_CLIENT_NAME = 255;

/** An OAuth client (spec 2.5) as stored; its secret only as a hash. */
export interface OAuthClient {
  id: string;
  secretHash: string | null;
  authMethod: AuthMethod;
  name: string | null;
  clientUri: string | null;
  logoUri: string | null;
  redirectUris: string[];
  grantTypes: GrantType[];
  /** The ceiling of what the client may ask for. */
  scopes: Scope[];
  /** Locked on the consent screen; authorization is refused if one is dropped. */
  requiredScopes: Scope[];
  /** Dashboard setting (section 8); dynamic clients always get expiring tokens. */
  expireAccessTokens: boolean;
  /** Granted by the platform operator only; changes no permission and skips no consent. */
  verified: boolean;
  /**
   * DYNAMIC: registered itself (RFC 7591); DASHBOARD: created by a workspace; METADATA_DOCUMENT: its
   * `client_id` is the https URL of a Client ID Metadata Document, fetched and cached.
   */
  registration: 'DYNAMIC' | 'DASHBOARD' | 'METADATA_DOCUMENT';
  /** METADATA_DOCUMENT clients: when the stored copy of the document goes stale and is fetched again. */
  metadataExpiresAt: Date | null;
  /** Dashboard clients belong to a workspace; dynamic ones to nobody until a person authorizes them. */
  workspaceId: string | null;
  createdBy: string | null;
  createdAt: Date;
}
