/**
 * Names for NATS: subject tokens, stream and bucket names and KV keys all have restricted alphabets,
 * while the port takes arbitrary strings. `token` keeps readable names readable and hex-encodes the rest;
 * the encoded form starts with `_`, which the readable form never contains, so two inputs never collide.
 */
const READABLE = /^[A-Za-z0-9-]{1,64}$/;

export function token(value: string): string {
  return READABLE.test(value) ? value : `_${Buffer.from(value, 'utf8').toString('hex')}`;
}

/** A valid KV key (`[-/_=.a-zA-Z0-9]+`, not starting or ending with `.`) for any string, including ''. */
export function kvKey(key: string): string {
  return `k${Buffer.from(key, 'utf8').toString('base64url')}`;
}

export interface NatsNames {
  subject(subject: string): string;
  numbersBucket(): string;
  countersBucket(ttlMs: number): string;
  queueStream(queue: string): string;
  queueSubject(queue: string, id: string): string;
  queueSubjects(queue: string): string;
  deadLetterStream(queue: string): string;
  deadLetterSubject(queue: string): string;
}

export function natsNames(prefix: string): NatsNames {
  const p = token(prefix);
  return {
    subject: (subject) => `pc.${p}.${token(subject)}`,
    numbersBucket: () => `pc_${p}_numbers`,
    countersBucket: (ttlMs) => `pc_${p}_counters_${ttlMs}`,
    queueStream: (queue) => `PCQ_${p}_${token(queue)}`,
    // One subject per item: the stream keeps at most one pending message per subject (see nats-work-queue.ts).
    queueSubject: (queue, id) => `pcq.${p}.${token(queue)}.${token(id)}`,
    queueSubjects: (queue) => `pcq.${p}.${token(queue)}.*`,
    deadLetterStream: (queue) => `PCDLQ_${p}_${token(queue)}`,
    deadLetterSubject: (queue) => `pcdlq.${p}.${token(queue)}`,
  };
}

/** The inverse of `token`. */
export function untoken(value: string): string {
  return value.startsWith('_') ? Buffer.from(value.slice(1), 'hex').toString('utf8') : value;
}
