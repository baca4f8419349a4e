// ESLint for the whole repository (`make lint`). The packages come from the tools/lint workspace, where
// typescript-eslint runs on TypeScript 5 (the build's TypeScript 7 has no JS compiler API): docs/adr/0034-lint-and-formatting.md.
import { defineConfig, eslintJs, globalIgnores, globals, tseslint } from 'lint-ts5';

const CLIENT = 'clients/typescript/src/**/*.ts';

/** Our top-level folders other than `allowed`, as the start of a relative import that leaves the importing folder. */
const otherFolders = (...allowed) =>
  `^(\\.\\./)+(${[
    'shared-schema',
    'command-api',
    'projections',
    'query-api',
    'infra',
    'clients',
    'tests',
    'tools',
    'examples',
  ]
    .filter((f) => !allowed.includes(f))
    .join('|')})/`;
const LAYERS = [
  {
    files: ['shared-schema/**/*.ts'],
    forbidden: otherFolders('shared-schema'),
    why: 'shared-schema imports nothing of ours outside itself (DESIGN.md).',
  },
  ...['command-api', 'projections', 'query-api'].map((side) => ({
    files: [`${side}/**/*.ts`],
    forbidden: otherFolders('shared-schema', side),
    why: `${side} imports only shared-schema and itself; infra/ wires the sides together (DESIGN.md).`,
  })),
  {
    // Route modules declare HTTP routes: infra hands the doors their route tables (command-api/write-routes.ts,
    // query-api/read-routes.ts) and takes shared policy from shared-schema, never from a route module.
    files: ['infra/**/*.ts'],
    forbidden: '^(\\.\\./)+(command-api/routes/|query-api/routes/|query-api/public/(routes|pages|search)\\.js$)',
    why: 'infra imports no route module: use the door (app.ts, write-routes.ts, read-routes.ts) or shared-schema.',
  },
];

export default defineConfig(
  globalIgnores([
    'dist/',
    '**/node_modules/',
    '.scratch/',
    '.bench/',
    '.cache/',
    'data/',
    'clients/typescript/src/schema.d.ts',
  ]),
  eslintJs.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      // The build's one program (every source is in the root tsconfig.json): the rules see the types the build sees.
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // Off: the in-memory and SQLite adapters implement async ports (EventStore, ReadStore, Messaging) with
      // synchronous engines. Their methods stay `async` so that a thrown error reaches the caller as a rejection,
      // as it does from the network adapters, instead of a throw at the call.
      '@typescript-eslint/require-await': 'off',
      // `_`-prefixed names are the ones a destructuring leaves out on purpose (`const { _id, ...rest } = doc`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // A variable a callback reads before it is assigned (`let reactor; … () => reactor?.settled(); reactor = new …`)
      // cannot be `const`: a call before the assignment would throw instead of finding it undefined.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Passing on a caught value unchanged (`catch (err) { return Promise.reject(err); }`) is allowed; rejecting
      // with anything else that is not an Error is still reported.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  // The layering (DESIGN.md, docs/adr/0057-layering-enforced.md): shared-schema imports nothing of ours outside itself;
  // command-api, projections and query-api import only shared-schema and themselves; infra imports everything but a
  // route module. Matched on the import's text (relative paths); tests/unit/layering.unit.spec.ts checks the same on
  // the resolved paths, so that `make test` fails too.
  ...LAYERS.map(({ files, forbidden, why }) => ({
    files,
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: forbidden, message: why }] }] },
  })),
  {
    // The client is also compiled on its own, with its stricter options (noUncheckedIndexedAccess,
    // exactOptionalPropertyTypes): linted with those, an assertion they need is not "unnecessary".
    files: [CLIENT],
    languageOptions: { parserOptions: { project: './clients/typescript/tsconfig.json' } },
  },
  {
    // Off for the example: partners copy it into their own projects, whose options may be as strict as the client's
    // (`digits[i]!` is needed under noUncheckedIndexedAccess), but it is built here with the root tsconfig.json.
    files: ['clients/typescript/examples/**/*.ts'],
    rules: { '@typescript-eslint/no-unnecessary-type-assertion': 'off' },
  },
  {
    files: ['tests/**/*.ts'],
    rules: {
      // Off in tests: they read the service's JSON answers as `any` on purpose (tests/support/service.ts `Answer`,
      // the ops command line's `json`) and assert on them with chai; the shape itself is checked by the published
      // OpenAPI document on every answer (OPENAPI_CHECK_ANSWERS). Typing each answer would only restate the schema.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // The methods of a fake driver object have their own `this`; they name the fake that made them `driver`.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['driver'] }],
    },
  },
  {
    // The declarations of the tool workspaces' JavaScript re-exports are in no tsconfig (the build reaches them only
    // through node_modules): linted without type information.
    files: ['tools/**/*.d.ts'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The few plain JavaScript files (this config, the tool workspaces, the client generator) are in no tsconfig.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
);
