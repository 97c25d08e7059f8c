/**
 * The layers point one way (docs/architecture.md, "Layout and dependency direction"; issue 15):
 * src (doors, adapters, composition) -> commands / queries / projections -> ports -> domain, and no circles.
 * `npm run lint` runs it; a violation fails the build.
 */
const inner = '^(domain|ports|commands|queries|projections)/';
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A circle of imports means two modules cannot be understood (or loaded) one without the other.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'domain/ is the pure model: it imports nothing of the repository outside itself.',
      from: { path: '^domain/' },
      to: { path: '^(?!domain/)', pathNot: ['^node_modules/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'ports-only-domain',
      severity: 'error',
      comment:
        'ports/ holds the interfaces the application layer needs from infrastructure; it sees only the domain.',
      from: { path: '^ports/' },
      to: { path: '^(?!(ports|domain)/)', pathNot: ['^node_modules/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'inner-layers-not-to-src',
      severity: 'error',
      comment:
        'commands/, queries/ and projections/ are the application core; infrastructure and doors (src/) plug into them.',
      from: { path: '^(commands|queries|projections)/' },
      to: { path: '^(src|test|bench|examples)/' },
    },
    {
      name: 'queries-do-not-write',
      severity: 'error',
      comment: 'queries/ is the read side: it never imports the write side.',
      from: { path: '^queries/' },
      to: { path: '^commands/' },
    },
    {
      name: 'application-not-to-doors',
      severity: 'error',
      comment:
        'src/application/ holds the use cases every door calls: it knows no door (HTTP, WebSocket, MCP, Binance, CLI) and no wire contract.',
      from: { path: '^src/application/' },
      to: { path: '^src/(http|contract|endpoints|mcp|binance|cli|webhooks)/' },
    },
    {
      name: 'contract-not-to-doors',
      severity: 'error',
      comment:
        'src/contract/ (wire schemas and presenters) and src/endpoints/ (schema → use case → presenter) are shared by every door and import none of them.',
      from: { path: '^src/(contract|endpoints)/' },
      to: { path: '^src/(http|endpoints|mcp|binance|cli|webhooks)/', pathNot: '^src/$1/' },
    },

    {
      name: 'dashboard-is-a-door',
      severity: 'error',
      comment:
        'The dashboard (browser code, docs/dashboard.md) talks to the venue over its public API: of the venue it imports ' +
        "only the domain's pure functions and the API's schemas (as types, see the next rule).",
      from: { path: '^dashboard/src/' },
      to: {
        path: '^(src|commands|queries|projections|ports|test|bench|examples)/',
        pathNot: '^src/contract/',
      },
    },
    {
      name: 'dashboard-takes-schemas-as-types',
      severity: 'error',
      comment:
        'The API client is typed from the schemas with `import type`: no server code reaches the bundle.',
      from: { path: '^dashboard/src/' },
      to: { path: '^src/contract/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'production-code-not-to-tests',
      severity: 'error',
      from: { path: '^(domain|ports|commands|queries|projections|src)/' },
      to: { path: '^(test|bench|examples)/' },
    },
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
void inner;
