import type { AppContext } from '../../adapters/http/context.ts';
import type { DatabaseHandle } from '../../adapters/postgres/storage.ts';
import { hostContext, type PluginContext } from './context.ts';

/** A host service taking the host's context, offered to plugins on theirs. */
export function onPluginContext<A extends unknown[], R>(service: (ctx: AppContext, ...args: A) => R) {
  return (ctx: PluginContext, ...args: A): R => service(hostContext(ctx), ...args);
}

/** A host store factory `(db, hostContext)`, offered to plugins as `(db, pluginContext)`. */
export function storeOnPluginContext<S>(factory: (db: DatabaseHandle, ctx: AppContext) => S) {
  return (db: DatabaseHandle, ctx: PluginContext): S => factory(db, hostContext(ctx));
}
