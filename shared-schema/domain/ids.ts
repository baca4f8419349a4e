/** Identifiers of DECISIONS.md. Random bytes come from node:crypto; nothing here does I/O. */
import { randomBytes, randomFillSync, createHash } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomFrom(alphabet: string, length: number): string {
  // Rejection sampling keeps every character equally likely.
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Random bytes drawn 4 kB at a time (a ULID is made for every request and every history entry). */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/**
 * A generator of monotonic ULIDs (time-ordered, so unique indexes stay append-friendly): within one millisecond, or
 * when the clock goes back, each one is the previous plus one. The service uses one, `ulid`.
 */
export function monotonicUlids(): (nowMs?: number) => string {
  let lastMs = -1;
  const random = new Uint8Array(16);
  return (nowMs = Date.now()) => {
    if (nowMs <= lastMs) {
      for (let i = random.length - 1; i >= 0; i--) {
        if (random[i] < 31) {
          random[i] += 1;
          break;
        }
        random[i] = 0;
      }
      nowMs = lastMs;
    } else {
      if (poolAt + 16 > pool.length) {
        randomFillSync(pool);
        poolAt = 0;
      }
      for (let i = 0; i < 16; i++) random[i] = pool[poolAt++] & 31;
    }
    lastMs = nowMs;
    let time = '';
    let t = nowMs;
    for (let i = 0; i < 10; i++) {
      time = CROCKFORD[t % 32] + time;
      t = Math.floor(t / 32);
    }
    let out = time;
    for (let i = 0; i < 16; i++) out += CROCKFORD[random[i]];
    return out;
  };
}

/** The process's ULIDs. */
export const ulid = monotonicUlids();

export const newPartnerId = (): string => `pt_${randomFrom(CROCKFORD, 20)}`;
export const newJobId = (nowMs?: number): string => `job_${ulid(nowMs)}`;
export const newClickId = (): string => `ic_${randomBytes(16).toString('base64url').slice(0, 22)}`;
export const newKeyId = (): string => `key_${randomFrom(CROCKFORD, 16)}`;
export const newApiKey = (env: 'live' | 'test'): string => `ik_${env}_${randomFrom(BASE62, 32)}`;
export const newRequestId = (): string => `req_${ulid()}`;

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');
