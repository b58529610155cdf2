import { Elysia } from 'elysia';
import { authenticateApiKey } from '../../core/tokens/api-tokens.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { forbidden } from '../../core/shared/errors.ts';
import { baseStores } from '../postgres/stores.ts';
import type { AppContext } from './context.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `apikey` authentication as a route option: `{ apiKey: true }` resolves `actor`.
 * `Authorization: Bearer` is not an API key and is ignored here (spec 5.1), so a request
 * carrying only a bearer token is 401.
 */
export function apiKeyAuth(ctx: AppContext) {
  return new Elysia({ name: 'auth.apikey' }).macro({
    apiKey: {
      detail: { security: [{ apikey: [] }] },
      async resolve({ headers }): Promise<{ actor: Actor }> {
        const accountId = headers['x-account-id']?.trim() || undefined;
        // The key is checked first (a missing or wrong key is 401 whatever else is sent); an id
        // that cannot name a workspace is then 403 without reaching the database.
        const malformed = accountId !== undefined && !UUID.test(accountId);
        const actor = await authenticateApiKey(baseStores(ctx.db), ctx, headers['apikey'], malformed ? undefined : accountId?.toLowerCase());
        if (malformed) throw forbidden('You are not a member of the workspace named in X-Account-Id');
        return { actor };
      },
    },
  });
}
