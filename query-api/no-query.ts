import type { JsonSchema } from '../shared-schema/contract/schemas/common.js';

/** Query schema for routes that take no parameter (any parameter is `unknown_field`). */
export const NO_QUERY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };
