/**
 * Pure translations from the read-store port's queries to MongoDB filters, sorts and pipelines, and from
 * MongoDB's values back to plain JSON. No I/O here, so every rule is unit-tested without a server.
 *
 * Keys are encoded on the way in and decoded on the way out (`encodeKey`), at every depth: documents carry partner
 * map keys (`attributes`) that BSON refuses (NUL), that MongoDB reads as operators or paths (`$where`, `a.b`), or
 * that the driver takes for a BSON value (`_bsontype`). The service's own field names are plain identifiers, which
 * encode to themselves, so indexes, filters and sorts name them as they are.
 */
import type { Decimal128, Document, Double, Int32, Long } from 'mongodb';
import type {
  Condition,
  Doc,
  Scalar,
  SortKey,
  SumQuery,
  SumRow,
  Where,
} from '../../../shared-schema/ports/read-store.js';

/** Side field holding `expires_at` as a BSON Date, for the TTL index. Never returned to callers. */
export const EXPIRES_FIELD = '_expires';
/** The folded words of a text collection's document (text.ts), kept beside it like `_expires`. */
export const TEXT_FIELD = '_text';

type Filter = Record<string, unknown>;

/** The characters escaped in keys, as `%` and two upper-case hex digits: the escape itself, `$`, `.`, NUL. */
// eslint-disable-next-line no-control-regex -- NUL is one of the characters MongoDB refuses in a key
const KEY_SPECIAL = /[%$.\u0000]/g;
const KEY_ESCAPE = /%([0-9A-F]{2})/g;
/** The driver's serializer reads an object holding `_bsontype` as a BSON value (and throws on an unknown one). */
const BSON_TYPE_KEY = '_bsontype';
/** The empty key, kept out of MongoDB's field paths: a lone `%` (every other `%` of an encoded key starts an escape). */
const EMPTY_KEY = '%';

/**
 * A key as stored in MongoDB: `%`, `$`, `.` and NUL become `%25`, `%24`, `%2E`, `%00`; `_bsontype` becomes
 * `%5Fbsontype`; the empty key becomes `%`. Reversible (decodeKey); identifiers such as `partner_id` are unchanged.
 */
export function encodeKey(key: string): string {
  if (key === '') return EMPTY_KEY;
  if (key === BSON_TYPE_KEY) return '%5Fbsontype';
  return key.replace(KEY_SPECIAL, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

export function decodeKey(stored: string): string {
  if (stored === EMPTY_KEY) return '';
  return stored.includes('%')
    ? stored.replace(KEY_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : stored;
}

/** `target[key] = value` as an own property, also for `__proto__` (plain assignment would set the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** A JSON value with every object key encoded (JSON values only: what JSON.parse returns). */
function encodeKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(encodeKeys);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) setOwn(out, encodeKey(k), encodeKeys(v));
  return out;
}

const OPS = { gt: '$gt', gte: '$gte', lt: '$lt', lte: '$lte', in: '$in', ne: '$ne' } as const;

/**
 * A comparison value checked to be a scalar (string, finite number, boolean, null), as the port requires. Anything
 * else is refused with a TypeError: an object such as `{"$ne": null}` or `{"$regex": …}` placed as a query value
 * would be read by MongoDB as an operator, an array as "any element equals".
 */
function scalarValue(value: unknown, what: string): Scalar {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`${what}: ${value} is not a JSON number`);
    return value;
  }
  throw new TypeError(
    `${what}: expected a string, number, boolean or null, got ${Array.isArray(value) ? 'an array' : typeof value}`,
  );
}

function isRange(c: Condition): c is Exclude<Condition, Scalar> {
  return c !== null && typeof c === 'object';
}

export function whereToFilter(where: Where = {}): Filter {
  const filter: Filter = {};
  for (const [field, cond] of Object.entries(where)) {
    if (cond === undefined) continue;
    const what = `where.${field}`;
    const key = encodeKey(field);
    if (!isRange(cond)) {
      filter[key] = scalarValue(cond, what);
      continue;
    }
    if (Array.isArray(cond)) throw new TypeError(`${what}: use { in: [...] } for a set of values`);
    const proto: unknown = Object.getPrototypeOf(cond);
    if (proto !== Object.prototype && proto !== null)
      throw new TypeError(`${what}: expected a scalar or a condition, got an object`);
    for (const k of Object.keys(cond)) {
      if (!Object.hasOwn(OPS, k)) throw new TypeError(`${what}: unknown operator ${JSON.stringify(k)}`);
    }
    const ops: Record<string, unknown> = {};
    for (const [k, op] of Object.entries(OPS) as [keyof typeof OPS, string][]) {
      const v = cond[k];
      if (v === undefined) continue;
      if (k !== 'in') ops[op] = scalarValue(v, `${what}.${k}`);
      else if (!Array.isArray(v)) throw new TypeError(`${what}.in: expected an array`);
      else ops[op] = v.map((x: unknown, i: number) => scalarValue(x, `${what}.in[${i}]`));
    }
    // `{field: {}}` would mean "equals an empty object" to MongoDB; an empty condition means no condition.
    if (Object.keys(ops).length > 0) filter[key] = ops;
  }
  return filter;
}

/** `{_id: id}`, the id checked to be a string (an object there would be an operator too). */
export function idFilter(id: string): Filter & { _id: string } {
  if (typeof id !== 'string')
    throw new TypeError(`_id: expected a string, got ${Array.isArray(id) ? 'an array' : typeof id}`);
  return { _id: id };
}

/** The match of `replaceIf` as a filter of equalities on scalars (never an operator), `_id` last. */
export function matchFilter(id: string, match: Record<string, Scalar>): Filter {
  const filter: Filter = {};
  for (const [field, value] of Object.entries(match)) filter[encodeKey(field)] = scalarValue(value, `match.${field}`);
  return { ...filter, ...idFilter(id) };
}

/** The sort keys of a query: `orderBy`, then `_id` ascending as the final tie-breaker (unless already there). */
export function sortKeys(orderBy: readonly SortKey[] = []): Required<SortKey>[] {
  const keys = orderBy.map((k) => ({ field: k.field, dir: k.dir ?? 'asc' }));
  if (!keys.some((k) => k.field === '_id')) keys.push({ field: '_id', dir: 'asc' });
  return keys;
}

export function toSort(keys: readonly Required<SortKey>[]): [string, 1 | -1][] {
  return keys.map((k) => [encodeKey(k.field), k.dir === 'desc' ? -1 : 1]);
}

/**
 * Keyset pagination: rows strictly after `after` in the order of `keys`, for any mix of directions:
 *   (k0 > v0) OR (k0 = v0 AND k1 > v1) OR … ("<" for a descending key).
 * MongoDB compares within one type only and sorts null (and missing) before every value, so null needs care:
 * after a null in ascending order come the non-null values; after a null in descending order comes nothing;
 * after a value in descending order come the smaller values AND the nulls.
 * Sort fields are assumed to hold one type (plus null), which is what declared index fields hold.
 */
export function keysetFilter(keys: readonly Required<SortKey>[], after: readonly Scalar[]): Filter {
  if (!Array.isArray(after) || after.length !== keys.length) {
    throw new RangeError(
      `"after" holds ${after.length} values; this order needs ${keys.length} (one per key, then _id)`,
    );
  }
  const values = after.map((v, i) => scalarValue(v, `after[${i}]`));
  const branches: Filter[] = [];
  for (let i = 0; i < keys.length; i++) {
    const field = encodeKey(keys[i].field);
    const { dir } = keys[i];
    const v = values[i];
    let beyond: Filter | undefined;
    if (v === null) beyond = dir === 'asc' ? { [field]: { $ne: null } } : undefined;
    else if (dir === 'asc') beyond = { [field]: { $gt: v } };
    else beyond = { $or: [{ [field]: { $lt: v } }, { [field]: null }] };
    if (beyond) {
      const equals = keys.slice(0, i).map((k, j) => ({ [encodeKey(k.field)]: values[j] }));
      branches.push(equals.length === 0 ? beyond : { $and: [...equals, beyond] });
    }
  }
  return branches.length === 0 ? { _id: { $exists: false } } : { $or: branches };
}

export function andFilters(...filters: Filter[]): Filter {
  const parts = filters.filter((f) => Object.keys(f).length > 0);
  if (parts.length === 0) return {};
  return parts.length === 1 ? parts[0] : { $and: parts };
}

/**
 * One `$group` stage for `sum`. Each field is converted to a long (exact for every integer a double can hold)
 * and then to a decimal, so the sum is exact to 34 digits instead of overflowing 64 bits into a double.
 * Output names are positional (`s0`, `s1`…) because field names may not be valid `$group` output names.
 */
export function sumPipeline(query: SumQuery): Document[] {
  const group: Document = { _id: query.groupBy ? `$${encodeKey(query.groupBy)}` : null, count: { $sum: 1 } };
  query.fields.forEach((f, i) => {
    group[`s${i}`] = { $sum: { $toDecimal: { $toLong: `$${encodeKey(f)}` } } };
  });
  return [{ $match: whereToFilter(query.where) }, { $group: group }, { $sort: { _id: 1 } }];
}

/**
 * The port's rows from the `$group` output of `sumPipeline`. An ungrouped sum is always one row: a `$group` with
 * `_id: null` outputs nothing when nothing matched, where the port (and SQL's aggregate without GROUP BY) answers one
 * row of zeros with count 0. A grouped sum over nothing is no rows, as in SQL.
 */
export function sumRows(query: SumQuery, rows: readonly Document[]): SumRow[] {
  const out = rows.map((row) => {
    const sums: Record<string, bigint> = {};
    query.fields.forEach((f, i) => {
      sums[f] = toBigInt(row[`s${i}`]);
    });
    return { key: toScalar(row._id), count: Number(row.count), sums };
  });
  if (!query.groupBy && out.length === 0) {
    out.push({ key: null, count: 0, sums: Object.fromEntries(query.fields.map((f) => [f, 0n])) });
  }
  return out;
}

/** An integral number from MongoDB (number, Long, Int32, Double, Decimal128…) as an exact bigint. */
export function toBigInt(value: unknown): bigint {
  if (value === null || value === undefined) return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new RangeError(`sum ${value} is not an integer`);
    return BigInt(value);
  }
  return decimalStringToBigInt((value as { toString(): string }).toString()); // Decimal128's, Long's or a string's text
}

/** Parses "123", "-4.00", "1.5E+3" (Decimal128's and Long's `toString`) into a bigint, refusing fractions. */
export function decimalStringToBigInt(text: string): bigint {
  const m = /^([+-]?)(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m) throw new RangeError(`not a decimal number: ${text}`);
  const [, sign, int, frac = '', exp = '0'] = m;
  let digits = int + frac;
  let scale = Number(exp) - frac.length; // value = digits × 10^scale
  if (scale < 0) {
    const dropped = digits.slice(digits.length + scale);
    if (/[^0]/.test(dropped)) throw new RangeError(`sum ${text} is not an integer`);
    digits = digits.slice(0, digits.length + scale) || '0';
    scale = 0;
  }
  const n = BigInt(digits) * 10n ** BigInt(scale);
  return sign === '-' ? -n : n;
}

/**
 * A document as MongoDB should store it: exactly what JSON would keep (as the SQLite adapter's JSON column
 * does: no undefined, Dates as ISO text), every key encoded (encodeKey), plus `_expires` as a Date when
 * `expires_at` is a valid time.
 */
export function toMongoDoc(doc: Doc): Document & { _id: string } {
  const plain = encodeKeys(JSON.parse(JSON.stringify(doc))) as Document & { _id: string };
  delete plain[EXPIRES_FIELD];
  delete plain[TEXT_FIELD];
  const at: unknown = plain.expires_at;
  if (typeof at === 'string' || typeof at === 'number') {
    const date = new Date(at);
    if (!Number.isNaN(date.getTime())) plain[EXPIRES_FIELD] = date;
  }
  return plain;
}

const FIELD_NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * A find's projection (port `Query.fields`): `_id` and the named top-level fields, as MongoDB projects them on the
 * server. Plain identifiers only (an operator or a dotted path would mean something else to the server).
 */
export function toProjection(fields: readonly string[]): Record<string, 1> {
  if (!Array.isArray(fields)) throw new TypeError('fields: expected an array of field names');
  const projection: Record<string, 1> = { _id: 1 };
  for (const f of fields) {
    if (typeof f !== 'string' || !FIELD_NAME.test(f))
      throw new RangeError(`invalid field name ${JSON.stringify(f)} (expected ${FIELD_NAME})`);
    projection[encodeKey(f)] = 1;
  }
  return projection;
}

/** A projected document as the port answers it: a field the stored document lacks comes back as null. */
export function fromProjected<T extends Doc>(stored: Document, fields: readonly string[]): T {
  const out = fromMongoDoc<T>(stored) as Record<string, unknown>;
  for (const f of fields) if (out[f] === undefined) out[f] = null;
  return out as T;
}

/** A stored document back to plain JSON: keys decoded, without `_expires` and `_text`, without any BSON type leaking out. */
export function fromMongoDoc<T extends Doc>(stored: Document): T {
  const out = plainValue(stored) as Record<string, unknown>;
  delete out[EXPIRES_FIELD];
  delete out[TEXT_FIELD];
  return out as T;
}

function plainValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(plainValue);
  if (value instanceof Date) return value.toISOString();
  const bsontype = (value as { _bsontype?: string })._bsontype;
  switch (bsontype) {
    case undefined:
      break;
    case 'Long':
    case 'Int32':
    case 'Double':
    case 'Decimal128':
      return Number((value as Decimal128 | Double | Int32 | Long).toString());
    default:
      return (value as { toString(): string }).toString(); // ObjectId and other exotic types: their canonical text
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) setOwn(out, decodeKey(k), plainValue(v));
  return out;
}

/** A group key of `sum` as the port's Scalar. */
function toScalar(value: unknown): Scalar {
  const v = plainValue(value);
  if (v === undefined) return null;
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return JSON.stringify(v);
}
