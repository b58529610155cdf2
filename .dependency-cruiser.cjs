/** Layering rules of ARCHITECTURE.md, checked in .ci/run (via `bun run test`). */
const IO_PACKAGES = '(pg|pg-boss|kysely|elysia|@elysiajs|socket\\.io|@socket\\.io|@electric-sql|baileys|jose|@modelcontextprotocol)(/|$)';

module.exports = {
  forbidden: [
    {
      name: 'core-is-pure',
      comment: 'core/ imports only core/ and pure libraries: no adapters, plugins, apps.',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(adapters|plugins|apps|tests)/' },
    },
    {
      name: 'core-has-no-io-packages',
      comment: 'core/ must not reach IO packages or Node built-ins; time, ids and IO come through ports.',
      severity: 'error',
      from: { path: '^core/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'core-has-no-io-libraries',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: `node_modules/${IO_PACKAGES}` },
    },
    {
      name: 'adapters-do-not-reach-apps',
      comment: 'Adapters are composed by apps/, never the other way round.',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: '^apps/' },
    },
    {
      name: 'plugins-do-not-call-each-other',
      comment: 'A plugin uses core use cases and ports and the kernel (plugins/kernel/), never another plugin.',
      severity: 'error',
      from: { path: '^plugins/([^/]+)/' },
      to: { path: '^plugins/([^/]+)/', pathNot: '^plugins/($1|kernel)/' },
    },
    {
      name: 'no-circular-core',
      severity: 'error',
      from: { path: '^core/' },
      to: { circular: true },
    },
    {
      name: 'plugins-reach-the-host-through-the-kernel',
      comment: 'A plugin imports core/, plugins/kernel/ and its own folder: what it takes from the host has a face in the kernel (the example plugin of docs/contributing.md too).',
      severity: 'error',
      from: { path: '^(plugins/|tests/fixtures/example-plugin/)', pathNot: '^plugins/kernel/' },
      to: { path: '^(adapters|apps)/' },
    },
    {
      name: 'plugins-do-not-reach-apps',
      comment: 'apps/ wires plugins in; a plugin never depends on the wiring (what it needs is in plugins/kernel/).',
      severity: 'error',
      from: { path: '^plugins/' },
      to: { path: '^apps/' },
    },
    {
      name: 'only-apps-import-apps',
      comment: 'apps/ is the composition root: nothing outside it imports it.',
      severity: 'error',
      from: { pathNot: '^apps/' },
      to: { path: '^apps/' },
    },
    {
      name: 'adapters-reach-plugins-through-the-kernel',
      comment: 'Adapters know plugins only by the contract in plugins/kernel/, never a plugin folder.',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: '^plugins/', pathNot: '^plugins/kernel/' },
    },
    {
      name: 'apps-reach-plugins-through-the-kernel',
      comment: 'apps/ takes the catalogue of plugins (plugins/index.ts) and the kernel, never a plugin folder.',
      severity: 'error',
      from: { path: '^apps/' },
      to: { path: '^plugins/', pathNot: '^plugins/(kernel/|index\\.ts$)' },
    },
    {
      name: 'no-circular-between-layers',
      comment: 'No import cycle passes through two layers (core, adapters, plugins, apps): each cycle stays inside one.',
      severity: 'error',
      from: { path: '^(core|adapters|plugins|apps)/' },
      to: { circular: true, via: { pathNot: '^$1/' } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Tests are not layered, except the example plugin, which follows the plugins' rules.
    exclude: { path: '^tests/(?!fixtures/example-plugin/)' },
  },
};
