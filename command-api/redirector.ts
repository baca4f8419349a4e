/**
 * The click redirector, outside `/v1`, public (no key): `GET {public_base}/r/{store address}/{sku}` (SHOPPER.md; the
 * `buy_url` of an offer, the "Ir à loja" link of the pages).
 *
 * For an offer searchable now (shared-schema/shopper/offer-lookup.ts: the rule the search applies) it records a click
 * (`ClickRecorded`: click id, partner, environment, store, SKU, the price at that moment, the time; no IP address,
 * no browser data) and answers 302 to the product page with `svc_click=<click id>` — an existing `svc_click` is
 * replaced, the rest of the query and the fragment are kept as sent. Anything else — unknown address or SKU, an
 * offer not searchable (pending, rejected, stale, removed, unavailable, its store or domain not approved) — answers
 * 404 (a Problem for `Accept: application/json`, an HTML page otherwise) and records nothing.
 *
 * `/test/r/…` answers 404 to everybody: test products are served to nobody, and no test click is ever recorded by
 * a visit (test clicks come from `POST /sandbox/clicks`).
 * HEAD answers like GET without recording a click (its Location carries no svc_click); other methods 405.
 * Every Problem it answers (404 and 429 to a JSON client, 405, a fault) is written by the doors' one error answer,
 * handed in as `answerProblem`: the same status, headers, body and logging as any door's.
 *
 * A rate brake per client address (SHOPPER.md): at most 60 recorded clicks a minute by the service clock
 * (shared-schema/http/minute-brake.ts, shared by every process through messaging). Only a GET that would record a
 * click counts; past the limit it answers 429 with `Retry-After` (a Problem for JSON clients, a page otherwise) and
 * records nothing. HEAD and 404s record nothing and are not counted.
 *
 * `?canal=<channel id>` (the links of the channel feeds, FEEDS.md) is recorded on the click when it names a channel
 * not revoked, and ignored otherwise (shared-schema/feeds/channel-link.ts); the Location is the same either way.
 *
 * It is a GET that writes, so the gateway sends `/r/` and `/test/r/` to the write side. `svc_url` (`/p/…`) is the
 * offer page, served by the query door: opening it records nothing.
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import { newRequestId } from '../shared-schema/domain/ids.js';
import { tenantKey } from '../shared-schema/http/context.js';
import { publicBrake } from '../shared-schema/http/minute-brake.js';
import { ProblemError, methodNotAllowed } from '../shared-schema/contract/problems.js';
import { messagePage, notFoundPage, pageLinks } from '../shared-schema/html/shopper.js';
import { findSearchableOffer, parseOfferPath } from '../shared-schema/shopper/offer-lookup.js';
import { activeChannel, canalOf } from '../shared-schema/feeds/channel-link.js';
import type { Tenant } from '../shared-schema/domain/streams.js';
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

/** Where the redirector is served: the gateways send these prefixes to it, whatever the method. */
export const REDIRECT_PREFIXES = ['/r/', '/test/r/'] as const;

export const isRedirectPath = (url: string): boolean => REDIRECT_PREFIXES.some((p) => url.startsWith(p));

/** The route pattern of a redirector path (a metrics label: never the path as sent). */
export const redirectRoute = (url: string): string =>
  url.startsWith('/test/r/') ? '/test/r/{partner}/{store}/{sku}' : '/r/{partner}/{store}/{sku}';

/** Answers an error from a plain handler as every door does (infra/http/problem-answer.ts: status, headers, body, log). */
export type ProblemWriter = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  err: unknown,
  requestId: string,
) => void;

export interface RedirectorOptions {
  /** The one error-to-problem answer of the doors: JSON refusals, 405 and faults are written through it. */
  answerProblem: ProblemWriter;
  /** The client address the brake counts by (the same rule as the doors', which infra owns). */
  clientAddress: (req: http.IncomingMessage) => string;
  /** Told of every answer (metrics): its route pattern, method, status and time in milliseconds. */
  onAnswered?: (answer: { route: string; method: string; status: number; ms: number }) => void;
}

/** A client that asks for JSON and not for HTML gets a Problem; browsers and everything else the HTML page. */
function wantsJson(req: http.IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return /\bapplication\/(problem\+)?json\b/.test(accept) && !/\btext\/html\b/.test(accept);
}

export function createRedirector(
  deps: CommandDeps,
  log: Logger,
  options: RedirectorOptions,
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  /** A refusal: the Problem for a JSON client, the page for people; nothing recorded. */
  const refuse = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    requestId: string,
    problem: ProblemError,
    page: () => string,
  ): void => {
    res.setHeader('Vary', 'Accept');
    if (wantsJson(req)) return options.answerProblem(req, res, problem, requestId);
    res
      .writeHead(problem.status, { ...problem.headers, 'Content-Type': 'text/html; charset=utf-8' })
      .end(req.method === 'HEAD' ? undefined : page());
  };
  const links = () => pageLinks(deps.publicBaseUrl);
  const notFound = (req: http.IncomingMessage, res: http.ServerResponse, requestId: string): void =>
    refuse(req, res, requestId, new ProblemError(404, [], 'No offer can be shown at this address.'), () =>
      notFoundPage(links()),
    );
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, requestId: string): Promise<void> => {
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Cache-Control', 'no-store');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return options.answerProblem(req, res, methodNotAllowed(req.method ?? '', 'GET, HEAD'), requestId);
    // Only the live prefix is parsed: `/test/r/…` finds nothing.
    const target = parseOfferPath((req.url ?? '').split(/[?#]/)[0], '/r');
    const found = target ? await findSearchableOffer(deps.reads, target.address, target.sku, deps.clock.now()) : null;
    if (!found) return notFound(req, res, requestId);
    const { offer } = found;
    if (req.method === 'HEAD') {
      res.writeHead(302, { Location: offer.product.product_url }).end();
      return;
    }
    try {
      await publicBrake(deps, options.clientAddress(req), 'click');
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
      log.info({ request_id: requestId, status: err.status }, 'redirect refused by the rate brake');
      return refuse(req, res, requestId, err, () =>
        messagePage(links(), 'Muitos cliques', [
          'Você abriu muitas ofertas em pouco tempo. Espere um minuto e tente de novo.',
        ]),
      );
    }
    const tenant: Tenant = { partnerId: offer.partner_id, env: 'live' };
    const url = (req.url ?? '').split('#')[0];
    const channelId = await activeChannel(
      deps.reads,
      canalOf(url.includes('?') ? url.slice(url.indexOf('?') + 1) : ''),
    );
    const recorded = await recordClick(
      deps,
      tenant,
      {
        store_id: offer.store_id,
        sku: offer.sku,
        price_cents: offer.product.price_cents,
        ...(channelId !== null ? { channel_id: channelId } : {}),
      },
      'redirect',
      { recorded_at: deps.clock.now().toISOString(), request_id: requestId, actor: 'redirector' },
    );
    // The partner's next read waits for this click like for its own writes.
    await deps.messaging.raiseTo(`ryw:${tenantKey(tenant)}`, recorded.position);
    res.writeHead(302, { Location: withClickParam(offer.product.product_url, recorded.click.click_id) }).end();
    log.info(
      { request_id: requestId, partner_id: tenant.partnerId, store_id: offer.store_id, status: 302 },
      'redirect',
    );
  };
  return (req, res) => {
    const requestId = newRequestId();
    if (options.onAnswered) {
      const started = performance.now();
      const told = options.onAnswered;
      res.once('finish', () =>
        told({
          route: redirectRoute(req.url ?? ''),
          method: req.method ?? 'GET',
          status: res.statusCode,
          ms: performance.now() - started,
        }),
      );
    }
    handle(req, res, requestId).catch((err: unknown) => options.answerProblem(req, res, err, requestId));
  };
}
