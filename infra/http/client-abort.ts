/**
 * A client that closes its connection mid-request (a timeout of its own, a cancelled upload) is not a fault of the
 * service: it is logged at info, never as an error, and counted under its own status, not as a 500.
 */
import type http from 'node:http';
import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';

/** nginx's status for "client closed request": what metrics and the operation history record for it. */
export const CLIENT_CLOSED = 499;

// HPE_INVALID_EOF_STATE: Node's parser met the end of the connection inside a body.
const ABORT_CODES = new Set([
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ERR_STREAM_PREMATURE_CLOSE',
  'HPE_INVALID_EOF_STATE',
]);

/** The error, or the state of the request it came from, says the client went away. */
export function isClientAbort(err: unknown, req?: http.IncomingMessage): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e && typeof e.code === 'string' && ABORT_CODES.has(e.code)) return true;
  if (e && e.message === 'request aborted') return true; // raw-body and co.
  return req !== undefined && req.destroyed && !req.complete;
}

/** A client that went away, logged at info without a stack: nothing of ours failed. */
export function logClientGone(log: Logger, err: unknown, fields: Record<string, unknown> = {}): void {
  log.info({ ...fields, err: { message: (err as Error | null)?.message } }, 'client closed the request');
}

/**
 * Koa's own error printer (used when an app has no 'error' listener) writes stack traces to stderr, outside the
 * JSON log: every Koa app reports through pino instead, a client abort at info.
 */
export function logAppErrors(app: EventEmitter, log: Logger): void {
  app.on('error', (err: unknown, ctx?: { req?: http.IncomingMessage }) => {
    if (isClientAbort(err, ctx?.req)) logClientGone(log, err);
    else log.error({ err }, 'unhandled error');
  });
}
