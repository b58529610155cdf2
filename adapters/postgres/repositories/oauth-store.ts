import type { Kysely, Selectable } from 'kysely';
import type { AuthorizationCode, Consent, IssuedToken, PendingRequest } from '../../../core/oauth/artefacts.ts';
import type { AuthMethod, GrantType, OAuthClient } from '../../../core/oauth/client.ts';
import type { Scope } from '../../../core/oauth/scopes.ts';
import type { OAuthStore } from '../../../core/oauth/store.ts';
import { page, pageOffset } from '../../../core/shared/pagination.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import { containing } from '../like-pattern.ts';
import { findRow } from '../keyed-row.ts';
import { putRow, updatedAny } from '../row-writes.ts';
import type { Database, OAuthClientsTable, OAuthCodesTable, OAuthConsentsTable, OAuthPendingRequestsTable, OAuthTokensTable } from '../schema.ts';

export function oauthStore(db: Kysely<Database>): OAuthStore {
  return {
    async insertClient(c) {
      await db.insertInto('oauth_clients').values(clientRow(c)).execute();
    },
    async findClient(id) {
      return findRow(db, 'oauth_clients', { id }, toClient);
    },
    async saveClient(c) {
      await putRow(db, 'oauth_clients', ['id'], clientRow(c));
    },
    async listClientsOf(workspaceId) {
      const rows = await db.selectFrom('oauth_clients').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').execute();
      return rows.map(toClient);
    },
    async updateClient(c) {
      const { id, ...rest } = clientRow(c);
      await db.updateTable('oauth_clients').set(rest).where('id', '=', id).execute();
    },
    async deleteClient(id) {
      await db.deleteFrom('oauth_clients').where('id', '=', id).execute();
    },

    async insertPending(p) {
      await db.insertInto('oauth_pending_requests').values(snakeCased(p)).execute();
    },
    async findPending(id) {
      return findRow(db, 'oauth_pending_requests', { id }, toPending);
    },
    async decidePending(id, at) {
      return updatedAny(db.updateTable('oauth_pending_requests').set({ decided_at: at }).where('id', '=', id).where('decided_at', 'is', null));
    },

    async findConsent(clientId, userId, workspaceId) {
      return findRow(db, 'oauth_consents', { client_id: clientId, user_id: userId, workspace_id: workspaceId }, toConsent);
    },
    async getConsent(id) {
      return findRow(db, 'oauth_consents', { id }, toConsent);
    },
    async consentsOf(clientId, userId) {
      const rows = await db.selectFrom('oauth_consents').selectAll().where('client_id', '=', clientId).where('user_id', '=', userId).execute();
      return rows.map(toConsent);
    },
    async insertConsent(c) {
      await db
        .insertInto('oauth_consents')
        .values(snakeCased(c))
        .execute();
    },
    async updateConsentScopes(id, scopes, at) {
      // A new approval answers any pending scope challenge.
      await db.updateTable('oauth_consents').set({ scopes, updated_at: at, step_up_scopes: null, step_up_until: null }).where('id', '=', id).execute();
    },
    async recordScopeChallenge(id, scopes, until) {
      await db.updateTable('oauth_consents').set({ step_up_scopes: scopes, step_up_until: until }).where('id', '=', id).execute();
    },
    async takeScopeChallenge(id, now) {
      // RETURNING would give the cleared value: read (row-locked) first, then clear.
      const row = await db.selectFrom('oauth_consents').select(['step_up_scopes', 'step_up_until']).where('id', '=', id).forUpdate().executeTakeFirst();
      if (!row?.step_up_scopes || !row.step_up_until) return undefined;
      await db.updateTable('oauth_consents').set({ step_up_scopes: null, step_up_until: null }).where('id', '=', id).execute();
      return row.step_up_until.getTime() > now.getTime() ? (row.step_up_scopes as Scope[]) : undefined;
    },
    async listConsents(workspaceId, request) {
      let query = db
        .selectFrom('oauth_consents as c')
        .innerJoin('oauth_clients as k', 'k.id', 'c.client_id')
        .innerJoin('users as u', 'u.id', 'c.user_id')
        .where('c.workspace_id', '=', workspaceId);
      if (request.search) query = query.where('k.name', 'ilike', containing(request.search));
      const { total } = await query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
      const rows = await query
        .selectAll('c')
        .select(['k.name as client_name', 'k.logo_uri', 'k.verified', 'u.email'])
        .orderBy('c.updated_at', 'desc')
        .orderBy('c.id')
        .limit(request.perPage)
        .offset(pageOffset(request))
        .execute();
      const data = rows.map((r) => ({ ...toConsent(r), clientName: r.client_name, logoUri: r.logo_uri, verified: r.verified, userEmail: r.email }));
      return page(data, Number(total), request);
    },
    async deleteConsent(id) {
      await db.deleteFrom('oauth_consents').where('id', '=', id).execute();
    },

    async deleteConsentsOf(userId) {
      await db.deleteFrom('oauth_consents').where('user_id', '=', userId).execute();
    },

    async insertCode(c) {
      await db.insertInto('oauth_codes').values(snakeCased(c)).execute();
    },
    async findCode(hash) {
      return findRow(db, 'oauth_codes', { hash }, toCode);
    },
    async useCode(hash, at) {
      return updatedAny(db.updateTable('oauth_codes').set({ used_at: at }).where('hash', '=', hash).where('used_at', 'is', null));
    },

    async insertToken(t) {
      await db.insertInto('oauth_tokens').values(snakeCased(t)).execute();
    },
    async findToken(hash) {
      return findRow(db, 'oauth_tokens', { hash }, toToken);
    },
    async rotateToken(id) {
      return updatedAny(db.updateTable('oauth_tokens').set({ state: 'ROTATED' }).where('id', '=', id).where('state', '=', 'ACTIVE'));
    },
    async revokeToken(id) {
      await db.updateTable('oauth_tokens').set({ state: 'REVOKED' }).where('id', '=', id).execute();
    },
    async revokeGrant(consentId, at) {
      // ROTATED stays ROTATED: presenting a used refresh token again must still count as a replay.
      await db.updateTable('oauth_tokens').set({ state: 'REVOKED' }).where('consent_id', '=', consentId).where('state', '=', 'ACTIVE').execute();
      await db.updateTable('oauth_codes').set({ used_at: at }).where('consent_id', '=', consentId).where('used_at', 'is', null).execute();
    },
  };
}

/** The column `token_endpoint_auth_method` (RFC 7591's name) is the client's `authMethod`. */
function clientRow({ authMethod, ...c }: OAuthClient) {
  return { ...snakeCased(c), token_endpoint_auth_method: authMethod };
}

function toClient({ token_endpoint_auth_method, ...r }: Selectable<OAuthClientsTable>): OAuthClient {
  return {
    ...camelCased(r),
    authMethod: token_endpoint_auth_method as AuthMethod,
    grantTypes: r.grant_types as GrantType[],
    scopes: r.scopes as Scope[],
    requiredScopes: r.required_scopes as Scope[],
    registration: r.registration as OAuthClient['registration'],
  };
}

function toPending(r: Selectable<OAuthPendingRequestsTable>): PendingRequest {
  return { ...camelCased(r), scopes: r.scopes as Scope[], prompt: r.prompt as PendingRequest['prompt'] };
}

function toConsent(r: Selectable<OAuthConsentsTable>): Consent {
  const { step_up_scopes: _scopes, step_up_until: _until, ...consent } = r;
  return { ...camelCased(consent), scopes: r.scopes as Scope[] };
}

function toCode(r: Selectable<OAuthCodesTable>): AuthorizationCode {
  return { ...camelCased(r), scopes: r.scopes as Scope[] };
}

function toToken(r: Selectable<OAuthTokensTable>): IssuedToken {
  return { ...camelCased(r), scopes: r.scopes as Scope[] };
}
