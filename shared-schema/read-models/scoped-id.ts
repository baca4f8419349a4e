import type { Environment, Tenant } from '../domain/streams.js';

/** The id of a partner's document in a read model: environment and partner first, so isolation is in the id. */
export const scopedId = (t: Tenant, key: string): string => `${t.env}:${t.partnerId}:${key}`;

/** What every partner's document holds besides its own fields: its id, owner, and the position of its last event. */
export type ScopedDoc = { _id: string; partner_id: string; env: Environment; position: number };
