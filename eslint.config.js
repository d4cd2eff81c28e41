import { builtinModules } from 'node:module';
import nx from '@nx/eslint-plugin';
import importX from 'eslint-plugin-import-x';

/** Packages that only make sense on a server; browser code must not pull them in. */
const serverOnlyPackages = [
  'typeorm', 'pg', 'ssh2', '@kubernetes/client-node', 'type-graphql', 'express', 'pino',
  'prom-client', '@electric-sql/*', 'node:*', 'fs', 'path', 'child_process', 'net', 'crypto', 'os',
];

/** Which projects may import which, by the tags in each project.json. */
const depConstraints = [
  // Layers point inward: app -> feature -> data-access/ui/util -> domain.
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:ui', 'type:util', 'type:domain', 'type:catalogue'] },
  { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:data-access', 'type:ui', 'type:util', 'type:domain', 'type:catalogue'] },
  { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:data-access', 'type:util', 'type:domain', 'type:catalogue'] },
  { sourceTag: 'type:ui', onlyDependOnLibsWithTags: ['type:ui', 'type:util', 'type:domain', 'type:catalogue'] },
  { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:domain', 'type:catalogue'] },
  { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:catalogue'] },
  // The message catalogue (libs/shared/messages): data and its formatter, below the domain.
  { sourceTag: 'type:catalogue', onlyDependOnLibsWithTags: [] },
  { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:tool', 'type:util', 'type:domain', 'type:catalogue'] },
  { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:tool', 'type:util', 'type:domain', 'type:catalogue', 'type:data-access'] },
  // Benchmarks time one feature against its reference, so they may drive a feature library directly.
  { sourceTag: 'type:bench', onlyDependOnLibsWithTags: ['type:feature', 'type:tool', 'type:util', 'type:domain', 'type:catalogue', 'type:data-access'] },
  // Scopes: the agent and the console reach the API only over GraphQL.
  { sourceTag: 'scope:api', onlyDependOnLibsWithTags: ['scope:api', 'scope:shared'] },
  { sourceTag: 'scope:agent', onlyDependOnLibsWithTags: ['scope:agent', 'scope:shared'] },
  { sourceTag: 'scope:console', onlyDependOnLibsWithTags: ['scope:console', 'scope:shared'] },
  // The CLI is a client like the console: the API over GraphQL, the shared operations.
  { sourceTag: 'scope:cli', onlyDependOnLibsWithTags: ['scope:cli', 'scope:shared'] },
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
  { sourceTag: 'scope:tools', onlyDependOnLibsWithTags: ['scope:tools', 'scope:shared'] },
  { sourceTag: 'scope:e2e', onlyDependOnLibsWithTags: ['scope:tools', 'scope:shared', 'scope:api'] },
  // The bench also runs the agent's own code: a simulated fleet (bench/support/simulated-agents.ts).
  { sourceTag: 'scope:bench', onlyDependOnLibsWithTags: ['scope:tools', 'scope:shared', 'scope:api', 'scope:agent'] },
  // Platforms: browser code never imports server packages; node code never imports Angular.
  { sourceTag: 'platform:browser', onlyDependOnLibsWithTags: ['platform:browser', 'platform:any'], bannedExternalImports: serverOnlyPackages },
  { sourceTag: 'platform:node', onlyDependOnLibsWithTags: ['platform:node', 'platform:any'], bannedExternalImports: ['@angular/*', 'apollo-angular'] },
  { sourceTag: 'platform:any', onlyDependOnLibsWithTags: ['platform:any'], bannedExternalImports: [...serverOnlyPackages, '@angular/*', 'apollo-angular'] },
];

/**
 * Test oracles (tools/kube-sim, tools/lab; tag `role:test-oracle`) stand in for a cluster and for
 * hosts. Specs and testing entry points (`src/testing`) of any node project may start them; product
 * code never imports them, and they never import product code.
 */
const TEST_ORACLE = 'role:test-oracle';
const TEST_FILES = ['**/*.spec.ts', '**/src/testing/**/*.ts'];
const testDepConstraints = depConstraints.map((constraint) =>
  /^(type|scope):/.test(constraint.sourceTag) ? { ...constraint, onlyDependOnLibsWithTags: [...constraint.onlyDependOnLibsWithTags, TEST_ORACLE] } : constraint,
);

function moduleBoundaries(constraints) {
  return ['error', { enforceBuildableLibDependency: false, allow: [], banTransitiveDependencies: false, depConstraints: constraints }];
}

export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  { ignores: ['**/dist', '**/node_modules', '**/.angular', '**/tmp', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  ...nx.configs['flat/angular'].map((config) => ({ ...config, files: ['apps/console/**/*.ts', 'libs/console/**/*.ts'] })),
  ...nx.configs['flat/angular-template'].map((config) => ({ ...config, files: ['apps/console/**/*.html', 'libs/console/**/*.html'] })),
  {
    files: ['apps/console/**/*.ts', 'libs/console/**/*.ts'],
    rules: {
      '@angular-eslint/component-selector': ['error', { type: 'element', prefix: 'ccos', style: 'kebab-case' }],
      '@angular-eslint/directive-selector': ['error', { type: 'attribute', prefix: 'ccos', style: 'camelCase' }],
      '@angular-eslint/prefer-on-push-component-change-detection': 'error',
    },
  },
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.mjs', '**/*.js'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/internal-regex': '^@ccos/' },
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@nx/enforce-module-boundaries': moduleBoundaries(depConstraints),
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-exports': ['error', { restrictDefaultExports: { direct: true, named: true, defaultFrom: true, namedFrom: true, namespaceFrom: true } }],
      // Node built-ins, then packages, then the workspace's own libraries (@ccos/*), then relative
      // paths; alphabetical inside each group. Side-effect imports (reflect-metadata) stay where they are.
      'import-x/order': ['error', {
        groups: ['builtin', 'external', 'internal', ['parent', 'sibling', 'index']],
        pathGroups: [{ pattern: '@ccos/**', group: 'internal' }],
        pathGroupsExcludedImportTypes: ['builtin'],
        'newlines-between': 'never',
        alphabetize: { order: 'asc', caseInsensitive: true },
      }],
      curly: ['error', 'all'],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: TEST_FILES,
    rules: { '@nx/enforce-module-boundaries': moduleBoundaries(testDepConstraints) },
  },
  {
    // GraphQL Code Generator loads its configuration from the module's default export.
    files: ['libs/shared/api-schema/codegen.ts'],
    rules: { 'no-restricted-exports': 'off' },
  },
  {
    // Written by GraphQL Code Generator (`npm run codegen`): typecheck and the drift spec check it;
    // its helper class types document metadata as `any`.
    files: ['libs/shared/api-schema/src/generated/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'import-x/order': 'off' },
  },
  {
    // Persistence has one home, libs/api/data-access-db: features take its stores (one per aggregate,
    // named queries), never TypeORM or the Postgres driver, not even for a type.
    files: ['libs/api/feature-*/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: ['typeorm', 'pg'].map((name) => ({ name, message: 'features do not touch the database: add a named query to a store in libs/api/data-access-db and use it.' })),
        patterns: [{ group: ['typeorm/*', 'pg/*'], message: 'features do not touch the database: add a named query to a store in libs/api/data-access-db and use it.' }],
      }],
    },
  },
  {
    // … nor write SQL or reach for a repository, a query builder or a transaction. Specs and test
    // fixtures may still seed and read rows through the database they opened.
    files: ['libs/api/feature-*/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**'],
    rules: {
      'no-restricted-syntax': ['error',
        {
          selector: 'CallExpression[callee.property.name=/^(query|getRepository|createQueryBuilder|transaction)$/]',
          message: 'features do not query the database: add a named query to a store in libs/api/data-access-db and use it.',
        },
        {
          selector: 'Literal[value=/^\\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH)\\s/], TemplateElement[value.raw=/^\\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH)\\s/]',
          message: 'SQL belongs in a store of libs/api/data-access-db, behind a named query.',
        },
      ],
    },
  },
  {
    // Code that runs in the browser (platform:browser) or anywhere (platform:any) never imports a
    // Node built-in; module boundaries only see workspace libraries, so this says it for Node's own.
    files: ['apps/console/**/*.ts', 'apps/graphiql/**/*.ts', 'apps/graphiql/**/*.tsx', 'libs/console/**/*.ts', 'libs/shared/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['node:*'], message: 'Node built-ins do not exist in the browser; this library runs there (platform:browser or platform:any).' }],
        paths: builtinModules.map((name) => ({ name, message: 'Node built-ins do not exist in the browser; this library runs there (platform:browser or platform:any).' })),
      }],
    },
  },
];
