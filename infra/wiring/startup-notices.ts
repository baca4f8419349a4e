/**
 * The lines a process prints at start-up for the person who started it: one plain line instead of a stack trace when
 * a port cannot be bound, and one warning when the cover check runs with its test-only settings.
 */
import type { Logger } from 'pino';
import type { Config } from './config.js';

const LISTEN_REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'address not available on this machine',
};

/**
 * `cannot listen on 127.0.0.1:8080: address in use (set PORT)` for an error of `server.listen`, else undefined.
 * The variable named is the one that chose the port the error reports (the admin API's, or the service's).
 */
export function listenFailureLine(err: unknown, config: Pick<Config, 'port' | 'adminPort'>): string | undefined {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (e === null || typeof e !== 'object' || e.syscall !== 'listen' || !e.code) return undefined;
  const reason = LISTEN_REASONS[e.code] ?? e.code;
  const variable =
    e.port === config.adminPort && e.port !== config.port
      ? 'ADMIN_PORT'
      : e.port === config.port && e.port !== config.adminPort
        ? 'PORT'
        : 'PORT or ADMIN_PORT';
  const host = e.address?.includes(':') ? `[${e.address}]` : (e.address ?? '?');
  return `cannot listen on ${host}:${e.port ?? '?'}: ${reason} (set ${variable})`;
}

/** The test-only cover settings (DECISIONS "Operator surface") that are on, by their variable's name. */
function testOnlyCoverSettings(config: Pick<Config, 'coverFetch'>): string[] {
  const { hostMap, allowPrivate, ca } = config.coverFetch;
  return [
    hostMap !== undefined && 'COVER_FETCH_HOSTS',
    allowPrivate === true && 'COVER_FETCH_ALLOW_PRIVATE',
    ca !== undefined && 'COVER_FETCH_CA_FILE',
  ].filter((name): name is string => name !== false);
}

/** One warning when any is on: they let the cover check reach addresses a real deployment must refuse. */
export function warnTestOnlyCoverSettings(log: Logger, config: Pick<Config, 'coverFetch'>): void {
  const on = testOnlyCoverSettings(config);
  if (on.length === 0) return;
  log.warn(
    { test_only_settings: on },
    `${on.join(', ')} ${on.length === 1 ? 'is' : 'are'} set: test-only cover settings (the cover check reaches the hosts, addresses or certificates they allow); never set them in a real deployment`,
  );
}
