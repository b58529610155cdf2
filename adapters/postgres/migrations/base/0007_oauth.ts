import { sql, type Kysely } from 'kysely';
import { uuidKey, ownedByWorkspace, createdAt, timestamps, belongsTo } from '../../../../plugins/kernel/table-columns.ts';
import { indexBy } from '../../../../plugins/kernel/table-indexes.ts';

/**
 * The OAuth 2.1 authorization server (spec 2.5–2.7, 3.3): clients, pending authorization
 * requests, consents, codes and tokens; and the sign-in sessions of the consent pages.
 * Codes and tokens are stored as SHA-256 hashes only.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('secret_hash', 'text')
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('client_uri', 'text')
    .addColumn('logo_uri', 'text')
    .addColumn('redirect_uris', sql`text[]`, (c) => c.notNull())
    .addColumn('grant_types', sql`text[]`, (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('required_scopes', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('expire_access_tokens', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('registration', 'text', (c) => c.notNull().check(sql`registration in ('DYNAMIC', 'DASHBOARD')`))
    .addColumn('workspace_id', 'uuid', (c) => c.references('workspaces.id').onDelete('cascade'))
    .addColumn('created_by', 'uuid')
    .$call(createdAt)
    .execute();
  await indexBy(db, 'oauth_clients', 'workspace');

  await db.schema
    .createTable('oauth_pending_requests')
    .$call(uuidKey)
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('state', 'text')
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('resource', 'text')
    .addColumn('prompt', 'text')
    .$call(createdAt)
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('decided_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('oauth_consents')
    .$call(uuidKey)
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .$call(belongsTo('user_id', 'users'))
    .$call(ownedByWorkspace)
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .$call(timestamps)
    .addUniqueConstraint('oauth_consents_grant_key', ['client_id', 'user_id', 'workspace_id'])
    .execute();
  await indexBy(db, 'oauth_consents', 'workspace');

  await db.schema
    .createTable('oauth_codes')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .$call(belongsTo('consent_id', 'oauth_consents'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('resource', 'text')
    .$call(createdAt)
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('oauth_tokens')
    .$call(uuidKey)
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('ACCESS', 'REFRESH')`))
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('ACTIVE', 'ROTATED', 'REVOKED')`))
    .$call(belongsTo('consent_id', 'oauth_consents'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('resource', 'text')
    .$call(createdAt)
    .addColumn('expires_at', 'timestamptz')
    .execute();
  await indexBy(db, 'oauth_tokens', 'consent');

  await db.schema
    .createTable('web_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .$call(belongsTo('user_id', 'users'))
    .addColumn('csrf', 'text', (c) => c.notNull())
    .$call(createdAt)
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
}
