import type { IdentityStore } from '../identity/identity.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { Clock, IdGen, Random } from '../shared/ports.ts';
import type { OAuthClient } from './client.ts';
import type { Scope } from './scopes.ts';
import type { ClientMetadataDocuments } from './metadata-document-port.ts';
import type { AuthorizationCode, Consent, IssuedToken, PendingRequest } from './artefacts.ts';

/** Persistence of the authorization server. Codes and tokens are looked up by their SHA-256. */
export interface OAuthStore {
  insertClient(client: OAuthClient): Promise<void>;
  findClient(id: string): Promise<OAuthClient | undefined>;
  /** Insert or replace (a metadata-document client fetched again; two first fetches may race). */
  saveClient(client: OAuthClient): Promise<void>;
  listClientsOf(workspaceId: string): Promise<OAuthClient[]>;
  updateClient(client: OAuthClient): Promise<void>;
  deleteClient(id: string): Promise<void>;

  insertPending(request: PendingRequest): Promise<void>;
  findPending(id: string): Promise<PendingRequest | undefined>;
  /** PENDING → DECIDED, once: false when it was already decided. */
  decidePending(id: string, at: Date): Promise<boolean>;

  findConsent(clientId: string, userId: string, workspaceId: string): Promise<Consent | undefined>;
  getConsent(id: string): Promise<Consent | undefined>;
  consentsOf(clientId: string, userId: string): Promise<Consent[]>;
  insertConsent(consent: Consent): Promise<void>;
  /** Also clears a pending scope challenge: the new approval answered it. */
  updateConsentScopes(id: string, scopes: string[], at: Date): Promise<void>;
  /** Remembers the scopes a token of this grant was just challenged for (step-up), until `until`. */
  recordScopeChallenge(id: string, scopes: Scope[], until: Date): Promise<void>;
  /** The live scope challenge of this grant, cleared as it is read (once). */
  takeScopeChallenge(id: string, now: Date): Promise<Scope[] | undefined>;
  listConsents(workspaceId: string, request: PageRequest): Promise<Page<Consent & { clientName: string | null; logoUri: string | null; verified: boolean; userEmail: string }>>;
  /** Deleting a consent deletes its codes and tokens with it. */
  deleteConsent(id: string): Promise<void>;
  /** Every consent the person gave, in every workspace, with their codes and tokens. */
  deleteConsentsOf(userId: string): Promise<void>;

  insertCode(code: AuthorizationCode): Promise<void>;
  findCode(hash: string): Promise<AuthorizationCode | undefined>;
  /** ISSUED → EXCHANGED, atomically: false when it was used already (a replay). */
  useCode(hash: string, at: Date): Promise<boolean>;

  insertToken(token: IssuedToken): Promise<void>;
  findToken(hash: string): Promise<IssuedToken | undefined>;
  /** ACTIVE → ROTATED, atomically: false when it was not active (a replay). */
  rotateToken(id: string): Promise<boolean>;
  revokeToken(id: string): Promise<void>;
  /** The whole grant: every token of the consent, and every code not yet exchanged. */
  revokeGrant(consentId: string, at: Date): Promise<void>;
}

export interface OAuthStores {
  oauth: OAuthStore;
  identity: IdentityStore;
}

export interface OAuthDeps {
  clock: Clock;
  ids: IdGen;
  random: Random;
  /** The issuer (`PUBLIC_URL`): `iss` on redirects, the origin every `resource` must be on. */
  issuer: string;
  dynamicRegistration: boolean;
  /** Fetches Client ID Metadata Documents (https `client_id`s); absent: such client ids are unknown. */
  metadataDocuments?: ClientMetadataDocuments;
}
