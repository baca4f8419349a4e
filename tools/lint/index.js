// Re-exports the lint packages resolved from this workspace, so that typescript-eslint loads TypeScript 5 (its peer:
// the last line with a JS compiler API) and not the project's TypeScript 7, which has none.
import { createRequire } from 'node:module';

// npm hoists a package to the root node_modules when the root's TypeScript 7 satisfies its peer range (ts-api-utils
// asks only >=4.8.4: the root package.json "overrides" keeps it here); there it would load TypeScript 7's stub and the
// type-aware rules would break in odd ways. Fail at once, naming the package, if the install ever lays it out so.
const fromHere = createRequire(import.meta.url);
for (const name of ['typescript-eslint', '@typescript-eslint/typescript-estree', 'ts-api-utils']) {
  const { version } = createRequire(fromHere.resolve(name))('typescript/package.json');
  if (!version.startsWith('5.')) {
    throw new Error(
      `${name} loads TypeScript ${version}, not 5.x: see tools/lint/package.json and the root "overrides"`,
    );
  }
}

export { default as eslintJs } from '@eslint/js';
export { defineConfig, globalIgnores } from 'eslint/config';
export { default as globals } from 'globals';
export { default as tseslint } from 'typescript-eslint';
