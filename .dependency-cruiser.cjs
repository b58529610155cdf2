/** Layering rules of ARCHITECTURE.md, checked in .ci/run (via `bun run test`). */
const IO_PACKAGES = '(pg|pg-boss|kysely|elysia|@elysiajs|socket\\.io|@socket\\.io|@electric-sql|baileys|jose|@modelcontextprotocol)(/|$)';

/** A layering rule: a dependency matching `from` → `to` is an error. */
function forbid(name, comment, from, to) {
  return { name, comment, severity: 'error', from, to };
}

module.exports = {
  forbidden: [
    forbid('core-is-pure', 'core/ imports only core/ and pure libraries: no adapters, plugins, apps.', { path: '^core/' }, { path: '^(adapters|plugins|apps|tests)/' }),
    forbid(
      'core-has-no-io-packages',
      'core/ must not reach IO packages or Node built-ins; time, ids and IO come through ports.',
      { path: '^core/' },
      { dependencyTypes: ['core'] },
    ),
    forbid('core-has-no-io-libraries', 'Nor the IO libraries of node_modules (databases, HTTP, sockets, crypto).', { path: '^core/' }, { path: `node_modules/${IO_PACKAGES}` }),
    forbid('adapters-do-not-reach-apps', 'Adapters are composed by apps/, never the other way round.', { path: '^adapters/' }, { path: '^apps/' }),
    forbid(
      'plugins-do-not-call-each-other',
      'A plugin uses core use cases and ports and the kernel (plugins/kernel/), never another plugin.',
      { path: '^plugins/([^/]+)/' },
      { path: '^plugins/([^/]+)/', pathNot: '^plugins/($1|kernel)/' },
    ),
    forbid('no-circular-core', 'core/ reads top-down: no import cycle inside it.', { path: '^core/' }, { circular: true }),
    forbid(
      'plugins-reach-the-host-through-the-kernel',
      'A plugin imports core/, plugins/kernel/ and its own folder: what it takes from the host has a face in the kernel (the example plugin of docs/contributing.md too).',
      { path: '^(plugins/|tests/fixtures/example-plugin/)', pathNot: '^plugins/kernel/' },
      { path: '^(adapters|apps)/' },
    ),
    forbid('plugins-do-not-reach-apps', 'apps/ wires plugins in; a plugin never depends on the wiring (what it needs is in plugins/kernel/).', { path: '^plugins/' }, { path: '^apps/' }),
    forbid('only-apps-import-apps', 'apps/ is the composition root: nothing outside it imports it.', { pathNot: '^apps/' }, { path: '^apps/' }),
    forbid(
      'adapters-reach-plugins-through-the-kernel',
      'Adapters know plugins only by the contract in plugins/kernel/, never a plugin folder.',
      { path: '^adapters/' },
      { path: '^plugins/', pathNot: '^plugins/kernel/' },
    ),
    forbid(
      'apps-reach-plugins-through-the-kernel',
      'apps/ takes the catalogue of plugins (plugins/index.ts) and the kernel, never a plugin folder.',
      { path: '^apps/' },
      { path: '^plugins/', pathNot: '^plugins/(kernel/|index\\.ts$)' },
    ),
    forbid(
      'no-circular-between-layers',
      'No import cycle passes through two layers (core, adapters, plugins, apps): each cycle stays inside one.',
      { path: '^(core|adapters|plugins|apps)/' },
      { circular: true, via: { pathNot: '^$1/' } },
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Tests are not layered, except the example plugin, which follows the plugins' rules.
    exclude: { path: '^tests/(?!fixtures/example-plugin/)' },
  },
};
