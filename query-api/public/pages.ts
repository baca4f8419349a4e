/**
 * The pages for people (SHOPPER.md): the home page `/`, the results page `/busca?q=` (the same results as
 * `/api/search`, the same brake) and the offer page at `svc_url` (`/p/{store address}/{sku}`: HTML, or the JSON
 * `Offer` for `Accept: application/json`). Opening an offer page records nothing: clicks are the redirector's
 * (`/r/…`, command-api/redirector.ts), the "Ir à loja" link.
 *
 * What cannot be shown answers 404 — the offer page of an offer that is not searchable now, and always `/test/p/…`
 * (test products are served to nobody). Refusals (404, 422, 429) are HTML pages for people and Problems for a
 * client that asks for JSON.
 */
import type { DoorContext } from '../../shared-schema/http/context.js';
import { ProblemError, type FieldError } from '../../shared-schema/contract/problems.js';
import {
  homePage,
  messagePage,
  offerPage,
  pageLinks,
  resultsPage,
  type PageLinks,
} from '../../shared-schema/html/shopper.js';
import { activeChannel, canalOf } from '../../shared-schema/feeds/channel-link.js';
import { withCanal } from '../../shared-schema/feeds/feed-offer.js';
import { findSearchableOffer, parseOfferPath } from '../../shared-schema/shopper/offer-lookup.js';
import { offerView, searchOfferOf } from '../../shared-schema/shopper/search-view.js';
import type { QueryDeps } from '../app.js';
import { brake, MAX_Q_LENGTH, parseSearch, searchOrUnavailable } from './search.js';
import { SearchesBusy } from './product-search.js';

const links = (deps: QueryDeps): PageLinks => pageLinks(deps.publicBaseUrl);

function wantsJson(ctx: DoorContext): boolean {
  return ctx.accepts('text/html', 'application/json', 'application/problem+json') !== 'text/html';
}

function html(ctx: DoorContext, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
  ctx.vary('Accept');
}

/** What a refused field means to a person (pt-BR); the Problem keeps the API's words. */
function fieldMessage(e: FieldError): string {
  if (e.field === 'q') {
    if (e.code === 'too_long') return `A busca aceita até ${MAX_Q_LENGTH} caracteres.`;
    return 'Digite o que você procura.';
  }
  if (e.field === 'cursor') return 'Esta página de resultados não vale mais; faça a busca de novo.';
  if (e.field === 'limit') return 'O número de resultados por página vai de 1 a 50.';
  return `O parâmetro “${e.field}” não existe nesta busca.`;
}

/** A refusal as a page for people, or as the Problem it is for a JSON client (rethrown to the envelope). */
function refuse(ctx: DoorContext, deps: QueryDeps, err: ProblemError, query = ''): void {
  if (wantsJson(ctx)) throw err;
  for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  if (err.status === 404)
    return html(
      ctx,
      404,
      messagePage(links(deps), 'Oferta indisponível', ['Esta oferta não está disponível no momento.']),
    );
  if (err instanceof SearchesBusy)
    return html(
      ctx,
      429,
      messagePage(
        links(deps),
        'Muitas buscas agora',
        ['O serviço está recebendo muitas buscas neste momento. Tente de novo em alguns segundos.'],
        query,
      ),
    );
  if (err.status === 429)
    return html(
      ctx,
      429,
      messagePage(
        links(deps),
        'Muitas buscas',
        ['Você fez muitas buscas em pouco tempo. Espere um minuto e tente de novo.'],
        query,
      ),
    );
  if (err.status === 422)
    return html(ctx, 422, messagePage(links(deps), 'Busca inválida', err.errors.map(fieldMessage), query));
  throw err;
}

export function home(ctx: DoorContext, deps: QueryDeps): void {
  html(ctx, 200, homePage(links(deps)));
}

/** `/busca?q=`: the results page; the search's bounds and brake as `/api/search`. */
export async function results(ctx: DoorContext, deps: QueryDeps): Promise<void> {
  const sent = typeof ctx.query.q === 'string' ? ctx.query.q : '';
  try {
    await brake(ctx, deps);
    const params = parseSearch(ctx, deps);
    const page = await searchOrUnavailable(deps, params);
    const next =
      page.next_cursor !== null
        ? `${links(deps).root}/busca?q=${encodeURIComponent(page.query)}&cursor=${encodeURIComponent(page.next_cursor)}`
        : null;
    html(ctx, 200, resultsPage(links(deps), page, next));
    ctx.set('Cache-Control', 'no-store');
  } catch (err) {
    if (err instanceof ProblemError) return refuse(ctx, deps, err, sent.slice(0, MAX_Q_LENGTH));
    throw err;
  }
}

/** The offer page at `svc_url`: `/p/{address}/{sku}`; `/test/p/…` never shows anything. */
export async function offer(ctx: DoorContext, deps: QueryDeps): Promise<void> {
  const target = parseOfferPath(ctx.path, '/p');
  const found = target ? await findSearchableOffer(deps.reads, target.address, target.sku, deps.clock.now()) : null;
  ctx.set('Cache-Control', 'no-store');
  if (!found) return refuse(ctx, deps, new ProblemError(404, [], 'No offer can be shown at this address.'));
  const shown = offerView(searchOfferOf(found.offer, found.store), deps.publicBaseUrl);
  // A shopper who came by a channel's link keeps its channel on the way to the store.
  const channelId = await activeChannel(deps.reads, canalOf(ctx.querystring));
  const view = channelId === null ? shown : { ...shown, buy_url: withCanal(shown.buy_url, channelId) };
  if (wantsJson(ctx)) {
    ctx.body = view;
    ctx.vary('Accept');
    return;
  }
  html(ctx, 200, offerPage(links(deps), view));
}
