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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^tests/' },
  },
};
