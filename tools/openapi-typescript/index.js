// Re-exports openapi-typescript resolved from this package, so that it loads TypeScript 5 (its peer) and not the
// project's TypeScript 7.
export { default as openapiTS, astToString } from 'openapi-typescript';
