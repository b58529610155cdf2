import type { Kysely } from 'kysely';
import type { ApiToken, ApiTokenStore } from '../../../core/tokens/api-tokens.ts';
import type { Role } from '../../../core/identity/roles.ts';
import type { ApiTokenRow, Database } from '../schema.ts';
import { compiledOnce } from '../compiled-once.ts';
import { anyOf } from '../any-of.ts';
import { coalescedLookup } from '../coalesced-lookup.ts';
import { camelCased, snakeCased } from '../row-case.ts';
import { containing } from '../like-pattern.ts';
import { pageOfRows } from '../paged-rows.ts';

export function apiTokenStore(db: Kysely<Database>): ApiTokenStore {
  return {
    async insert(t) {
      await db
        .insertInto('api_tokens')
        .values(snakeCased(t))
        .execute();
    },

    async get(workspaceId, id) {
      const row = await db.selectFrom('api_tokens').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return row && toToken(row);
    },

    async findByHash(secretHash) {
      const [row] = (await tokensBySecretHash(db, [secretHash])).rows;
      return row && toTokenOfCreator(row);
    },

    async list(workspaceId, request) {
      let query = db.selectFrom('api_tokens').where('workspace_id', '=', workspaceId);
      if (request.search) query = query.where('name', 'ilike', containing(request.search));
      return pageOfRows(query, request, (q) => q.selectAll().orderBy('created_at').orderBy('id'), toToken);
    },

    async replaceSecret(id, secretHash, tokenLast4) {
      await db.updateTable('api_tokens').set({ secret_hash: secretHash, token_last4: tokenLast4 }).where('id', '=', id).execute();
    },

    async rename(id, name) {
      await db.updateTable('api_tokens').set({ name }).where('id', '=', id).execute();
    },

    async delete(id) {
      await db.deleteFrom('api_tokens').where('id', '=', id).execute();
    },

    async deleteAllOf(workspaceId, userId) {
      await db.deleteFrom('api_tokens').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
    },

    async deleteEveryOf(userId) {
      await db.deleteFrom('api_tokens').where('user_id', '=', userId).execute();
    },

    async touch(id, at) {
      await db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
    },
  };
}

/**
 * `findByHash` of the pool, for authentication: the lookups of requests that arrive together are
 * one statement (coalesced-lookup.ts), still a fresh read per request.
 */
export function tokenLookupByHash(db: Kysely<Database>): ApiTokenStore['findByHash'] {
  return coalescedLookup(async (hashes) => {
    // One key (every request of the turn has the same one) by its own statement: Postgres keeps a
    // generic plan for an equality, where it planned the array form anew on every run.
    const { rows } = hashes.length === 1 ? await tokenBySecretHash(db, hashes[0]!) : await tokensBySecretHash(db, hashes);
    return new Map(rows.map((row) => [row.secret_hash, toTokenOfCreator(row)]));
  });
}

function toTokenOfCreator({ roles, ...token }: ApiTokenRow & { roles: unknown }): ApiToken & { creatorRoles: Role[] | null } {
  return { ...toToken(token), creatorRoles: (roles as Role[] | null) ?? null };
}

/** Every authenticated request runs one of these (for a batch of requests): compiled once. */
const tokensBySecretHash = compiledOnce((db: Kysely<Database>, secretHashes: readonly string[]) =>
  tokensOfCreators(db).where('api_tokens.secret_hash', '=', anyOf(secretHashes, 'text')),
);
const tokenBySecretHash = compiledOnce((db: Kysely<Database>, secretHash: string) => tokensOfCreators(db).where('api_tokens.secret_hash', '=', secretHash));

/** Tokens with their creators' roles in the token's workspace (null once the creator left it). */
function tokensOfCreators(db: Kysely<Database>) {
  return db
    .selectFrom('api_tokens')
    .leftJoin('memberships', (join) =>
      join.onRef('memberships.workspace_id', '=', 'api_tokens.workspace_id').onRef('memberships.user_id', '=', 'api_tokens.user_id'),
    )
    .selectAll('api_tokens')
    .select('memberships.roles');
}

function toToken(row: ApiTokenRow): ApiToken {
  return camelCased(row);
}
