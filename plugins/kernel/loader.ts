import type { Plugin } from './plugin.ts';

export class PluginConfigurationError extends Error {}

/**
 * The plugins to load, in dependency order: every enabled plugin after the plugins it
 * depends on. `enabled` is the `PLUGINS` setting; unknown names and missing or circular
 * dependencies stop the boot with a clear message rather than half-loading.
 */
export function resolvePlugins(available: readonly Plugin[], enabled: readonly string[]): Plugin[] {
  const byName = new Map(available.map((p) => [p.name, p]));
  const unknown = enabled.filter((name) => !byName.has(name));
  if (unknown.length > 0) {
    throw new PluginConfigurationError(`Unknown plugin(s) in PLUGINS: ${unknown.join(', ')}. Available: ${[...byName.keys()].join(', ') || 'none'}`);
  }
  const wanted = new Set(enabled);
  const ordered: Plugin[] = [];
  const state = new Map<string, 'visiting' | 'done'>();

  const visit = (name: string, path: string[]) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new PluginConfigurationError(`Plugins depend on each other in a circle: ${[...path, name].join(' -> ')}`);
    const plugin = byName.get(name)!;
    state.set(name, 'visiting');
    for (const dependency of plugin.dependsOn ?? []) {
      if (!wanted.has(dependency)) {
        throw new PluginConfigurationError(`Plugin ${name} needs plugin ${dependency}; add it to PLUGINS or remove ${name}`);
      }
      visit(dependency, [...path, name]);
    }
    state.set(name, 'done');
    ordered.push(plugin);
  };

  // Visit in the order plugins are declared, so the result does not depend on how PLUGINS is written.
  for (const plugin of available) if (wanted.has(plugin.name)) visit(plugin.name, []);
  return ordered;
}

/** `PLUGINS=campaigns,helpdesk` → names; unset means every available plugin. */
export function parsePluginList(value: string | undefined, available: readonly Plugin[]): string[] {
  if (value === undefined) return available.map((p) => p.name);
  return [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))];
}
