/**
 * Mutations of a valid request body for the fuzz tests, as JSON text: wrong types, bounds ±1, extra fields, missing
 * required fields, huge strings, deep nesting, lone surrogates, numbers JSON.stringify cannot write (1e400, -0,
 * 2^53+1), and whole bodies that are not JSON at all. A mutation is plain data drawn by fast-check (`mutations()`)
 * and applied deterministically (`mutate`), so a seed replays the same bodies.
 */
import fc from 'fast-check';
import { schemaAt, typeOf, type Json, type Path, type Schema } from './schema-arbitrary.js';

export const MUTATION_KINDS = [
  'wrong_type',
  'bounds',
  'extra_field',
  'missing_required',
  'huge_string',
  'deep_nesting',
  'lone_surrogate',
  'odd_number',
  'raw_text',
  'raw_bytes',
] as const;
export type MutationKind = (typeof MUTATION_KINDS)[number];

export interface Mutation {
  kind: MutationKind;
  /** Which node (index modulo the candidates). */
  pick: number;
  /** Which variant of the mutation (index modulo the variants). */
  variant: number;
}

export interface MutatedBody {
  bytes: Uint8Array;
  /** What was done, for failure messages (`bounds items[0].quantity = 10001`). */
  description: string;
}

export const mutations = (kinds: readonly MutationKind[] = MUTATION_KINDS): fc.Arbitrary<Mutation> =>
  fc.record({ kind: fc.constantFrom(...kinds), pick: fc.nat(1000), variant: fc.nat(1000) });

const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const asList = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : typeof v === 'string' ? [v] : []);

export function pathText(path: Path): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out || '(body)';
}

/** Every node of `value` (the root first), depth first. */
function nodes(value: Json, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(value)) value.forEach((v, i) => nodes(v, [...path, i], out));
  else if (isObject(value)) for (const k of Object.keys(value)) nodes(value[k], [...path, k], out);
  return out;
}

function get(value: Json, path: Path): Json {
  let v: Json = value;
  for (const p of path) v = (v as Record<string | number, Json>)[p]!;
  return v;
}

/** An own property even for `__proto__` (assignment would set the prototype instead). */
function setOwn(target: Record<string, Json> | Json[], key: string | number, v: Json): void {
  Object.defineProperty(target, key, { value: v, enumerable: true, writable: true, configurable: true });
}

function clone(value: Json): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

const RAW = (i: number) => `\u0001raw${i}\u0001`;

/** `value` with the node at `path` replaced by `replacement` (a value, or raw JSON text via `raw`). */
function replaced(value: Json, path: Path, replacement: { value: Json } | { raw: string }): string {
  if (path.length === 0) return 'raw' in replacement ? replacement.raw : JSON.stringify(replacement.value);
  const copy = clone(value);
  const parent = get(copy, path.slice(0, -1)) as Record<string, Json> | Json[];
  const last = path[path.length - 1];
  if ('raw' in replacement) {
    setOwn(parent, last, RAW(0));
    // JSON.stringify writes \u0001 as the escape `\u0001`: that text marks the spot.
    return JSON.stringify(copy).replace(JSON.stringify(RAW(0)), () => replacement.raw);
  }
  setOwn(parent, last, replacement.value);
  return JSON.stringify(copy);
}

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

const WRONG_VALUES: Json[] = [null, true, false, 0, -1, 1.5, '', 'x', '12', [], [1], {}, { a: 1 }];

/** Names an extra field takes: ordinary, prototype names, empty, long, control, lone surrogate, near-duplicates. */
const EXTRA_KEYS = [
  'extra',
  '__proto__',
  'constructor',
  'toString',
  '',
  'k'.repeat(300),
  '\u0000',
  '\ud800',
  'price_cents ',
  'STORE_ID',
  'items[0]',
];

const ODD_NUMBERS = [
  '1e400',
  '-1e400',
  '-0',
  '-0.0',
  '0e0',
  '9007199254740993',
  '9007199254740992',
  '-9007199254740993',
  '1e-400',
  '5e-324',
  '1E2',
  '0.1e1',
  '100.0',
  '1.0000000000000001',
  '123456789012345678901234567890',
  '2.5e1',
  '1e21',
  '0.01',
  '1e-7',
];

const SURROGATES = [
  '"\\ud800"',
  '"ab\\udc00cd"',
  '"\\ud800\\ud800"',
  '"\\udfff\\ud800"',
  '"x\\ud83d"',
  '"\\ud83d\\ude00"',
];

const HUGE = [100_000, 600_000, 1_100_000];
const DEPTHS = [1_000, 10_000, 100_000];

/** JSON texts that are not JSON, or JSON of the wrong shape altogether. */
function rawTexts(valid: string): string[] {
  return [
    '',
    ' ',
    '{',
    '}',
    '{"a":1,}',
    '[1,]',
    'nul',
    'NaN',
    'Infinity',
    '{"a":Infinity}',
    '{"a":NaN}',
    "{'a':1}",
    '{a:1}',
    '\ufeff' + valid,
    valid + 'x',
    valid + '{}',
    valid.slice(0, Math.max(1, valid.length >> 1)),
    '[]',
    'null',
    '0',
    '"text"',
    'true',
    '{}',
    `[${valid}]`,
    '{"__proto__":{"polluted":1}}',
    '{"a":"\\x41"}',
    '{"a":"\\u12"}',
    '{"a":"\u0000"}',
    '{"a":1}{"b":2}',
    '\u0000',
    '{"a":01}',
    '{"a":.5}',
    '{"a":+1}',
    '{"a":0x10}',
    '{"a":"line\nbreak"}',
  ];
}

/** Byte sequences that are not UTF-8 (an overlong form, a lone CESU surrogate, a stray continuation byte, 0xFF). */
function rawBytes(valid: string): Uint8Array[] {
  const at = valid.indexOf('"', 1);
  const splice = (bytes: number[]) => {
    const head = Buffer.from(valid.slice(0, at + 1), 'utf8');
    const tail = Buffer.from(valid.slice(at + 1), 'utf8');
    return new Uint8Array(Buffer.concat([head, Buffer.from(bytes), tail]));
  };
  return [
    new Uint8Array([0xff, 0xfe, 0x7b, 0x7d]),
    splice([0xed, 0xa0, 0x80]),
    splice([0xc0, 0xaf]),
    splice([0x80]),
    splice([0xf4, 0x90, 0x80, 0x80]),
    new Uint8Array(Buffer.from(valid, 'utf16le')),
  ];
}

/** Limits that a node's schema states, as replacement values one step inside and outside them. */
function boundValues(schema: Schema | undefined, current: Json): { value: Json; note: string }[] {
  if (schema === undefined || typeof schema === 'boolean') return [];
  const out: { value: Json; note: string }[] = [];
  const types = asList(schema.type);
  const n = (k: string) => (typeof schema[k] === 'number' ? schema[k] : undefined);
  if (types.includes('integer') || types.includes('number')) {
    const step = n('multipleOf') ?? 1;
    const min = n('minimum');
    const max = n('maximum');
    if (min !== undefined)
      out.push(
        { value: min, note: 'minimum' },
        { value: min - step, note: 'minimum-1' },
        { value: min - 1, note: 'minimum-1' },
      );
    if (max !== undefined)
      out.push(
        { value: max, note: 'maximum' },
        { value: max + step, note: 'maximum+1' },
        { value: max + 1, note: 'maximum+1' },
      );
    if (types.includes('integer')) out.push({ value: (min ?? 0) + 0.5, note: 'fraction' });
    if (n('multipleOf') !== undefined)
      out.push({ value: (min ?? 0) + step / 2, note: 'half step' }, { value: (min ?? 0) + step * 3, note: '3 steps' });
  }
  if (types.includes('string')) {
    const min = n('minLength');
    const max = n('maxLength');
    const base = typeof current === 'string' && current.length > 0 ? current : 'a';
    const ofLength = (len: number) => base.repeat(Math.ceil(Math.max(len, 1) / base.length)).slice(0, Math.max(len, 0));
    if (min !== undefined)
      out.push({ value: ofLength(min), note: 'minLength' }, { value: ofLength(min - 1), note: 'minLength-1' });
    if (max !== undefined)
      out.push({ value: ofLength(max), note: 'maxLength' }, { value: ofLength(max + 1), note: 'maxLength+1' });
    // Multi-unit characters: the same count in code points, twice as many UTF-16 units.
    if (max !== undefined)
      out.push(
        { value: '😀'.repeat(max), note: 'maxLength emoji' },
        { value: 'é'.repeat(max + 1), note: 'maxLength+1 é' },
      );
  }
  if (types.includes('array') && Array.isArray(current)) {
    const min = n('minItems');
    const max = n('maxItems');
    const fill = (len: number) =>
      Array.from({ length: Math.max(len, 0) }, (_, i) => clone(current[i % Math.max(current.length, 1)] ?? null));
    if (min !== undefined) out.push({ value: fill(min - 1), note: 'minItems-1' });
    if (max !== undefined)
      out.push({ value: fill(max), note: 'maxItems' }, { value: fill(max + 1), note: 'maxItems+1' });
    if (current.length > 0)
      out.push({ value: [...(clone(current) as Json[]), clone(current[0])], note: 'duplicate item' });
  }
  if (types.includes('object') || schema.properties !== undefined) {
    const max = n('maxProperties');
    const min = n('minProperties');
    if (max !== undefined && isObject(current)) {
      const wide: Record<string, Json> = { ...current };
      for (let i = 0; Object.keys(wide).length <= max; i++) wide[`k${i}`] = 'v';
      out.push({ value: wide, note: 'maxProperties+1' });
    }
    if (min !== undefined && isObject(current)) {
      const keys = Object.keys(current).slice(0, Math.max(min - 1, 0));
      out.push({ value: Object.fromEntries(keys.map((k) => [k, current[k]!])), note: 'minProperties-1' });
    }
  }
  return out;
}

/** Applies `m` to the valid `value` of `schema`. */
export function mutate(schema: Schema, value: Json, m: Mutation): MutatedBody {
  const all = nodes(value);
  const pickFrom = (candidates: Path[]) => candidates[m.pick % candidates.length];
  const text = (t: string, what: string): MutatedBody => ({ bytes: utf8(t), description: `${m.kind} ${what}` });
  switch (m.kind) {
    case 'wrong_type': {
      const path = pickFrom(all);
      const allowed = asList((schemaAt(schema, value, path) as { type?: unknown } | undefined)?.type);
      const current = typeOf(get(value, path));
      const options = WRONG_VALUES.filter(
        (w) =>
          typeOf(w) !== current &&
          !allowed.includes(typeOf(w)) &&
          !(typeOf(w) === 'integer' && allowed.includes('number')),
      );
      const w = options[m.variant % options.length] ?? null;
      return text(replaced(value, path, { value: w }), `${pathText(path)} = ${JSON.stringify(w)}`);
    }
    case 'bounds': {
      const bounded = all
        .map((p) => ({ p, b: boundValues(schemaAt(schema, value, p), get(value, p)) }))
        .filter((x) => x.b.length > 0);
      if (bounded.length === 0) return mutate(schema, value, { ...m, kind: 'wrong_type' });
      const { p, b } = bounded[m.pick % bounded.length];
      const chosen = b[m.variant % b.length];
      const shown = JSON.stringify(chosen.value);
      return text(
        replaced(value, p, { value: chosen.value }),
        `${pathText(p)} ${chosen.note} = ${shown.length > 60 ? `${shown.slice(0, 60)}…` : shown}`,
      );
    }
    case 'extra_field': {
      const objects = all.filter((p) => isObject(get(value, p)));
      if (objects.length === 0) return mutate(schema, value, { ...m, kind: 'wrong_type' });
      const path = pickFrom(objects);
      const key = EXTRA_KEYS[m.variant % EXTRA_KEYS.length];
      const copy = clone(value);
      setOwn(get(copy, path) as Record<string, Json>, key, m.variant % 2 === 0 ? 1 : { nested: true });
      return text(JSON.stringify(copy), `${pathText(path)} + ${JSON.stringify(key).slice(0, 40)}`);
    }
    case 'missing_required': {
      const withRequired = all.flatMap((p) => {
        const v = get(value, p);
        const s = schemaAt(schema, value, p);
        if (!isObject(v) || s === undefined || typeof s === 'boolean') return [];
        return asList(s.required)
          .filter((r) => r in v)
          .map((r) => ({ p, r }));
      });
      if (withRequired.length === 0) return mutate(schema, value, { ...m, kind: 'extra_field' });
      const { p, r } = withRequired[m.pick % withRequired.length];
      const copy = clone(value);
      delete (get(copy, p) as Record<string, Json>)[r];
      return text(JSON.stringify(copy), `${pathText([...p, r])} removed`);
    }
    case 'huge_string': {
      const strings = all.filter((p) => typeof get(value, p) === 'string');
      const path = pickFrom(strings.length > 0 ? strings : all);
      const size = HUGE[m.variant % HUGE.length];
      const unit = ['x', 'é', '😀', '\\'][Math.floor(m.variant / HUGE.length) % 4];
      const huge = unit.repeat(Math.ceil(size / Buffer.byteLength(JSON.stringify(unit))));
      return text(
        replaced(value, path, { value: huge }),
        `${pathText(path)} = ${JSON.stringify(unit)} × ${huge.length}`,
      );
    }
    case 'deep_nesting': {
      const path = pickFrom(all);
      const depth = DEPTHS[m.variant % DEPTHS.length];
      const shape = Math.floor(m.variant / DEPTHS.length) % 3;
      const raw =
        shape === 0
          ? '['.repeat(depth) + ']'.repeat(depth)
          : shape === 1
            ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
            : '[{"a":'.repeat(depth) + 'null' + '}]'.repeat(depth);
      return text(
        replaced(value, path, { raw }),
        `${pathText(path)} nested ${depth} deep (${['arrays', 'objects', 'mixed'][shape]})`,
      );
    }
    case 'lone_surrogate': {
      const strings = all.filter((p) => typeof get(value, p) === 'string');
      const path = pickFrom(strings.length > 0 ? strings : all);
      const raw = SURROGATES[m.variant % SURROGATES.length];
      return text(replaced(value, path, { raw }), `${pathText(path)} = ${raw}`);
    }
    case 'odd_number': {
      const numbers = all.filter((p) => typeof get(value, p) === 'number');
      const path = pickFrom(numbers.length > 0 && m.variant % 4 !== 0 ? numbers : all);
      const raw = ODD_NUMBERS[m.variant % ODD_NUMBERS.length];
      return text(replaced(value, path, { raw }), `${pathText(path)} = ${raw}`);
    }
    case 'raw_text': {
      const texts = rawTexts(JSON.stringify(value));
      const t = texts[m.variant % texts.length];
      return text(t, JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}…` : t));
    }
    case 'raw_bytes': {
      const all = rawBytes(JSON.stringify(value));
      const i = m.variant % all.length;
      return { bytes: all[i], description: `raw_bytes #${i}` };
    }
  }
}
