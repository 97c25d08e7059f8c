/**
 * The layers point one way (docs/architecture.md, "Layout and dependency direction"; issue 15):
 * src (doors, adapters, composition) -> commands / queries / projections -> ports -> domain, and no circles.
 * `npm run lint` runs it; a violation fails the build.
 */

/** What a module of the repository may import besides itself: no package (node_modules) nor Node built-in counts. */
const outside = (path) => ({ path, pathNot: ['^node_modules/'], dependencyTypesNot: ['core'] });

/** A rule that fails the build: modules matching `from` (a path pattern) must not import what `to` matches. */
const forbid = (name, comment, from, to) => ({
  name,
  severity: 'error',
  ...(comment === undefined ? {} : { comment }),
  from: from === undefined ? {} : { path: from },
  to,
});

module.exports = {
  forbidden: [
    forbid(
      'no-circular',
      'A circle of imports means two modules cannot be understood (or loaded) one without the other.',
      undefined,
      { circular: true },
    ),
    forbid(
      'domain-is-pure',
      'domain/ is the pure model: it imports nothing of the repository outside itself.',
      '^domain/',
      outside('^(?!domain/)'),
    ),
    forbid(
      'ports-only-domain',
      'ports/ holds the interfaces the application layer needs from infrastructure; it sees only the domain.',
      '^ports/',
      outside('^(?!(ports|domain)/)'),
    ),
    forbid(
      'inner-layers-not-to-src',
      'commands/, queries/ and projections/ are the application core; infrastructure and doors (src/) plug into them.',
      '^(commands|queries|projections)/',
      { path: '^(src|test|bench|examples)/' },
    ),
    forbid(
      'queries-do-not-write',
      'queries/ is the read side: it never imports the write side.',
      '^queries/',
      {
        path: '^commands/',
      },
    ),
    forbid(
      'application-not-to-doors',
      'src/application/ holds the use cases every door calls: it knows no door (HTTP, WebSocket, MCP, Binance, CLI) and no wire contract.',
      '^src/application/',
      { path: '^src/(http|contract|endpoints|mcp|binance|cli|webhooks)/' },
    ),
    forbid(
      'contract-not-to-doors',
      'src/contract/ (wire schemas and presenters) and src/endpoints/ (schema → use case → presenter) are shared by every door and import none of them.',
      '^src/(contract|endpoints)/',
      { path: '^src/(http|endpoints|mcp|binance|cli|webhooks)/', pathNot: '^src/$1/' },
    ),
    forbid(
      'dashboard-is-a-door',
      'The dashboard (browser code, docs/dashboard.md) talks to the venue over its public API: of the venue it imports ' +
        "only the domain's pure functions and the API's schemas (as types, see the next rule).",
      '^dashboard/src/',
      { path: '^(src|commands|queries|projections|ports|test|bench|examples)/', pathNot: '^src/contract/' },
    ),
    forbid(
      'dashboard-takes-schemas-as-types',
      'The API client is typed from the schemas with `import type`: no server code reaches the bundle.',
      '^dashboard/src/',
      { path: '^src/contract/', dependencyTypesNot: ['type-only'] },
    ),
    forbid(
      'postgres-wire-formats-beside-the-database',
      "PostgreSQL's wire formats (COPY text: src/db/copy-text.ts, projections/copy-text.ts, projections/" +
        'equity-rows-text.ts) are read beside the database: by the projections, src/db and the metrics worker ' +
        '(src/backtest). The domain, the ports, the commands, the queries, the use cases and the doors work on ' +
        'values, never on those bytes (a domain function that parses COPY text belongs beside its reader).',
      '^(?!(projections|src/db|src/backtest|test|bench)/)',
      { path: '^(src/db/copy-text|projections/copy-text|projections/equity-rows-text)\\.ts$' },
    ),
    forbid('production-code-not-to-tests', undefined, '^(domain|ports|commands|queries|projections|src)/', {
      path: '^(test|bench|examples)/',
    }),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|data|dist|web/dist|dashboard/dist)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
