import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * GraphQL Code Generator's configuration (`npm run codegen`): the operations in src/operations,
 * checked against schema.graphql, become typed documents for every client. The generated files are
 * committed; `generated-is-current.spec.ts` fails when they drift from the schema or the operations.
 */
const ROOT = 'libs/shared/api-schema';

/** How scalars travel over the wire (JSON): dates are ISO strings. An unmapped scalar fails the run. */
const scalars = {
  ID: 'string',
  String: 'string',
  Boolean: 'boolean',
  Int: 'number',
  Float: 'number',
  DateTimeISO: 'string',
  JSON: 'unknown',
  JSONObject: 'Record<string, unknown>',
};

const config: CodegenConfig = {
  schema: `${ROOT}/schema.graphql`,
  generates: {
    // Enums (as string unions) and inputs, a result and a variables type per operation, and a
    // TypedDocumentNode per operation for Apollo and graphql-ws (console, CLI, tests).
    [`${ROOT}/src/generated/operations.ts`]: {
      documents: `${ROOT}/src/operations/*.graphql`,
      plugins: ['typescript', 'typescript-operations', 'typed-document-node'],
      config: {
        onlyOperationTypes: true,
        enumsAsTypes: true,
        scalars,
        strictScalars: true,
        useTypeImports: true,
        skipTypename: true,
        // A nullable field in a result is there and null, never missing; optional variables and
        // input fields stay optional.
        avoidOptionals: { field: true, inputValue: false, object: false, defaultValue: false },
      },
    },
    // The agent's operations as text (ReportStepText, AgentRunText): it ships as one executable
    // and sends them with fetch, without a GraphQL library.
    [`${ROOT}/src/generated/agent-operation-texts.ts`]: {
      documents: `${ROOT}/src/operations/agent.graphql`,
      plugins: [{ add: { content: "import type * as Types from './operations';" } }, 'typed-document-node'],
      config: {
        documentMode: 'string',
        documentVariableSuffix: 'Text',
        importOperationTypesFrom: './operations',
        useTypeImports: true,
      },
    },
  },
};

// The generator loads its configuration from this module's default export (allowed in eslint.config.js).
export default config;
