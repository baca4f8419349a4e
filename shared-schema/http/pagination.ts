/**
 * Opaque cursors: base64url of the sort key of the last row, bound to the partner, environment and list they were
 * made for. A cursor made for another partner, environment or list — or any edited cursor — is refused
 * (422, field `cursor`, code `invalid`). Cursors carry no partner data a client could change.
 */
import { createHash } from 'node:crypto';
import { invalidField } from '../problems.js';
import type { Scalar } from '../ports/read-store.js';
import type { Tenant } from '../streams.js';

/** Our cursors are far shorter; anything longer is refused before decoding. */
const MAX_CURSOR_LENGTH = 512;

const tag = (tenant: Tenant, list: string, body: string): string =>
  createHash('sha256').update(`${tenant.env}\u0000${tenant.partnerId}\u0000${list}\u0000${body}`).digest('base64url').slice(0, 16);

export function encodeCursor(tenant: Tenant, list: string, after: readonly Scalar[]): string {
  const body = JSON.stringify(after);
  return Buffer.from(JSON.stringify({ a: after, t: tag(tenant, list, body) })).toString('base64url');
}

export function decodeCursor(tenant: Tenant, list: string, cursor: string): Scalar[] {
  const refuse = () => invalidField('cursor', 'invalid', 'The cursor is not valid for this list.');
  if (cursor.length > MAX_CURSOR_LENGTH) throw refuse();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  const p = parsed as { a?: unknown; t?: unknown };
  if (!p || !Array.isArray(p.a) || typeof p.t !== 'string') throw refuse();
  if (p.t !== tag(tenant, list, JSON.stringify(p.a))) throw refuse();
  return p.a as Scalar[];
}

export const DEFAULT_LIMIT = 50;
