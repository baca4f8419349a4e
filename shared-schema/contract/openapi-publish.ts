/**
 * The published form of a validating schema: what client generators and outside validators read. The doors keep
 * validating with the schemas of ./schemas (if/then one-of blocks give per-field errors); the OpenAPI document
 * carries this rewrite of the very same objects, never a hand-made copy:
 *
 * - an if/then one-of block (an `allOf` whose branches are `if: {properties: {D: {const: V}}}` / `then: …`, plus the
 *   part that lists D's values) becomes `oneOf` of one object per value, with `discriminator: {propertyName: D}`,
 *   and a `{type: 'null'}` branch when the block's `type` allows null;
 * - a `multipleOf` below 1 (the two-decimal `rate`) is dropped and said in the description: validators without a
 *   precision setting refuse 12.34 (12.34 / 0.01 is not an integer in binary floating point); the service keeps
 *   checking it;
 * - an `enum` or `const` without `type` gets the `type` of its values (`['string', 'null']` for a nullable enum).
 *
 * Pure: works on JSON values (schemas whose components are already `$ref`s). Throws on an if/then it cannot read,
 * so that a new shape of schema fails the tests instead of being published wrong.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Where a one-of block's branches go: named components (with a discriminator `mapping`) or inline. */
export interface BranchSink {
  /** Registers `schema` as component `name` and returns its reference. */
  add(name: string, schema: Obj): string;
}

const pascal = (s: string) => s.replace(/(^|[_.-])([a-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());

function jsonType(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeOfValues(values: Json[]): Json {
  const types = [...new Set(values.map(jsonType))];
  if (types.includes('number') && types.includes('integer')) types.splice(types.indexOf('integer'), 1);
  return types.length === 1 ? types[0] : types;
}

/** `{properties: {D: {const: V}}, required: [D]}` (optionally `type: 'object'`) → [D, V]. */
function branchCondition(cond: Json): [string, string] | null {
  if (!isObj(cond) || !isObj(cond.properties)) return null;
  const entries = Object.entries(cond.properties);
  if (entries.length !== 1) return null;
  const [d, s] = entries[0];
  if (!isObj(s) || typeof s.const !== 'string') return null;
  return [d, s.const];
}

/** The part of a block that only names the discriminator: `{required: [D], properties: {D: {enum}}}`, maybe under `if: {type: object}`. */
function discriminatorValues(part: Obj, d: string): string[] | null {
  const body =
    isObj(part.then) && isObj(part.if) && Object.keys(part.if).join() === 'type' && part.if.type === 'object'
      ? part.then
      : part;
  if (part.if !== undefined && body === part) return null;
  const props = body.properties;
  if (!isObj(props) || Object.keys(props).join() !== d || !isObj(props[d]) || !Array.isArray(props[d].enum))
    return null;
  if (!Array.isArray(body.required) || body.required.length !== 1 || body.required[0] !== d) return null;
  if (Object.keys(body).some((k) => k !== 'required' && k !== 'properties')) return null;
  return props[d].enum.map(String);
}

function decimals(step: number): number | null {
  for (let n = 1; n <= 6; n++) if (Math.abs(step - 10 ** -n) < 1e-12) return n;
  return null;
}

function appendDescription(s: Obj, text: string): void {
  s.description = typeof s.description === 'string' && s.description !== '' ? `${s.description} ${text}` : text;
}

/** The published rewrite of `schema`; `name` (a component's name) names the one-of branches `${name}${Value}`. */
export function publishSchema(schema: Json, sink?: BranchSink, name?: string): Json {
  if (Array.isArray(schema)) return schema.map((s) => publishSchema(s, sink));
  if (!isObj(schema)) return schema;
  if (typeof schema.$ref === 'string') return schema;
  const oneOf = oneOfBlock(schema, sink, name);
  if (oneOf) return oneOf;

  const out: Obj = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'properties' || k === 'patternProperties' || k === '$defs' || k === 'dependentSchemas') {
      out[k] = isObj(v) ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, publishSchema(s, sink)])) : v;
    } else if (
      k === 'enum' ||
      k === 'const' ||
      k === 'required' ||
      k === 'examples' ||
      k === 'example' ||
      k === 'default'
    ) {
      out[k] = v;
    } else if (isObj(v) || Array.isArray(v)) {
      out[k] = publishSchema(v, sink);
    } else {
      out[k] = v;
    }
  }
  if (typeof out.multipleOf === 'number' && out.multipleOf < 1) {
    const n = decimals(out.multipleOf);
    appendDescription(
      out,
      `${n === null ? `A multiple of ${out.multipleOf}` : `At most ${n} decimal place${n === 1 ? '' : 's'}`} (checked by the service, 422 \`multiple_of\`; not written as \`multipleOf\`, which floating-point validators misapply to values such as 12.34).`,
    );
    delete out.multipleOf;
  }
  if (out.type === undefined && (Array.isArray(out.enum) || 'const' in out)) {
    const t = typeOfValues(Array.isArray(out.enum) ? out.enum : [out.const]);
    return { type: t, ...out };
  }
  return out;
}

function oneOfBlock(schema: Obj, sink: BranchSink | undefined, name: string | undefined): Obj | null {
  if (!Array.isArray(schema.allOf)) return null;
  const parts = schema.allOf.filter(isObj);
  const branches = parts.filter((p) => p.if !== undefined && branchCondition(p.if) !== null);
  if (branches.length === 0) return null;

  const where = name ?? 'an inline schema';
  const d = branchCondition(branches[0].if)![0];
  const rest = parts.filter((p) => !branches.includes(p));
  if (parts.length !== schema.allOf.length || rest.length !== 1)
    throw new Error(`openapi: cannot publish the if/then block of ${where}`);
  const values = discriminatorValues(rest[0], d);
  const consts = branches.map((b) => branchCondition(b.if)!);
  if (
    !values ||
    consts.some(([cd]) => cd !== d) ||
    [...values].sort().join() !==
      consts
        .map(([, v]) => v)
        .sort()
        .join()
  ) {
    throw new Error(`openapi: the if/then branches of ${where} do not match its values of ${d}`);
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (!types.includes('object') || types.some((t) => t !== 'object' && t !== 'null'))
    throw new Error(`openapi: ${where} is not an object block`);
  if (Object.keys(schema).some((k) => k !== 'type' && k !== 'allOf' && k !== 'description' && k !== 'title')) {
    throw new Error(`openapi: ${where} has keywords beside its if/then block`);
  }

  const oneOf: Json[] = [];
  const mapping: Obj = {};
  for (const b of branches) {
    const value = branchCondition(b.if)![1];
    const then = b.then;
    if (!isObj(then) || b.else !== undefined)
      throw new Error(`openapi: branch ${value} of ${where} needs a then and no else`);
    const properties: Obj = { [d]: { type: 'string', const: value } };
    for (const [p, s] of Object.entries(isObj(then.properties) ? then.properties : {}))
      if (p !== d) properties[p] = publishSchema(s, sink);
    const required = [d, ...(Array.isArray(then.required) ? then.required : []).filter((r) => r !== d)];
    const branch: Obj = { type: 'object', required, properties };
    if (then.additionalProperties !== undefined)
      branch.additionalProperties = publishSchema(then.additionalProperties, sink);
    if (Object.keys(then).some((k) => k !== 'properties' && k !== 'required' && k !== 'additionalProperties')) {
      throw new Error(`openapi: branch ${value} of ${where} has keywords the rewrite does not carry`);
    }
    if (sink && name) {
      const ref = sink.add(`${name}${pascal(value)}`, branch);
      mapping[value] = ref;
      oneOf.push({ $ref: ref });
    } else {
      oneOf.push(branch);
    }
  }
  if (types.includes('null')) oneOf.push({ type: 'null' });
  const out: Obj = {};
  if (schema.title !== undefined) out.title = schema.title;
  if (schema.description !== undefined) out.description = schema.description;
  out.oneOf = oneOf;
  out.discriminator = Object.keys(mapping).length > 0 ? { propertyName: d, mapping } : { propertyName: d };
  return out;
}
