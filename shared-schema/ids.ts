/** Identifiers of DECISIONS.md. Random bytes come from node:crypto; nothing here does I/O. */
import { randomBytes, createHash } from 'node:crypto';

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

let lastUlidMs = -1;
let lastUlidRandom: number[] = [];

/** A monotonic ULID (time-ordered, so unique indexes stay append-friendly). */
export function ulid(nowMs: number = Date.now()): string {
  let random: number[];
  if (nowMs <= lastUlidMs) {
    random = lastUlidRandom.slice();
    for (let i = random.length - 1; i >= 0; i--) {
      if (random[i] < 31) {
        random[i] += 1;
        break;
      }
      random[i] = 0;
    }
    nowMs = lastUlidMs;
  } else {
    random = Array.from(randomBytes(16), (b) => b & 31);
  }
  lastUlidMs = nowMs;
  lastUlidRandom = random;
  let time = '';
  let t = nowMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time + random.map((n) => CROCKFORD[n]).join('');
}

export const newPartnerId = (): string => `pt_${randomFrom(CROCKFORD, 20)}`;
export const newJobId = (nowMs?: number): string => `job_${ulid(nowMs)}`;
export const newClickId = (): string => `ic_${randomBytes(16).toString('base64url').slice(0, 22)}`;
export const newKeyId = (): string => `key_${randomFrom(CROCKFORD, 16)}`;
export const newApiKey = (env: 'live' | 'test'): string => `ik_${env}_${randomFrom(BASE62, 32)}`;
export const newRequestId = (): string => `req_${ulid()}`;

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');
