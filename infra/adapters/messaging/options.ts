/** Defaults and checks shared by both messaging adapters. */
import type { WorkQueueOptions } from '../../../shared-schema/ports/messaging.js';

export interface ConsumerSettings {
  concurrency: number;
  maxDeliveries: number;
  ackWaitMs: number;
}

export const DEFAULT_MAX_DELIVERIES = 5;
export const DEFAULT_ACK_WAIT_MS = 30_000;
export const DEFAULT_CONCURRENCY = 1;

/** A dead letter's `lastError` when its last delivery got no answer within the ack wait. */
export const ACK_WAIT_RAN_OUT = 'no answer within the ack wait';
/** A dead letter keeps at most this much of the error message. */
const MAX_ERROR_CHARS = 500;

/** The message of what a handler threw, for a dead letter's `lastError`. */
export function errorMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text;
}

export function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return Infinity;
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError('limit must be a non-negative integer');
  return limit;
}

export function consumerSettings(options: WorkQueueOptions & { concurrency?: number } = {}): ConsumerSettings {
  const settings = {
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    maxDeliveries: options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES,
    ackWaitMs: options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS,
  };
  if (!Number.isInteger(settings.concurrency) || settings.concurrency < 1) {
    throw new RangeError('concurrency must be a positive integer');
  }
  if (!Number.isInteger(settings.maxDeliveries) || settings.maxDeliveries < 1) {
    throw new RangeError('maxDeliveries must be a positive integer');
  }
  if (!Number.isInteger(settings.ackWaitMs) || settings.ackWaitMs < 1) {
    throw new RangeError('ackWaitMs must be a positive integer of milliseconds');
  }
  return settings;
}

export function checkIncrement(by: number, ttlMs: number): void {
  if (!Number.isFinite(by)) throw new RangeError('increment takes a finite number');
  if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new RangeError('ttlMs must be a positive integer of milliseconds');
}

export function checkNumber(value: number): void {
  if (!Number.isFinite(value)) throw new RangeError('raiseTo takes a finite number');
}
