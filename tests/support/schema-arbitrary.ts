/**
 * fast-check arbitraries built from the project's JSON Schemas (shared-schema/contract/schemas/*.ts), for the fuzz tests:
 * `validValues(schema)` produces values the same ajv validator accepts, and `schemaAt(schema, value, path)` finds the
 * schema of one node of such a value (the bounds mutations read it).
 *
 * It handles the keywords the schemas use: type (one or a list), properties, required, additionalProperties (false,
 * a schema, absent), propertyNames, min/maxProperties, enum, const, pattern (fc.stringMatching), min/maxLength,
 * minimum/maximum, multipleOf, min/maxItems, uniqueItems, items, format date-time / uri, allOf with if/then,
 * anyOf/oneOf, `true`. Any other keyword throws when the arbitrary is built, so a schema that starts using one is
 * noticed here instead of silently generating values the validator refuses.
 */
import fc from 'fast-check';
import type { JsonSchema } from '../../shared-schema/contract/schemas/common.js';
import { canonicalJson } from '../../shared-schema/http/json.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Schema = JsonSchema | boolean;

/** A node path inside a value: property names and array indexes. */
export type Path = (string | number)[];

export interface ValidOptions {
  /**
   * Values to offer at some paths (written `items[].product.store_id`, `cnpj`), mixed 3:1 with the schema's own:
   * realistic values (existing stores, declared domains, real click ids) let valid bodies reach the business rules.
   * They must themselves be valid under the schema.
   */
  hints?: Record<string, fc.Arbitrary<Json>>;
  /** Arrays and maps get at most this many more elements than their minimum (default 3): bodies stay small. */
  extraItems?: number;
  /** Date-times are drawn between these (default 2000-01-01 .. 2030-01-01). */
  dates?: { min: Date; max: Date };
}

const ANNOTATIONS = new Set([
  'description',
  'title',
  'examples',
  'default',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$schema',
  '$id',
]);
const SUPPORTED = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'enum',
  'const',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'items',
  'format',
  'allOf',
  'anyOf',
  'oneOf',
  'if',
  'then',
]);

const isSchemaObject = (s: unknown): s is JsonSchema => typeof s === 'object' && s !== null && !Array.isArray(s);
const asList = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : typeof v === 'string' ? [v] : []);

function checkKeywords(schema: JsonSchema): void {
  for (const k of Object.keys(schema)) {
    if (!SUPPORTED.has(k) && !ANNOTATIONS.has(k))
      throw new Error(`schema-arbitrary: keyword ${k} is not handled (schema ${JSON.stringify(schema)})`);
  }
}

/** A JSON value of the types in `types` (used for `true` schemas and for wrong-type mutations). */
export function jsonOfType(type: string): fc.Arbitrary<Json> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.oneof(fc.integer(), fc.constantFrom(0, -1, 1, 2 ** 31, -(2 ** 53)));
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0.5, -1.25, 1e300));
    case 'string':
      return fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('', '0', 'true', 'null', '1e400'));
    case 'array':
      return fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null)), { maxLength: 3 });
    case 'object':
      return fc.dictionary(
        fc.string({ minLength: 1, maxLength: 8 }),
        fc.oneof(fc.integer(), fc.string({ maxLength: 5 })),
        { maxKeys: 3 },
      );
    default:
      throw new Error(`schema-arbitrary: unknown type ${type}`);
  }
}

export const JSON_TYPES = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'] as const;

/** The JSON type of a value (`integer` for whole numbers). */
export function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** An object schema's `allOf` folded into one schema, given the discriminating `const` the variant fixes. */
function mergeInto(target: JsonSchema, part: JsonSchema): void {
  for (const [k, v] of Object.entries(part)) {
    if (k === 'properties') {
      const props = { ...((target.properties as Record<string, Schema> | undefined) ?? {}) };
      for (const [name, sub] of Object.entries(v as Record<string, Schema>)) {
        // `true` in a `then` only lets the property through; it keeps the constraint stated elsewhere.
        if (sub === true && props[name] !== undefined) continue;
        const before = props[name];
        props[name] = isSchemaObject(before) && isSchemaObject(sub) ? { ...before, ...sub } : sub;
      }
      target.properties = props;
    } else if (k === 'required') {
      target.required = [...new Set([...asList(target.required), ...asList(v)])];
    } else {
      target[k] = v;
    }
  }
}

/** The variants of an object schema with `allOf` / `if` / `then`: one per discriminating constant (or just one). */
function objectVariants(schema: JsonSchema): JsonSchema[] {
  const base: JsonSchema = { ...schema };
  delete base.allOf;
  const conditional: { cond: JsonSchema; then: JsonSchema }[] = [];
  for (const part of (schema.allOf as Schema[] | undefined) ?? []) {
    if (!isSchemaObject(part)) continue;
    checkKeywords(part);
    if (part.if !== undefined) {
      conditional.push({ cond: part.if as JsonSchema, then: (part.then as JsonSchema | undefined) ?? {} });
    } else {
      mergeInto(base, part);
    }
  }
  // Conditions that hold for every object (`{type: 'object'}`) merge unconditionally.
  const discriminated: { prop: string; value: unknown; then: JsonSchema }[] = [];
  for (const c of conditional) {
    const props = Object.entries((c.cond.properties as Record<string, Schema> | undefined) ?? {});
    const fixed = props.find(([, s]) => isSchemaObject(s) && 'const' in s);
    if (fixed) discriminated.push({ prop: fixed[0], value: (fixed[1] as JsonSchema).const, then: c.then });
    else mergeInto(base, c.then);
  }
  if (discriminated.length === 0) return [base];
  const variants: JsonSchema[] = [];
  for (const d of discriminated) {
    const v: JsonSchema = JSON.parse(JSON.stringify(base)) as JsonSchema;
    mergeInto(v, d.then);
    const props = { ...((v.properties as Record<string, Schema> | undefined) ?? {}) };
    props[d.prop] = { const: d.value };
    v.properties = props;
    v.required = [...new Set([...asList(v.required), d.prop])];
    variants.push(v);
  }
  return variants;
}

function decimals(step: number): number {
  const s = String(step);
  const e = /e-(\d+)$/.exec(s);
  if (e) return Number(e[1]);
  const dot = s.indexOf('.');
  return dot < 0 ? 0 : s.length - dot - 1;
}

function numberArb(schema: JsonSchema, integer: boolean): fc.Arbitrary<Json> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : integer ? -(2 ** 40) : -1e9;
  const max = typeof schema.maximum === 'number' ? schema.maximum : integer ? 2 ** 40 : 1e9;
  const step = typeof schema.multipleOf === 'number' ? schema.multipleOf : integer ? 1 : undefined;
  if (step !== undefined) {
    const lo = BigInt(Math.ceil(min / step));
    const hi = BigInt(Math.floor(max / step));
    const places = decimals(step);
    const of = (k: bigint) => Number((Number(k) * step).toFixed(places));
    return fc.oneof(
      { arbitrary: fc.constantFrom(of(lo), of(hi)), weight: 1 },
      { arbitrary: fc.bigInt({ min: lo, max: hi }).map(of), weight: 4 },
    );
  }
  return fc.oneof(
    { arbitrary: fc.constantFrom(min, max), weight: 1 },
    {
      arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? 0 : d)),
      weight: 4,
    },
  );
}

function dateTimeArb(options: ValidOptions): fc.Arbitrary<Json> {
  const min = options.dates?.min ?? new Date('2000-01-01T00:00:00Z');
  const max = options.dates?.max ?? new Date('2030-01-01T00:00:00Z');
  return fc
    .tuple(fc.date({ min, max, noInvalidDate: true }), fc.constantFrom('ms', 'seconds', 'offset'))
    .map(([d, form]) => {
      const iso = d.toISOString();
      if (form === 'ms') return iso;
      if (form === 'seconds') return `${iso.slice(0, 19)}Z`;
      // The same instant written with a -03:00 offset.
      const local = new Date(d.getTime() - 3 * 3600_000).toISOString();
      return `${local.slice(0, 19)}-03:00`;
    })
    .filter((s) => Date.parse(s) >= min.getTime() && Date.parse(s) <= max.getTime());
}

function stringArb(schema: JsonSchema, options: ValidOptions): fc.Arbitrary<Json> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const fits = (s: string) => [...s].length >= minLength && (maxLength === undefined || [...s].length <= maxLength);
  if (schema.format === 'date-time') return dateTimeArb(options);
  if (schema.format === 'uri') {
    const https = schema.pattern === '^https://';
    if (schema.pattern !== undefined && !https)
      throw new Error(`schema-arbitrary: uri with pattern ${JSON.stringify(schema.pattern)}`);
    return fc
      .webUrl({ validSchemes: https ? ['https'] : ['https', 'http'], withQueryParameters: true, withFragments: true })
      .filter(fits);
  }
  if (schema.format !== undefined)
    throw new Error(`schema-arbitrary: format ${JSON.stringify(schema.format)} is not handled`);
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
  const longest = Math.min(maxLength ?? minLength + 40, minLength + 60);
  return fc
    .oneof(
      fc.string({ minLength, maxLength: longest, unit: 'grapheme-ascii' }),
      fc.string({ minLength, maxLength: longest, unit: 'binary' }),
    )
    .filter(fits);
}

function hintPath(path: Path): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? '[]' : out === '' ? p : `.${p}`;
  return out;
}

/** Values valid under `schema` (and, for object/array nodes, under every nested schema). */
export function validValues(schema: Schema, options: ValidOptions = {}, path: Path = []): fc.Arbitrary<Json> {
  const hint = options.hints?.[hintPath(path)];
  const own = ownValues(schema, options, path);
  return hint ? fc.oneof({ arbitrary: hint, weight: 3 }, { arbitrary: own, weight: 1 }) : own;
}

function ownValues(schema: Schema, options: ValidOptions, path: Path): fc.Arbitrary<Json> {
  if (schema === true) return fc.oneof(...JSON_TYPES.map(jsonOfType));
  if (schema === false) throw new Error('schema-arbitrary: `false` has no values');
  checkKeywords(schema);
  if ('const' in schema) return fc.constant(schema.const as Json);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Json[]));
  for (const k of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[k])) {
      const { [k]: branches, ...rest } = schema;
      return fc.oneof(
        ...(branches as Schema[]).map((b) => validValues(isSchemaObject(b) ? { ...rest, ...b } : b, options, path)),
      );
    }
  }
  const types = asList(schema.type);
  if (types.length === 0) {
    if (schema.properties !== undefined || schema.allOf !== undefined) return objectArb(schema, options, path);
    throw new Error(`schema-arbitrary: no type in ${JSON.stringify(schema)}`);
  }
  if (types.length > 1) return fc.oneof(...types.map((t) => ownValues({ ...schema, type: t }, options, path)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return numberArb(schema, true);
    case 'number':
      return numberArb(schema, false);
    case 'string':
      return stringArb(schema, options);
    case 'array':
      return arrayArb(schema, options, path);
    case 'object':
      return objectArb(schema, options, path);
    default:
      throw new Error(`schema-arbitrary: type ${String(types[0])}`);
  }
}

function arrayArb(schema: JsonSchema, options: ValidOptions, path: Path): fc.Arbitrary<Json> {
  const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const maxLength = Math.min(
    typeof schema.maxItems === 'number' ? schema.maxItems : Infinity,
    minLength + (options.extraItems ?? 3),
  );
  const item = validValues((schema.items as Schema | undefined) ?? true, options, [...path, 0]);
  if (schema.uniqueItems === true)
    return fc.uniqueArray(item, { minLength, maxLength, selector: (v) => canonicalJson(v) });
  return fc.array(item, { minLength, maxLength });
}

function objectArb(schema: JsonSchema, options: ValidOptions, path: Path): fc.Arbitrary<Json> {
  const variants = objectVariants(schema).map((v) => objectVariantArb(v, options, path));
  return variants.length === 1 ? variants[0] : fc.oneof(...variants);
}

function objectVariantArb(schema: JsonSchema, options: ValidOptions, path: Path): fc.Arbitrary<Json> {
  const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
  const required = asList(schema.required);
  const minProperties = typeof schema.minProperties === 'number' ? schema.minProperties : 0;
  const maxProperties = typeof schema.maxProperties === 'number' ? schema.maxProperties : Infinity;
  const named: Record<string, fc.Arbitrary<Json>> = {};
  for (const [name, sub] of Object.entries(props)) named[name] = validValues(sub, options, [...path, name]);
  for (const name of required) named[name] ??= validValues(true, options, [...path, name]);
  const record = fc.record(named, { requiredKeys: required });
  const extra = schema.additionalProperties;
  let arb: fc.Arbitrary<Record<string, Json>> = record;
  if (extra !== false && Object.keys(props).length === 0 && extra !== undefined) {
    // A map (`additionalProperties: {schema}`): keys from `propertyNames` when given, else short printable names.
    const keys =
      schema.propertyNames !== undefined
        ? (validValues(schema.propertyNames as Schema, options, [...path, '*key']) as fc.Arbitrary<string>)
        : fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme-ascii' });
    const room = Math.min(maxProperties, minProperties + (options.extraItems ?? 3));
    arb = fc.dictionary(keys, validValues(extra as Schema, options, [...path, '*']), {
      minKeys: minProperties,
      maxKeys: room,
      noNullPrototype: true,
    });
  }
  return arb.filter((o) => {
    const n = Object.keys(o).length;
    return n >= minProperties && n <= maxProperties;
  });
}

/**
 * The schema that governs the node at `path` of `value` (undefined when none does, e.g. an unknown field): object
 * properties through the variant the value selects, map values, array items.
 */
export function schemaAt(schema: Schema, value: unknown, path: Path): Schema | undefined {
  let s: Schema | undefined = schema;
  let v: unknown = value;
  for (const step of path) {
    if (s === undefined || s === true || s === false) return s === true ? true : undefined;
    s = resolveFor(s, v);
    if (typeof step === 'number') {
      s = (s.items as Schema | undefined) ?? true;
      v = (v as unknown[])[step];
    } else {
      const props = (s.properties as Record<string, Schema> | undefined) ?? {};
      s =
        props[step] ??
        (s.additionalProperties !== false && s.additionalProperties !== undefined
          ? (s.additionalProperties as Schema)
          : undefined);
      v = (v as Record<string, unknown>)[step];
    }
  }
  return s === undefined ? undefined : s === true || s === false ? s : resolveFor(s, v);
}

/** One schema object for `value`: the object variant it selects, with nested `allOf` pairs folded together. */
function resolveFor(schema: JsonSchema, value: unknown): JsonSchema {
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
    const branches = (schema.anyOf ?? schema.oneOf) as Schema[];
    const t = typeOf(value);
    const pick = branches.find(
      (b) => isSchemaObject(b) && asList(b.type).some((bt) => bt === t || (bt === 'number' && t === 'integer')),
    );
    if (isSchemaObject(pick)) return resolveFor(pick, value);
  }
  if (!Array.isArray(schema.allOf)) return schema;
  const variants = objectVariants(schema);
  const chosen = variants.find((vv) =>
    Object.entries((vv.properties as Record<string, Schema>) ?? {}).every(
      ([k, sub]) =>
        !isSchemaObject(sub) ||
        !('const' in sub) ||
        (typeof value === 'object' &&
          value !== null &&
          canonicalJson((value as Record<string, unknown>)[k]) === canonicalJson(sub.const)),
    ),
  );
  return chosen ?? variants[0];
}
