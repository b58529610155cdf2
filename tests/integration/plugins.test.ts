import { describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { sql, type Kysely } from 'kysely';
import { loadConfig } from '../../apps/config.ts';
import { openRuntime } from '../../apps/runtime.ts';
import { parsePluginList, PluginConfigurationError, resolvePlugins } from '../../plugins/kernel/loader.ts';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import { useTestService } from '../support/service.ts';
import { expectStandardError } from './helpers.ts';

/**
 * Plugins (ARCHITECTURE.md, "Plugins"): "`PLUGINS=...` (default: all) chooses what loads." /
 * "A disabled plugin's routes answer 404 and its jobs do not run." / "Plugins declare name and
 * dependencies and are validated and ordered at boot".
 */

const stub = (name: string, dependsOn?: string[]): Plugin => ({ name, ...(dependsOn && { dependsOn }) });
const names = (plugins: Plugin[]) => plugins.map((p) => p.name);

describe('resolvePlugins / parsePluginList', () => {
  test('orders every plugin after the plugins it depends on', () => {
    // ARCHITECTURE: plugins "are validated and ordered at boot".
    const available = [stub('campaigns', ['helpdesk']), stub('helpdesk', ['core-x']), stub('core-x'), stub('v2')];
    const ordered = names(resolvePlugins(available, ['v2', 'campaigns', 'helpdesk', 'core-x']));
    expect(ordered).toHaveLength(4);
    expect(ordered.indexOf('core-x')).toBeLessThan(ordered.indexOf('helpdesk'));
    expect(ordered.indexOf('helpdesk')).toBeLessThan(ordered.indexOf('campaigns'));
    // The order does not depend on how PLUGINS is written.
    expect(names(resolvePlugins(available, ['core-x', 'helpdesk', 'campaigns', 'v2']))).toEqual(ordered);
  });

  test('loads only what is enabled', () => {
    // ARCHITECTURE: "`PLUGINS=campaigns,helpdesk,flows,carousels,v2` (default: all) chooses what loads."
    const available = [stub('a'), stub('b'), stub('c', ['a'])];
    expect(names(resolvePlugins(available, ['c', 'a']))).toEqual(['a', 'c']);
    expect(names(resolvePlugins(available, []))).toEqual([]);
  });

  test('an unknown plugin name stops the boot with a clear error', () => {
    expect(() => resolvePlugins([stub('a')], ['a', 'nope'])).toThrow(PluginConfigurationError);
    expect(() => resolvePlugins([stub('a')], ['a', 'nope'])).toThrow(/Unknown plugin.*nope/);
  });

  test('a missing dependency stops the boot with a clear error', () => {
    // Enabled without its dependency, and depending on a plugin that does not exist at all.
    expect(() => resolvePlugins([stub('a'), stub('b', ['a'])], ['b'])).toThrow(PluginConfigurationError);
    expect(() => resolvePlugins([stub('a'), stub('b', ['a'])], ['b'])).toThrow(/b needs plugin a/);
    expect(() => resolvePlugins([stub('b', ['ghost'])], ['b'])).toThrow(/b needs plugin ghost/);
  });

  test('a dependency cycle stops the boot with a clear error', () => {
    const available = [stub('x', ['y']), stub('y', ['z']), stub('z', ['x'])];
    expect(() => resolvePlugins(available, ['x', 'y', 'z'])).toThrow(PluginConfigurationError);
    expect(() => resolvePlugins(available, ['x', 'y', 'z'])).toThrow(/circle.*x -> y -> z -> x/);
    expect(() => resolvePlugins([stub('self', ['self'])], ['self'])).toThrow(/circle/);
  });

  test('parsePluginList: unset means all; names are trimmed and deduplicated', () => {
    const available = [stub('a'), stub('b')];
    expect(parsePluginList(undefined, available)).toEqual(['a', 'b']);
    expect(parsePluginList(' b , a,,b ', available)).toEqual(['b', 'a']);
    expect(parsePluginList('', available)).toEqual([]);
  });
});

describe('over HTTP with PLUGINS=a', () => {
  // Two small plugins defined here: 'a' with a route and a migration, 'b' (depending on 'a') likewise.
  const pluginA: Plugin = {
    name: 'a',
    migrations: {
      '0001_notes': {
        async up(db: Kysely<any>) {
          await db.schema.createTable('plugin_a_notes').addColumn('id', 'text', (c) => c.primaryKey()).execute();
        },
      },
    },
    routes: () => new Elysia({ name: 'plugin.a' }).get('/v3/a', () => ({ ok: true })),
  };
  const pluginB: Plugin = {
    name: 'b',
    dependsOn: ['a'],
    migrations: {
      '0001_notes': {
        async up(db: Kysely<any>) {
          await db.schema.createTable('plugin_b_notes').addColumn('id', 'text', (c) => c.primaryKey()).execute();
        },
      },
    },
    routes: () => new Elysia({ name: 'plugin.b' }).get('/v3/b', () => ({ ok: 'b' })),
  };

  const service = useTestService({ plugins: [pluginA, pluginB], env: { PLUGINS: 'a' } });

  async function tableExists(name: string): Promise<boolean> {
    const { rows } = await sql<{ found: string | null }>`select to_regclass(${name})::text as found`.execute(service.runtime.ctx.db);
    return rows[0]?.found != null;
  }

  test('only the enabled plugin is loaded', () => {
    expect(names(service.runtime.plugins)).toEqual(['a']);
  });

  test("the enabled plugin's route answers", async () => {
    const res = await service.call('GET', '/v3/a');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
  });

  test("a disabled plugin's route answers 404 in the standard shape", async () => {
    // ARCHITECTURE: "A disabled plugin's routes answer 404". Spec 7.2 standard shape.
    expectStandardError(await service.call('GET', '/v3/b'), 404, 'Not Found');
  });

  test("the enabled plugin's migration ran; the disabled plugin's did not", async () => {
    expect(await tableExists('plugin_a_notes')).toBe(true);
    expect(await tableExists('plugin_b_notes')).toBe(false);
    const rows = await sql<{ module: string; name: string }>`select module, name from schema_migrations where module in ('a', 'b')`.execute(service.runtime.ctx.db);
    expect(rows.rows.map((r) => `${r.module}/${r.name}`)).toEqual(['a/0001_notes']);
    // The plugin's table is usable.
    await sql`insert into plugin_a_notes (id) values ('n1')`.execute(service.runtime.ctx.db);
  });

  test('the base routes are still served beside the plugin', async () => {
    expect((await service.call('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const owner = await service.bootstrap();
    expect((await service.call('GET', '/v3/accounts', { apikey: owner.token })).status).toBe(200);
  });

  test('the boot refuses an unknown plugin or a missing dependency before opening the database', async () => {
    // ARCHITECTURE: "unknown names and missing or circular dependencies stop the boot with a clear message rather than half-loading".
    const config = (plugins: string) => loadConfig({ PORT: '0', DATA_DIR: 'memory://', PLUGINS: plugins });
    await expect(openRuntime(config('a,zzz'), { available: [pluginA, pluginB] })).rejects.toThrow(/Unknown plugin.*zzz/);
    await expect(openRuntime(config('b'), { available: [pluginA, pluginB] })).rejects.toThrow(/b needs plugin a/);
  });
});
