/**
 * The HTML of the shopper pages (SHOPPER.md): plain strings, server rendered, pt-BR, readable without JavaScript and
 * on a phone (viewport, one column, CSS inline in one shared layout). Every text that is not ours — partner text,
 * the shopper's query, addresses — goes through `esc`, attributes included (always double-quoted).
 *
 * Pure: the doors give the views (search-view.ts) and the addresses; nothing here reads a store or a clock.
 */
import type { OfferView, ProductView, SearchPage } from '../shopper/search-view.js';
import { SHIPPING_LABELS } from '../shopper/search-view.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe inside an element or a double-quoted attribute. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Integer cents as the pages write money: `R$ 1.299,90`. */
export function money(cents: number): string {
  const negative = cents < 0;
  const abs = Math.abs(Math.trunc(cents));
  const reais = Math.floor(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${negative ? '-' : ''}R$ ${reais},${String(abs % 100).padStart(2, '0')}`;
}

/** The shopper pages' style (the portal shows their offer card with it). */
export const CSS = `
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1c2430;background:#f4f6f8;line-height:1.4}
header{background:#12355b;color:#fff;padding:.75rem 1rem}
header a{color:#fff;text-decoration:none;font-weight:700;font-size:1.15rem}
main{max-width:60rem;margin:0 auto;padding:1rem}
h1{font-size:1.4rem;margin:.5rem 0 1rem}
h2{font-size:1.1rem;margin:0 0 .5rem}
form.search{display:flex;gap:.5rem;margin:0 0 1rem}
form.search input{flex:1;min-width:0;font-size:1rem;padding:.6rem .7rem;border:1px solid #9aa5b1;border-radius:.4rem}
form.search button,.buy{font-size:1rem;padding:.6rem 1rem;border:0;border-radius:.4rem;background:#e8590c;color:#fff;font-weight:700;text-decoration:none;display:inline-block;text-align:center}
.card{background:#fff;border-radius:.6rem;padding:1rem;margin:0 0 1rem;box-shadow:0 1px 2px rgba(0,0,0,.08);display:flex;gap:1rem;flex-wrap:wrap}
.card img{width:8rem;height:8rem;object-fit:contain;background:#fff;flex:none}
.card .body{flex:1;min-width:14rem}
ul.offers{list-style:none;padding:0;margin:.5rem 0 0}
ul.offers li{border-top:1px solid #e3e7eb;padding:.6rem 0;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
ul.offers .facts{flex:1;min-width:12rem}
ul.offers .facts>div{margin:.1rem 0}
a.go{padding:.45rem .9rem;border:2px solid #e8590c;border-radius:.4rem;color:#b8440a;font-weight:700;text-decoration:none;white-space:nowrap}
.price{font-size:1.2rem;font-weight:700;white-space:nowrap}
.from{color:#5f6b7a;text-decoration:line-through;white-space:nowrap}
.muted{color:#5f6b7a;font-size:.9rem}
.label{display:inline-block;background:#fff3bf;color:#5c3d00;border-radius:.3rem;padding:0 .4rem;font-size:.85rem;font-weight:700}
.offer-page img{width:100%;max-width:20rem;height:auto}
.offer-page .price{font-size:1.6rem}
.offer-page p{margin:.4rem 0}
.buy{margin-top:.75rem}
nav.pages{margin:1rem 0}
@media (max-width:30rem){.card img{width:100%;height:12rem}main{padding:.75rem}}
`;

/**
 * Links between the pages stay on the site the page was served from: root-relative addresses (the path of the
 * public base, then the page's), so a page opened through any host name or port of the gateway works.
 */
export interface PageLinks {
  /** The path of the public base without a trailing slash (`''` for `https://host`): home is `${root}/`. */
  root: string;
}

export function pageLinks(publicBaseUrl: string): PageLinks {
  return { root: new URL(publicBaseUrl).pathname.replace(/\/+$/, '') };
}

/** An absolute address of ours as a root-relative link (its path, query and fragment). */
export function local(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}${u.hash}`;
}

/** The one layout of every page: `title` and `body` are already HTML (callers escape what they put in). */
export function layout(links: PageLinks, title: string, body: string, query = ''): string {
  return (
    '<!doctype html>\n<html lang="pt-BR"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${title}</title><style>${CSS}</style></head><body>` +
    `<header><a href="${esc(links.root)}/">Compare ofertas</a></header><main>` +
    searchForm(links, query) +
    body +
    '</main></body></html>\n'
  );
}

function searchForm(links: PageLinks, query: string): string {
  return (
    `<form class="search" role="search" method="get" action="${esc(links.root)}/busca">` +
    `<input type="search" name="q" value="${esc(query)}" maxlength="200" required placeholder="O que você procura?" aria-label="Buscar produtos">` +
    '<button type="submit">Buscar</button></form>'
  );
}

export function homePage(links: PageLinks): string {
  return layout(
    links,
    'Compare ofertas',
    '<h1>Encontre as melhores ofertas das lojas</h1><p class="muted">Digite o nome, a marca ou o código de barras do produto.</p>',
  );
}

/** The words a shipping view is shown with: `Frete grátis`, `Frete a calcular` (rule 2: never free unless sent), or the cost. */
export function shippingLabel(o: OfferView): string {
  const label = SHIPPING_LABELS[o.shipping.kind] ?? `Frete ${money(o.shipping.cost_cents ?? 0)}`;
  const { delivery_days_min: min, delivery_days_max: max } = o.shipping;
  if (min !== null && max !== null && min !== max) return `${label} · entrega em ${min} a ${max} dias`;
  const days = max ?? min;
  return days !== null ? `${label} · entrega em até ${days} ${days === 1 ? 'dia' : 'dias'}` : label;
}

/** The price: "de R$ x por R$ y" when a from-price was sent. */
function priceHtml(o: OfferView): string {
  const from =
    o.original_price_cents !== null ? `<span class="from">de ${esc(money(o.original_price_cents))}</span> por ` : '';
  return `<span class="prices">${from}<span class="price">${esc(money(o.price_cents))}</span></span>`;
}

function installmentsHtml(o: OfferView): string {
  if (!o.installments) return '';
  const { count, value_cents, interest_free } = o.installments;
  return `<span class="muted installments">ou ${count}× de ${esc(money(value_cents))}${interest_free ? ' sem juros' : ' com juros'}</span>`;
}

function shippingHtml(o: OfferView): string {
  return `<span class="muted shipping">${esc(shippingLabel(o))}</span>`;
}

function ratingHtml(o: OfferView): string {
  if (!o.rating) return '';
  const avg = o.rating.average.toFixed(1).replace('.', ',');
  return ` <span class="muted rating">★ ${avg} (${o.rating.count} ${o.rating.count === 1 ? 'avaliação' : 'avaliações'})</span>`;
}

function conditionHtml(o: OfferView): string {
  return o.condition_label ? ` <span class="label condition">${esc(o.condition_label)}</span>` : '';
}

function offerLine(o: OfferView): string {
  return (
    `<li class="offer"><div class="facts"><div><a href="${esc(local(o.offer_url))}"><strong class="store">${esc(o.store.name)}</strong></a>${conditionHtml(o)}${ratingHtml(o)}</div>` +
    `<div>${priceHtml(o)} ${installmentsHtml(o)}</div><div>${shippingHtml(o)}</div></div>` +
    `<a class="go" href="${esc(local(o.buy_url))}" rel="nofollow">Ir à loja</a></li>`
  );
}

function productCard(p: ProductView): string {
  const headline =
    p.price_from_cents !== null
      ? `<p>a partir de <span class="price">${esc(money(p.price_from_cents))}</span> · ${p.offers.length} ${p.offers.length === 1 ? 'oferta' : 'ofertas'}</p>`
      : '<p class="muted">Sem oferta de produto novo.</p>';
  const offers = p.offers.length > 0 ? `<ul class="offers">${p.offers.map(offerLine).join('')}</ul>` : '';
  const alternatives =
    p.alternatives.length > 0
      ? `<h3 class="muted">Usados e recondicionados</h3><ul class="offers alternatives">${p.alternatives.map(offerLine).join('')}</ul>`
      : '';
  const brand = p.brand ? `<p class="muted">${esc(p.brand)}</p>` : '';
  return (
    `<article class="card product"><img src="${esc(p.image_url)}" alt="" loading="lazy"><div class="body">` +
    `<h2>${esc(p.title)}</h2>${brand}${headline}${offers}${alternatives}</div></article>`
  );
}

/** The results page of `/busca`; `nextHref`: the next page's address, when there is one. */
export function resultsPage(links: PageLinks, page: SearchPage, nextHref: string | null): string {
  const title = `${esc(page.query)} — Compare ofertas`;
  const heading = `<h1>Resultados para “${esc(page.query)}”</h1>`;
  const list =
    page.results.length > 0
      ? page.results.map(productCard).join('')
      : '<p>Nenhuma oferta encontrada. Tente outras palavras.</p>';
  const more = nextHref ? `<nav class="pages"><a href="${esc(nextHref)}" rel="next">Mais resultados</a></nav>` : '';
  return layout(links, title, heading + list + more, page.query);
}

/**
 * The card of one offer as its offer page shows it. `preview` (the partner portal's preview of a product) draws
 * "Ir à loja" without a link, so that looking at a preview records no click.
 */
export function offerCard(o: OfferView, preview = false): string {
  const buy = preview
    ? '<span class="buy" aria-disabled="true">Ir à loja</span>'
    : `<a class="buy" href="${esc(local(o.buy_url))}" rel="nofollow">Ir à loja</a>`;
  return (
    `<article class="card offer-page"><img src="${esc(o.image_url)}" alt="${esc(o.title)}"><div class="body">` +
    `<h1>${esc(o.title)}</h1>${conditionHtml(o)}` +
    `<p>Vendido por <strong class="store">${esc(o.store.name)}</strong>${ratingHtml(o)}</p>` +
    `<p>${priceHtml(o)}</p>${o.installments ? `<p>${installmentsHtml(o)}</p>` : ''}<p>${shippingHtml(o)}</p>` +
    `${buy}</div></article>`
  );
}

/** The offer page at `svc_url`: what the shopper sees of one offer, with "Ir à loja" to the redirector. */
export function offerPage(links: PageLinks, o: OfferView): string {
  return layout(links, `${esc(o.title)} — Compare ofertas`, offerCard(o));
}

/** A page for what cannot be shown (404), a refused query (422) or the rate brake (429). */
export function messagePage(links: PageLinks, heading: string, lines: readonly string[], query = ''): string {
  return layout(
    links,
    `${esc(heading)} — Compare ofertas`,
    `<h1>${esc(heading)}</h1>${lines.map((l) => `<p>${esc(l)}</p>`).join('')}`,
    query,
  );
}

export function notFoundPage(links: PageLinks): string {
  return messagePage(links, 'Oferta indisponível', ['Esta oferta não está disponível no momento.']);
}
