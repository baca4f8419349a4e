/** The body of an admin request: one JSON object, bounded in size and depth, well-formed Unicode. */
import type Koa from 'koa';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../../../shared-schema/http/json.js';
import { ProblemError, fieldError, invalid } from '../../../shared-schema/contract/problems.js';
import { unicodeErrors } from '../../../shared-schema/contract/validation.js';

const ADMIN_BODY_LIMIT = 64 * 1024;

/** The request body as a JSON object (at most 64 KiB); an empty body is `{}`; lone surrogates are 422 `unicode`. */
export async function readJson(ctx: Koa.Context): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of ctx.req) {
    size += (c as Buffer).length;
    // Past the limit the rest is read and dropped (up to a bound), so a client still sending reads the 413: leaving
    // the loop here would destroy the request and reset the connection under it.
    if (size > ADMIN_BODY_LIMIT * 16) break;
    if (size <= ADMIN_BODY_LIMIT) chunks.push(c as Buffer);
  }
  if (size > ADMIN_BODY_LIMIT)
    throw new ProblemError(413, [], `The body is larger than ${ADMIN_BODY_LIMIT / 1024} KiB.`);
  if (size === 0) return {};
  const raw = Buffer.concat(chunks);
  if (jsonDeeperThan(raw, MAX_JSON_DEPTH))
    throw invalid([fieldError('', 'json', `The body nests more than ${MAX_JSON_DEPTH} levels deep.`)]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    /* fall through */
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalid([fieldError('', 'json', 'Send a JSON object.')]);
  const unicode = unicodeErrors(parsed);
  if (unicode.length > 0) throw invalid(unicode);
  return parsed as Record<string, unknown>;
}
