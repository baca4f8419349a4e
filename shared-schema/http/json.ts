/** A piece of output text on the work stack of canonicalJson (values parsed from JSON are never one). */
class Text {
  constructor(readonly text: string) {}
}

/**
 * Canonical JSON (sorted keys) so that the same body in another key order is the same body. Written with its own
 * stack instead of recursion: the Idempotency-Key fingerprint reads bodies before they are validated, and a body
 * of 1 MB can nest 100 000 levels deep, far below what the call stack holds (a RangeError there was a 500).
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const work: unknown[] = [value];
  while (work.length > 0) {
    const v = work.pop();
    if (v instanceof Text) {
      out.push(v.text);
    } else if (Array.isArray(v)) {
      // Pushed in reverse: `[`, then each element after a `,`, then `]` come off the stack in order.
      work.push(new Text(']'));
      for (let i = v.length - 1; i >= 0; i--) {
        work.push(i in v ? v[i] : new Text('')); // a hole reads as nothing, as `Array.prototype.map` left it
        if (i > 0) work.push(new Text(','));
      }
      work.push(new Text('['));
    } else if (v && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      work.push(new Text('}'));
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, item] = entries[i];
        work.push(item, new Text(`${JSON.stringify(k)}:`));
        if (i > 0) work.push(new Text(','));
      }
      work.push(new Text('{'));
    } else {
      out.push(JSON.stringify(v) ?? 'null');
    }
  }
  return out.join('');
}

/** JSON nested deeper than this is refused before it is parsed (DECISIONS.md, "Cost of a bad body"). */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const OPENS = [OPEN_ARRAY, OPEN_OBJECT] as const;

/**
 * True when `raw` (JSON text as UTF-8) opens more than `max` arrays or objects inside one another, counted on the
 * bytes, brackets inside strings left out, before any parse: JSON.parse of 5 MB of `[` holds the event loop for
 * more than half a second and builds a value nothing can walk with recursion. Stops at the first level past `max`.
 * Text that is not JSON is left to the parser to refuse.
 */
export function jsonDeeperThan(raw: Uint8Array, max: number): boolean {
  return !opensAtMost(raw, max) && nestsDeeperThan(raw, max);
}

/** The count itself (a function of its own: V8 optimizes this loop half as well when it shares a function). */
function nestsDeeperThan(raw: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/**
 * True when the text holds at most `max` opening brackets in all (those in strings counted too), so that nothing in
 * it can nest deeper: the case of nearly every body, told by the engine's own byte search instead of a loop over
 * every byte in JavaScript.
 */
function opensAtMost(raw: Uint8Array, max: number): boolean {
  let opens = 0;
  for (const open of OPENS) {
    for (let i = raw.indexOf(open); i !== -1; i = raw.indexOf(open, i + 1)) if (++opens > max) return false;
  }
  return true;
}
