/**
 * Graceful shutdown. On SIGTERM (or SIGINT) the service stops taking requests, finishes those in flight, lets the
 * projections commit their current unit (checkpoints are saved with each unit) and the reactors their current
 * chunk, closes the stores, and exits 0 — or exits 1 when that has not happened within the bound.
 */
import type http from 'node:http';
import type { Logger } from 'pino';

/**
 * Stops accepting connections, answers the requests in flight (each with `Connection: close`), closes connections
 * as they become idle, and after `forceAfterMs` closes whatever is left. Resolves once the server is closed.
 */
export async function drainServer(server: http.Server, forceAfterMs: number): Promise<void> {
  if (!server.listening) return;
  const closeAfter = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  server.on('request', closeAfter);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const sweep = setInterval(() => server.closeIdleConnections(), 20);
  const force = setTimeout(() => server.closeAllConnections(), forceAfterMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(force);
    server.off('request', closeAfter);
  }
}

export interface Stoppable {
  log: Logger;
  close(): Promise<void>;
}

/** Installs the SIGTERM / SIGINT handlers of a process entry point. */
export function exitGracefully(
  service: Stoppable,
  options: { timeoutMs: number; exit?: (code: number) => void },
): void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const started = Date.now();
    service.log.info({ signal, timeout_ms: options.timeoutMs }, 'shutting down');
    const timer = setTimeout(() => {
      service.log.error({ signal, timeout_ms: options.timeoutMs }, 'shutdown exceeded its bound; exiting');
      exit(1);
    }, options.timeoutMs);
    timer.unref();
    service.close().then(
      () => {
        clearTimeout(timer);
        service.log.info({ ms: Date.now() - started }, 'shut down');
        service.log.flush?.();
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(timer);
        service.log.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
