/**
 * The 404 of a resource read by id, with a hint when the same id exists in the partner's other environment: a
 * partner whose test key cannot find a live store (or the reverse) learns that the key decides the environment.
 * Both environments are the caller's own data, so the hint reveals nothing of anyone else.
 */
import { notFound, type ProblemError } from '../shared-schema/contract/problems.js';
import type { Environment, Tenant } from '../shared-schema/domain/streams.js';
import type { QueryDeps } from './app.js';

export async function notFoundHere(
  deps: QueryDeps,
  caller: Tenant,
  collection: string,
  idIn: (tenant: Tenant) => string,
  what: string,
): Promise<ProblemError> {
  const other: Environment = caller.env === 'live' ? 'test' : 'live';
  const detail = `No ${what} with this id in the ${caller.env} environment of this partner.`;
  const elsewhere = await deps.reads.get(collection, idIn({ partnerId: caller.partnerId, env: other }));
  if (!elsewhere) return notFound(detail);
  return notFound(
    `${detail} It exists in the ${other} environment: the API key decides the environment, so read it with a ${other} key (ik_${other}_…).`,
  );
}
