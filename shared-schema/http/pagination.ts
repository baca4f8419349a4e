/**
 * Opaque, signed page cursors: `<payload>.<mac>`, where the payload is base64url of the JSON array of the last row's
 * sort values and the mac an HMAC-SHA256, with the deployment's cursor secret, of the payload bound to the partner,
 * environment, list and filters the cursor was made for. A cursor made for another partner, environment, list or
 * filter set, one signed with another secret (a rotated one), an edited or a forged one is refused (422, field
 * `cursor`, code `invalid`); so is one whose values are not the scalars the list's sort key expects, one by one
 * (a query never receives a value a client wrote). Cursors carry no partner data a client could change.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { invalidField, type ProblemError } from '../contract/problems.js';
import type { Scalar } from '../ports/read-store.js';
import type { Tenant } from '../domain/streams.js';

/** Ours stay under about 550 characters (conversions with 80-character store and order ids); longer ones are refused unread. */
const MAX_CURSOR_LENGTH = 1024;
const MAC_LENGTH = 43; // base64url of 32 bytes, unpadded
const PAYLOAD = /^[A-Za-z0-9_-]+$/;
const VERSION = 'pc-cursor/1';

/** The deployment's key of page cursors. Holds it as a KeyObject: never printed, logged or serialized. */
export class CursorSecret {
  readonly #key: KeyObject;

  constructor(secret: string) {
    if (secret.length === 0) throw new RangeError('the cursor secret is empty');
    this.#key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /** The mac of `text`, base64url. */
  mac(text: string): string {
    return createHmac('sha256', this.#key).update(text, 'utf8').digest('base64url');
  }

  toJSON(): string {
    return '[cursor secret]';
  }
}

/** What a cursor is bound to besides its values: the caller's tenant, the list, and the filters of the query. */
export interface CursorScope {
  tenant: Tenant;
  /** The list (route) the cursor pages through. */
  list: string;
  /** The query's filters (store_id, state…); an absent filter is `undefined`. Not the window: it is in the values. */
  filters?: Readonly<Record<string, string | undefined>>;
}

/** The type each sort value must have, in order (the list's sort key, then `_id`). */
export type CursorValue = 'string' | 'number' | 'string|null' | 'number|null';

function signedText(scope: CursorScope, payload: string): string {
  const filters = Object.entries(scope.filters ?? {})
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([VERSION, scope.tenant.env, scope.tenant.partnerId, scope.list, filters, payload]);
}

export function encodeCursor(secret: CursorSecret, scope: CursorScope, values: readonly Scalar[]): string {
  const payload = Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
  return `${payload}.${secret.mac(signedText(scope, payload))}`;
}

const refusal = (): ProblemError => invalidField('cursor', 'invalid', 'The cursor is not valid for this list.');

function fits(value: unknown, expected: CursorValue): boolean {
  if (value === null) return expected.endsWith('|null');
  if (typeof value === 'string') return expected.startsWith('string');
  if (typeof value === 'number') return expected.startsWith('number') && Number.isFinite(value);
  return false;
}

/**
 * The sort values of a cursor this deployment made for `scope`, each of the type `shape` says (and exactly as
 * many). Anything else: 422 `cursor` `invalid`.
 */
export function decodeCursor(
  secret: CursorSecret,
  scope: CursorScope,
  cursor: string,
  shape: readonly CursorValue[],
): Scalar[] {
  if (cursor.length > MAX_CURSOR_LENGTH) throw refusal();
  const dot = cursor.indexOf('.');
  const payload = cursor.slice(0, dot);
  const mac = cursor.slice(dot + 1);
  if (dot < 0 || !PAYLOAD.test(payload) || mac.length !== MAC_LENGTH) throw refusal();
  const expected = Buffer.from(secret.mac(signedText(scope, payload)), 'utf8');
  const given = Buffer.from(mac, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refusal();
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw refusal();
  }
  // Signed by us, yet checked: a cursor of an older shape, or a secret that leaked, never puts an object in a query.
  if (!Array.isArray(values) || values.length !== shape.length) throw refusal();
  if (!values.every((v: unknown, i) => fits(v, shape[i]))) throw refusal();
  return values as Scalar[];
}

export const DEFAULT_LIMIT = 50;
