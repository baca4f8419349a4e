/**
 * The redirector, outside `/v1`, public (no key): `GET {public_base}/p/{store address}/{sku}`.
 *
 * For a live product that is `accepted` now (the products read model's base state, and not stale by the clock) it
 * records a click (`ClickRecorded`: click id, partner, environment, store, SKU, the price at that moment, the time;
 * no IP address, no browser data) and answers 302 to the product page with `svc_click=<click id>` — an existing
 * `svc_click` is replaced, the rest of the query and the fragment are kept as sent. Anything else — unknown
 * address or SKU, a product not accepted, stale or removed — answers a 404 page and records nothing.
 *
 * `/test/p/…` (the svc_url of test products) answers 404 to everybody: test products are served to nobody, and no
 * test click is ever recorded by a visit (test clicks come from `POST /sandbox/clicks`).
 * HEAD answers like GET without recording a click (its Location carries no svc_click); other methods 405.
 *
 * It is a GET that writes, so the gateway sends `/p/` and `/test/p/` to the write side.
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import { newRequestId } from '../shared-schema/ids.js';
import { tenantKey } from '../shared-schema/http/context.js';
import { storeAddress, withClock } from '../shared-schema/product-status.js';
import { PRODUCTS, type ProductDoc } from '../shared-schema/read-models/products.js';
import type { Tenant } from '../shared-schema/streams.js';
import { recordClick } from './services/clicks.js';
import type { CommandDeps } from './services/context.js';

/** `url` with `svc_click=<id>` in its query: any existing svc_click removed, every other parameter kept as sent. */
export function withClickParam(url: string, clickId: string): string {
  const hashAt = url.indexOf('#');
  const fragment = hashAt >= 0 ? url.slice(hashAt) : '';
  const base = hashAt >= 0 ? url.slice(0, hashAt) : url;
  const q = base.indexOf('?');
  const path = q >= 0 ? base.slice(0, q) : base;
  const query = q >= 0 ? base.slice(q + 1) : '';
  const nameOf = (pair: string): string => {
    const raw = pair.split('=')[0].replace(/\+/g, ' ');
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  };
  const kept = query.split('&').filter((pair) => pair !== '' && nameOf(pair) !== 'svc_click');
  kept.push(`svc_click=${encodeURIComponent(clickId)}`);
  return `${path}?${kept.join('&')}${fragment}`;
}

/** `/p/{address}/{sku}` → its two segments, decoded; null for anything else (`/test/p/…` included). */
function parse(url: string): { address: string; sku: string } | null {
  const path = url.split('?')[0].split('#')[0];
  const m = /^\/p\/([^/]+)\/([^/]+)$/.exec(path);
  if (!m) return null;
  try {
    return { address: decodeURIComponent(m[1]), sku: decodeURIComponent(m[2]) };
  } catch {
    return null;
  }
}

/**
 * The live product behind an address and SKU, accepted now. Store addresses are unique per partner; should two
 * partners publish the same address and SKU, the product published first keeps the link (then the lower partner id).
 */
export async function findLiveTarget(deps: CommandDeps, address: string, sku: string): Promise<ProductDoc | null> {
  const now = deps.clock.now();
  const docs = await deps.reads.find<ProductDoc>(PRODUCTS, { where: { sku, env: 'live', base_state: 'accepted' }, limit: 100 });
  const live = docs
    .filter((d) => storeAddress(d.store_id) === address && withClock(d.base_state, d.last_write_at, now) === 'accepted')
    .sort((a, b) => (a.published_at ?? '').localeCompare(b.published_at ?? '') || a.partner_id.localeCompare(b.partner_id));
  return live[0] ?? null;
}

const NOT_FOUND_PAGE =
  '<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><title>Produto indisponível</title></head>' +
  '<body><h1>Produto indisponível</h1><p>Este produto não está disponível no momento.</p></body></html>\n';

export function createRedirector(deps: CommandDeps, log: Logger): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, requestId: string): Promise<void> => {
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Cache-Control', 'no-store');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Method not allowed.\n');
      return;
    }
    const target = parse(req.url ?? '');
    const found = target ? await findLiveTarget(deps, target.address, target.sku) : null;
    if (!found) {
      res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8' }).end(req.method === 'HEAD' ? undefined : NOT_FOUND_PAGE);
      return;
    }
    if (req.method === 'HEAD') {
      res.writeHead(302, { Location: found.product.product_url }).end();
      return;
    }
    const tenant: Tenant = { partnerId: found.partner_id, env: 'live' };
    const recorded = await recordClick(
      deps,
      tenant,
      { store_id: found.store_id, sku: found.sku, price_cents: found.product.price_cents },
      'redirect',
      { recorded_at: deps.clock.now().toISOString(), request_id: requestId, actor: 'redirector' },
    );
    // The partner's next read waits for this click like for its own writes.
    await deps.messaging.raiseTo(`ryw:${tenantKey(tenant)}`, recorded.position);
    res.writeHead(302, { Location: withClickParam(found.product.product_url, recorded.click.click_id) }).end();
    log.info({ request_id: requestId, partner_id: tenant.partnerId, store_id: found.store_id, status: 302 }, 'redirect');
  };
  return (req, res) => {
    const requestId = newRequestId();
    handle(req, res, requestId).catch((err: unknown) => {
      log.error({ err, request_id: requestId }, 'redirector error');
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Internal error.\n');
    });
  };
}
