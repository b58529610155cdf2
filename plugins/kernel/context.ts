/**
 * The narrow context a plugin receives: the services it may call and its way to the database —
 * its stores through a unit of work, never the raw pool. The host passes its own context, which
 * has all of this and more; plugins see only what is named here.
 */
import type { AppContext } from '../../adapters/http/context.ts';
import type { Storage, StoreFactory as HostStoreFactory } from '../../adapters/postgres/storage.ts';

export type { DatabaseHandle } from '../../adapters/postgres/storage.ts';
export type { AudienceSource } from '../../adapters/http/context.ts';

/** The services of the host a plugin calls (ports of core/ and the host's shared services). */
type HostServices = Pick<
  AppContext,
  | 'queue' // the outbox and the plugin's own jobs
  | 'clock'
  | 'log' // JSON lines; never a secret or a message's content
  | 'ids'
  | 'random'
  | 'plans'
  | 'config'
  | 'keys' // signed links
  | 'box' // sealing the plugin's secrets at rest
  | 'drivers' // sending through a connection's network
  | 'outbound' // every call to a customer's URL
  | 'realtime'
  | 'deliveryTargets'
  | 'templateComponents'
  | 'audienceSources'
  | 'pluginEvents' // which events the event publisher queues for plugins' subscribers
  | 'pluginEventConnections' // and on which connections, for some
  | 'pluginEventTests' // unless their data says otherwise
>;

export interface PluginContext extends HostServices {
  /** The plugin's stores on the pool, or a unit of work over one transaction. */
  storage: Storage<PluginContext>;
}

/** A plugin's stores, built on a handle (the pool or a transaction) with the plugin's context. */
export type StoreFactory<S> = HostStoreFactory<S, PluginContext>;

/**
 * The host's own context behind a plugin's, for the kernel's faces that call host services
 * needing more (authentication reads the token tables, say). Checked, not cast: a context the
 * host did not build is refused.
 */
export function hostContext(ctx: PluginContext): AppContext {
  if (!('db' in ctx) || !('routeScopes' in ctx)) throw new Error('plugin context not built by the host');
  return ctx as AppContext;
}

