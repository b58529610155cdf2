import { sql, type Kysely } from 'kysely';
import * as identity from './migrations/base/0001_identity.ts';
import * as metering from './migrations/base/0002_metering.ts';
import * as connectionsMessaging from './migrations/base/0003_connections_messaging.ts';
import * as baileysSessions from './migrations/base/0004_baileys_sessions.ts';
import * as heldReceipts from './migrations/base/0005_held_receipts.ts';
import * as webhooks from './migrations/base/0006_webhooks.ts';
import * as oauth from './migrations/base/0007_oauth.ts';
import * as deliveryTargets from './migrations/base/0008_delivery_targets.ts';
import * as realtime from './migrations/base/0009_realtime.ts';
import * as templates from './migrations/base/0010_templates.ts';
import * as deliveryQueue from './migrations/base/0011_delivery_queue.ts';
import * as pluginEventQueue from './migrations/base/0012_plugin_event_queue.ts';
import * as invitations from './migrations/base/0013_invitations.ts';
import * as authFailures from './migrations/base/0014_auth_failures.ts';
import * as oauthMetadataDocuments from './migrations/base/0015_oauth_metadata_documents_step_up.ts';
import * as webhookBindings from './migrations/base/0016_webhook_bindings_of_deleted_connections.ts';
import * as creditAllowance from './migrations/base/0017_credit_allowance.ts';
import * as dropWorkspaceHelpdeskEnabled from './migrations/base/0018_drop_workspace_helpdesk_enabled.ts';
import * as webSessionLifetimes from './migrations/base/0019_web_session_lifetimes.ts';
import * as pluginEventQueueNotify from './migrations/base/0020_plugin_event_queue_notify.ts';
import * as messageSendQueue from './migrations/base/0021_message_send_queue.ts';
import * as messageSendQueueInPlace from './migrations/base/0022_message_send_queue_in_place.ts';
import * as pluginEventQueueNotifyWhenInserted from './migrations/base/0023_plugin_event_queue_notify_when_inserted.ts';

export interface Migration {
  up(db: Kysely<any>): Promise<void>;
}

/** The migrations of one module (the base, or a plugin), applied in the order of their names. */
export interface MigrationSet {
  module: string;
  migrations: Record<string, Migration>;
}

export const BASE_MIGRATIONS: MigrationSet = {
  module: 'base',
  migrations: {
    '0001_identity': identity,
    '0002_metering': metering,
    '0003_connections_messaging': connectionsMessaging,
    '0004_baileys_sessions': baileysSessions,
    '0005_held_receipts': heldReceipts,
    '0006_webhooks': webhooks,
    '0007_oauth': oauth,
    '0008_delivery_targets': deliveryTargets,
    '0009_realtime': realtime,
    '0010_templates': templates,
    '0011_delivery_queue': deliveryQueue,
    '0012_plugin_event_queue': pluginEventQueue,
    '0013_invitations': invitations,
    '0014_auth_failures': authFailures,
    '0015_oauth_metadata_documents_step_up': oauthMetadataDocuments,
    '0016_webhook_bindings_of_deleted_connections': webhookBindings,
    '0017_credit_allowance': creditAllowance,
    '0018_drop_workspace_helpdesk_enabled': dropWorkspaceHelpdeskEnabled,
    '0019_web_session_lifetimes': webSessionLifetimes,
    '0020_plugin_event_queue_notify': pluginEventQueueNotify,
    '0021_message_send_queue': messageSendQueue,
    '0022_message_send_queue_in_place': messageSendQueueInPlace,
    '0023_plugin_event_queue_notify_when_inserted': pluginEventQueueNotifyWhenInserted,
  },
};

/**
 * The database was migrated by a newer version of the service: it has migrations this code does
 * not know, so this code's queries may no longer fit its tables. Nothing is applied or served.
 */
export class NewerDatabaseError extends Error {
  constructor(readonly unknown: string[]) {
    super(
      `the database was migrated by a newer version of Switchboard (${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ', …' : ''} unknown to this version); run that version or a newer one`,
    );
  }
}

/**
 * What the database holds against what this code knows: migrations of `sets` not applied yet
 * (`pending`), and applied migrations of a module this code knows (`known`: the base and every
 * available plugin, enabled or not) that it has no file for (`unknown`: a newer version ran).
 * A module this code does not know at all is left alone (a plugin taken out of the catalogue).
 */
export async function migrationState(db: Kysely<any>, sets: MigrationSet[], known: MigrationSet[] = sets): Promise<{ pending: string[]; unknown: string[] }> {
  const rows: { module: string; name: string }[] = await db.selectFrom('schema_migrations').select(['module', 'name']).execute();
  const applied = new Set(rows.map((row) => `${row.module}/${row.name}`));
  const names = new Map<string, Set<string>>();
  for (const set of [...known, ...sets]) names.set(set.module, new Set([...(names.get(set.module) ?? []), ...Object.keys(set.migrations)]));
  const pending = sets.flatMap((set) => Object.keys(set.migrations).sort().map((name) => `${set.module}/${name}`)).filter((id) => !applied.has(id));
  const unknown = rows
    .filter((row) => names.has(row.module) && !names.get(row.module)!.has(row.name))
    .map((row) => `${row.module}/${row.name}`)
    .sort();
  return { pending, unknown };
}

/**
 * Applies what has not run yet: the base first, then each plugin in dependency order. Each
 * migration runs in its own transaction under an advisory lock, so several processes starting
 * at once apply every migration exactly once; a failed migration leaves no trace. A database
 * with migrations of a known module that this code lacks is refused first (NewerDatabaseError).
 */
export async function migrate(db: Kysely<any>, sets: MigrationSet[], known: MigrationSet[] = sets): Promise<string[]> {
  await sql`create table if not exists schema_migrations (
    module text not null,
    name text not null,
    executed_at timestamptz not null default now(),
    primary key (module, name)
  )`.execute(db);
  const { unknown } = await migrationState(db, sets, known);
  if (unknown.length > 0) throw new NewerDatabaseError(unknown);

  const applied: string[] = [];
  for (const set of sets) {
    for (const name of Object.keys(set.migrations).sort()) {
      const ran = await db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext('switchboard.migrations'))`.execute(trx);
        const done = await trx
          .selectFrom('schema_migrations')
          .select('name')
          .where('module', '=', set.module)
          .where('name', '=', name)
          .executeTakeFirst();
        if (done) return false;
        await set.migrations[name]!.up(trx);
        await trx.insertInto('schema_migrations').values({ module: set.module, name }).execute();
        return true;
      });
      if (ran) applied.push(`${set.module}/${name}`);
    }
  }
  return applied;
}
