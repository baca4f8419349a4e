/**
 * Renders infra/topology/deploy/nginx.conf.template: replaces `${NAME}` for the gateway's placeholders only (nginx's own
 * `$variables` are left alone) and refuses values that could break out of the configuration.
 *
 * The compose file does the same with `envsubst` restricted to these names; tests render with this function.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface GatewayConfig {
  /** `80`, `127.0.0.1:18080`, `[::1]:8080`… */
  LISTEN: string;
  /** Upstream servers of the command API as `host:port` addresses (one per replica, or one DNS name). */
  COMMAND_UPSTREAMS: readonly string[];
  QUERY_UPSTREAMS: readonly string[];
  /** Writable directory for the pid file and buffered request bodies. */
  RUN_DIR: string;
  /** Public base address without `/v1`, used in the `type` of the gateway's own problems. */
  PUBLIC_BASE_URL: string;
}

/** The template's path, next to this module in the source tree (dist/infra/topology/deploy → infra/topology/deploy). */
export function templatePath(): string {
  return fileURLToPath(new URL('../../../../infra/topology/deploy/nginx.conf.template', import.meta.url));
}

const SAFE = /^[A-Za-z0-9_.:/[\]@%+~-]+$/;

function upstreamEntries(addresses: readonly string[]): string {
  if (addresses.length === 0) throw new Error('an upstream needs at least one server');
  return addresses.map((a) => `server ${safe(a, 'upstream address')};`).join(' ');
}

export function renderNginxConf(config: GatewayConfig, template = readFileSync(templatePath(), 'utf8')): string {
  const values: Record<string, string> = {
    LISTEN: safe(config.LISTEN, 'LISTEN'),
    COMMAND_UPSTREAMS: upstreamEntries(config.COMMAND_UPSTREAMS),
    QUERY_UPSTREAMS: upstreamEntries(config.QUERY_UPSTREAMS),
    RUN_DIR: safe(config.RUN_DIR, 'RUN_DIR'),
    PUBLIC_BASE_URL: safe(config.PUBLIC_BASE_URL.replace(/\/+$/, ''), 'PUBLIC_BASE_URL'),
  };
  return template.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`nginx template: unknown placeholder ${whole}`);
    return value;
  });
}

function safe(value: string, what: string): string {
  if (!SAFE.test(value)) throw new Error(`nginx template: ${what} "${value}" holds characters a config may not`);
  return value;
}
