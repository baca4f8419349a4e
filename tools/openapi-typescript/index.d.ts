// The part of openapi-typescript's API the tests use (its own types need the TypeScript 5 API).
/** Reads an OpenAPI 3.x document (object, JSON/YAML text or URL) and returns the TypeScript AST of its types. */
export function openapiTS(source: object | string | URL, options?: Record<string, unknown>): Promise<unknown>;
/** Prints that AST as the text of a `.d.ts` module (`paths`, `components`, `operations`). */
export function astToString(ast: unknown): string;
