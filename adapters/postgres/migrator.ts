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
  },
};

/**
 * Applies what has not run yet: the base first, then each plugin in dependency order. Each
 * migration runs in its own transaction under an advisory lock, so several processes starting
 * at once apply every migration exactly once; a failed migration leaves no trace.
 */
export async function migrate(db: Kysely<any>, sets: MigrationSet[]): Promise<string[]> {
  await sql`create table if not exists schema_migrations (
    module text not null,
    name text not null,
    executed_at timestamptz not null default now(),
    primary key (module, name)
  )`.execute(db);

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
