/**
 * Where the tools find the service (docs/adr/0064-one-address-convention.md): SERVICE_URL, the gateway (partner API
 * under `/v1`, shopper pages at `/`), and ADMIN_URL, the admin port (admin API under `/admin/v1`). Unset, each is
 * derived from the port `make run` reads (PORT, default 8080; ADMIN_PORT, default 8081) on 127.0.0.1, so a tool run
 * beside the service in the same shell finds it. A URL given with its API path (`…/v1`, `…/admin/v1`) is accepted.
 */
export interface ServiceAddress {
  /** `http://127.0.0.1:8080`: the shopper pages. */
  serviceUrl: string;
  /** `${serviceUrl}/v1`: the partner API. */
  partnerApi: string;
  /** `http://127.0.0.1:8081`: health, metrics. */
  adminUrl: string;
  /** `${adminUrl}/admin/v1`: the admin API. */
  adminApi: string;
}

const origin = (url: string | undefined, port: string | undefined, fallbackPort: number, apiPath: string): string => {
  const given = url?.trim().replace(/\/+$/, '');
  if (given) return given.endsWith(apiPath) ? given.slice(0, -apiPath.length) : given;
  return `http://127.0.0.1:${port?.trim() || fallbackPort}`;
};

export function serviceAddress(env: NodeJS.ProcessEnv): ServiceAddress {
  const serviceUrl = origin(env.SERVICE_URL, env.PORT, 8080, '/v1');
  const adminUrl = origin(env.ADMIN_URL, env.ADMIN_PORT, 8081, '/admin/v1');
  return { serviceUrl, partnerApi: `${serviceUrl}/v1`, adminUrl, adminApi: `${adminUrl}/admin/v1` };
}
