/**
 * The HTML of the partner portal (PORTAL.md "The portal"): plain strings, server rendered, pt-BR, no script, one
 * column on a phone. Every text that is not ours goes through the shopper pages' `esc` (html/shopper.ts), attributes
 * included (always double-quoted); money is written by their `money` rule. Charts are SVG drawn here, each with its
 * numbers as a table for screen readers and anyone who prefers them.
 *
 * The style is one `<style>` element whose hash the Content-Security-Policy names (no inline script, no style
 * attribute anywhere: SVG takes presentation attributes).
 *
 * Pure: the query door gives the views and the addresses; nothing here reads a store or a clock.
 */
import { createHash } from 'node:crypto';
import type { BigCents } from '../domain/order-math.js';
import type { ProductState } from '../domain/product-status.js';
import { CSS as SHOPPER_CSS, esc, money, offerCard } from './shopper.js';
import type { OfferView } from '../shopper/search-view.js';
import type { VisibilityCheckName } from '../domain/visibility.js';

const PORTAL_CSS = `
header nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center;margin-top:.4rem}
header nav a{font-weight:400;font-size:1rem}
header nav a[aria-current="page"]{text-decoration:underline}
header form{margin:0 0 0 auto}
header button{font:inherit;background:none;border:1px solid #fff;color:#fff;border-radius:.3rem;padding:.2rem .6rem;cursor:pointer}
.who{font-size:.9rem;opacity:.9}
.env{display:inline-block;border-radius:.3rem;padding:0 .4rem;font-size:.8rem;font-weight:700;background:#fff3bf;color:#5c3d00}
section.panel{background:#fff;border-radius:.6rem;padding:1rem;margin:0 0 1rem;box-shadow:0 1px 2px rgba(0,0,0,.08)}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e3e7eb;vertical-align:top}
td.n,th.n{text-align:right;white-space:nowrap}
.scroll{overflow-x:auto}
.states{display:flex;flex-wrap:wrap;gap:.5rem;list-style:none;padding:0;margin:0}
.states li{flex:1;min-width:7.5rem;background:#f4f6f8;border-radius:.4rem;padding:.5rem .7rem}
.states strong{display:block;font-size:1.4rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:1rem;margin:0 0 1rem}
figure{margin:0}
figcaption{font-weight:700;margin:0 0 .25rem}
svg.chart{width:100%;height:auto;display:block}
ul.checks{list-style:none;padding:0;margin:0}
ul.checks li{padding:.4rem 0;border-bottom:1px solid #e3e7eb}
.ok{color:#1b6e2e;font-weight:700}
.bad{color:#a61b1b;font-weight:700}
label{display:block;font-weight:700;margin:.5rem 0 .25rem}
input[type=password],input[type=text],input[type=search]{font-size:1rem;padding:.6rem .7rem;border:1px solid #6b7785;border-radius:.4rem;width:100%;max-width:28rem}
button.primary{font-size:1rem;padding:.6rem 1rem;border:0;border-radius:.4rem;background:#12355b;color:#fff;font-weight:700;margin-top:.75rem;cursor:pointer}
.error{background:#fde2e2;color:#7a1010;border-radius:.4rem;padding:.6rem .8rem}
.preview-label{display:inline-block;background:#12355b;color:#fff;border-radius:.3rem;padding:0 .5rem;font-weight:700;margin:0 0 .5rem}
.preview .buy{background:#8a96a3}
form.inline{display:flex;gap:.5rem;flex-wrap:wrap;align-items:flex-end}
form.inline input{flex:1;min-width:10rem}
form.inline button{margin-top:0}
nav.pages a{margin-right:1rem}
main code{overflow-wrap:anywhere}
td.when{white-space:nowrap}
`;

const STYLE = SHOPPER_CSS + PORTAL_CSS;

/** The Content-Security-Policy of every portal page: nothing runs, the one style element by its hash. */
export const PORTAL_CSP =
  "default-src 'none'; script-src 'none'; " +
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; ` +
  "img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Where the portal lives (its links are root-relative under the public base's path). */
export interface PortalLinks {
  /** `{public base path}/portal`, no trailing slash. */
  portal: string;
}

/** Who is signed in, as the header shows it. */
export interface SessionView {
  partnerName: string;
  partnerId: string;
  env: 'live' | 'test';
}

type Section = 'overview' | 'catalog' | 'stores' | 'statement' | 'closings' | null;

function header(links: PortalLinks, who: SessionView | null, current: Section): string {
  if (!who) return `<header><a href="${esc(links.portal)}">Portal do parceiro</a></header>`;
  const item = (section: Section, href: string, text: string) =>
    `<a href="${esc(href)}"${section === current ? ' aria-current="page"' : ''}>${text}</a>`;
  const env = who.env === 'live' ? 'Produção' : 'Teste';
  return (
    `<header><a href="${esc(links.portal)}">Portal do parceiro</a> ` +
    `<span class="who">${esc(who.partnerName)} · <span class="env">${env}</span></span>` +
    `<nav aria-label="Portal">${item('overview', links.portal, 'Visão geral')}` +
    `${item('catalog', `${links.portal}/catalogo`, 'Catálogo')}${item('stores', `${links.portal}/lojas`, 'Lojas')}` +
    `${item('statement', `${links.portal}/extrato`, 'Extrato')}${item('closings', `${links.portal}/fechamentos`, 'Fechamentos')}` +
    `<form method="post" action="${esc(links.portal)}/sair"><button type="submit">Sair</button></form></nav></header>`
  );
}

/** The one layout of every portal page; `title` is plain text, `body` HTML. */
export function portalLayout(
  links: PortalLinks,
  who: SessionView | null,
  title: string,
  body: string,
  current: Section = null,
): string {
  return (
    '<!doctype html>\n<html lang="pt-BR"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${esc(title)} — Portal do parceiro</title><style>${STYLE}</style></head><body>` +
    `${header(links, who, current)}<main>${body}</main></body></html>\n`
  );
}

export function signInPage(links: PortalLinks, error: string | null): string {
  const problem = error ? `<p class="error" role="alert">${esc(error)}</p>` : '';
  return portalLayout(
    links,
    null,
    'Entrar',
    '<h1>Entrar no portal do parceiro</h1>' +
      '<section class="panel"><p>Use uma das suas chaves de API (<code>ik_live_…</code> ou <code>ik_test_…</code>): ' +
      'o portal mostra o que essa chave vê, no ambiente dela.</p>' +
      problem +
      `<form method="post" action="${esc(links.portal)}/entrar">` +
      '<label for="api_key">Chave de API</label>' +
      '<input id="api_key" name="api_key" type="password" autocomplete="off" required maxlength="200">' +
      '<button class="primary" type="submit">Entrar</button></form></section>',
  );
}

export function messagePage(links: PortalLinks, who: SessionView | null, heading: string, lines: string[]): string {
  return portalLayout(links, who, heading, `<h1>${esc(heading)}</h1>${lines.map((l) => `<p>${esc(l)}</p>`).join('')}`);
}

// ---------------------------------------------------------------------------------------------------- words

export const STATE_LABELS: Record<ProductState, string> = {
  pending: 'Pendentes',
  accepted: 'Aceitos',
  rejected: 'Rejeitados',
  stale: 'Desatualizados',
  removed: 'Removidos',
};

const STATE_ONE: Record<ProductState, string> = {
  pending: 'Pendente',
  accepted: 'Aceito',
  rejected: 'Rejeitado',
  stale: 'Desatualizado',
  removed: 'Removido',
};

/** What each reason means and what to do (pt-BR); an unknown code says to read its message. */
const REASONS: Record<string, string> = {
  store_not_active:
    'A loja ainda não foi aprovada ou está suspensa. Aguarde a aprovação da loja; os produtos voltam sozinhos.',
  domain_not_approved:
    'O domínio do product_url ainda não foi aprovado. Aguarde a aprovação ou use um domínio já aprovado da loja.',
  image_unreachable:
    'A imagem de capa não abriu (HTTPS, status 200, no domínio da loja ou num image_host). Corrija o endereço e envie o produto de novo.',
  image_type: 'A imagem de capa não é JPEG, PNG nem WebP. Envie uma capa num desses formatos.',
  image_too_small: 'A imagem de capa tem menos de 500 px no lado menor. Envie uma capa maior.',
};

export function reasonAdvice(code: string): string {
  return REASONS[code] ?? 'Veja a mensagem do motivo em GET /v1/products/{sku}, corrija e envie o produto de novo.';
}

const CHECK_LABELS: Record<VisibilityCheckName, string> = {
  live: 'Ambiente de produção (live)',
  accepted: 'Produto aceito',
  fresh: 'Atualizado nas últimas 48 horas',
  store_active: 'Loja ativa',
  domain_approved: 'Domínio do product_url aprovado',
  available: 'Disponível (available: true)',
};

/** Cents as the pages write money, exact for figures beyond 2^53 (sent as decimal text). */
export function bigMoney(cents: BigCents): string {
  if (typeof cents === 'number') return money(cents);
  const v = BigInt(cents);
  const abs = v < 0n ? -v : v;
  const reais = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${v < 0n ? '-' : ''}R$ ${reais},${String(abs % 100n).padStart(2, '0')}`;
}

/** A table's box that scrolls sideways on a phone: reachable by keyboard, named for screen readers. */
const scrollable = (label: string): string =>
  `<div class="scroll" tabindex="0" role="region" aria-label="${esc(label)}">`;

const dateBr = (iso: string): string => `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;
const timeBr = (iso: string): string => `${dateBr(iso)} ${iso.slice(11, 16)} UTC`;

// ---------------------------------------------------------------------------------------------------- overview

export type CatalogHealth = {
  states: Record<ProductState, number>;
  searchable: number;
  reasons: { code: string; count: number }[];
};

export type DayFigures = {
  date: string;
  clicks: number;
  orders: number;
  net_cents: BigCents;
  known_expected_commission_cents: BigCents;
};

/** The clicks of the window through one channel (`channel`: its name), or the service's own pages (null). */
export type ChannelClicks = { channel: string | null; clicks: number };

function statesList(links: PortalLinks, states: Record<ProductState, number>): string {
  return (
    '<ul class="states">' +
    (Object.keys(STATE_LABELS) as ProductState[])
      .map(
        (s) =>
          `<li><a href="${esc(links.portal)}/catalogo?estado=${s}">${STATE_LABELS[s]}</a><strong>${states[s]}</strong></li>`,
      )
      .join('') +
    '</ul>'
  );
}

/**
 * One bar per day, drawn on the server. The SVG is decorative for assistive technology (`aria-hidden`): the same
 * numbers are in the table that follows the charts.
 */
export function barChart(
  title: string,
  days: readonly DayFigures[],
  value: (d: DayFigures) => number,
  label: (max: number) => string = (max) => max.toLocaleString('pt-BR'),
): string {
  const W = 600;
  const H = 220;
  const top = 34;
  const bottom = 34;
  const values = days.map(value);
  const max = Math.max(0, ...values);
  const step = days.length > 0 ? W / days.length : W;
  const bars = values
    .map((v, i) => {
      const h = max > 0 ? Math.round(((H - top - bottom) * v) / max) : 0;
      return `<rect x="${(i * step + step * 0.15).toFixed(1)}" y="${H - bottom - h}" width="${(step * 0.7).toFixed(1)}" height="${h}" fill="#12355b"></rect>`;
    })
    .join('');
  const first = days[0]?.date ?? '';
  const last = days[days.length - 1]?.date ?? '';
  const labels =
    `<text x="0" y="${H - 6}" font-size="22" fill="#3d4752">${esc(dateBr(first))}</text>` +
    `<text x="${W}" y="${H - 6}" font-size="22" fill="#3d4752" text-anchor="end">${esc(dateBr(last))}</text>` +
    `<text x="0" y="22" font-size="22" fill="#3d4752">máx. ${esc(label(max))}</text>`;
  return (
    `<figure><figcaption>${esc(title)}</figcaption>` +
    `<svg class="chart" viewBox="0 0 ${W} ${H}" aria-hidden="true" focusable="false">` +
    `<line x1="0" y1="${H - bottom}" x2="${W}" y2="${H - bottom}" stroke="#9aa5b1"></line>${bars}${labels}</svg></figure>`
  );
}

export function overviewPage(
  links: PortalLinks,
  who: SessionView,
  catalog: CatalogHealth | null,
  daily: { days: DayFigures[]; totals: Omit<DayFigures, 'date'>; channels: ChannelClicks[] } | null,
  balance: BalanceView | null,
): string {
  const health = catalog
    ? `<section class="panel" aria-labelledby="h-cat"><h2 id="h-cat">Catálogo</h2>${statesList(links, catalog.states)}` +
      `<p>${catalog.searchable} ${catalog.searchable === 1 ? 'oferta aparece' : 'ofertas aparecem'} na busca` +
      `${who.env === 'test' ? ' (no ambiente de teste: apareceriam, se fossem enviadas com uma chave live)' : ''}.</p>` +
      `<p><a href="${esc(links.portal)}/catalogo">Ver o catálogo e os motivos</a></p></section>`
    : '<section class="panel"><h2>Catálogo</h2><p>Sua chave não tem o escopo <code>catalog</code>.</p></section>';
  let activity: string;
  if (!daily)
    activity =
      '<section class="panel"><h2>Últimos 30 dias</h2><p>Sua chave não tem o escopo <code>reports</code>.</p></section>';
  else {
    const num = (v: BigCents) => Number(v);
    const rows = daily.days
      .map(
        (d) =>
          `<tr><th scope="row">${esc(dateBr(d.date))}</th><td class="n">${d.clicks}</td><td class="n">${d.orders}</td>` +
          `<td class="n">${esc(bigMoney(d.net_cents))}</td><td class="n">${esc(bigMoney(d.known_expected_commission_cents))}</td></tr>`,
      )
      .join('');
    const t = daily.totals;
    activity =
      '<section class="panel" aria-labelledby="h-days"><h2 id="h-days">Últimos 30 dias</h2>' +
      `<p>${t.clicks} cliques, ${t.orders} pedidos, ${esc(bigMoney(t.net_cents))} líquidos, ` +
      `${esc(bigMoney(t.known_expected_commission_cents))} de comissão esperada (conhecida).</p>` +
      '<div class="charts">' +
      barChart('Cliques por dia', daily.days, (d) => d.clicks) +
      barChart('Pedidos por dia', daily.days, (d) => d.orders) +
      barChart('Valor líquido por dia', daily.days, (d) => num(d.net_cents), money) +
      barChart('Comissão esperada por dia', daily.days, (d) => num(d.known_expected_commission_cents), money) +
      '</div>' +
      `${scrollable('Números por dia')}<table><caption>Os números dos gráficos, por dia (UTC)</caption>` +
      '<thead><tr><th scope="col">Dia</th><th scope="col" class="n">Cliques</th><th scope="col" class="n">Pedidos</th>' +
      '<th scope="col" class="n">Líquido</th><th scope="col" class="n">Comissão esperada</th></tr></thead>' +
      `<tbody>${rows}</tbody><tfoot><tr><th scope="row">Total</th><td class="n">${t.clicks}</td><td class="n">${t.orders}</td>` +
      `<td class="n">${esc(bigMoney(t.net_cents))}</td><td class="n">${esc(bigMoney(t.known_expected_commission_cents))}</td></tr></tfoot>` +
      '</table></div>' +
      `${scrollable('Cliques por canal')}<table><caption>Cliques por canal (as páginas do serviço e cada canal que publica suas ofertas)</caption>` +
      '<thead><tr><th scope="col">Canal</th><th scope="col" class="n">Cliques</th></tr></thead><tbody>' +
      daily.channels
        .map(
          (c) =>
            `<tr><th scope="row">${c.channel === null ? 'Páginas do serviço' : esc(c.channel)}</th><td class="n">${c.clicks}</td></tr>`,
        )
        .join('') +
      '</tbody></table></div></section>';
  }
  const statement = balance
    ? `<section class="panel"><h2>Saldo do extrato</h2><p>${esc(balanceText(balance))}.</p>` +
      `<p><a href="${esc(links.portal)}/extrato">Ver o extrato</a> · <a href="${esc(links.portal)}/fechamentos">Fechamentos</a></p></section>`
    : '';
  return portalLayout(links, who, 'Visão geral', `<h1>Visão geral</h1>${health}${statement}${activity}`, 'overview');
}

// ---------------------------------------------------------------------------------------------------- catalog

export type ProductRow = { sku: string; store_id: string; state: ProductState; reasons: { code: string }[] };

export function catalogPage(
  links: PortalLinks,
  who: SessionView,
  catalog: CatalogHealth,
  list: { heading: string; rows: ProductRow[]; next: string | null } | null,
): string {
  const reasons =
    catalog.reasons.length === 0
      ? '<p>Nenhum produto pendente ou rejeitado tem motivo.</p>'
      : `${scrollable('Motivos')}<table><thead><tr><th scope="col">Motivo</th><th scope="col" class="n">Produtos</th><th scope="col">O que fazer</th></tr></thead><tbody>` +
        catalog.reasons
          .map(
            (r) =>
              `<tr><td><a href="${esc(links.portal)}/catalogo?motivo=${encodeURIComponent(r.code)}"><code>${esc(r.code)}</code></a></td>` +
              `<td class="n">${r.count}</td><td>${esc(reasonAdvice(r.code))}</td></tr>`,
          )
          .join('') +
        '</tbody></table></div>';
  const search =
    `<form class="inline" method="get" action="${esc(links.portal)}/catalogo" role="search">` +
    '<div><label for="sku">Buscar por SKU</label><input id="sku" name="sku" type="search" maxlength="80" required></div>' +
    '<button class="primary" type="submit">Buscar</button></form>';
  let products = '';
  if (list) {
    const rows = list.rows
      .map(
        (p) =>
          `<tr><td><a href="${esc(links.portal)}/produtos/${encodeURIComponent(p.sku)}">${esc(p.sku)}</a></td>` +
          `<td>${esc(p.store_id)}</td><td>${STATE_ONE[p.state]}</td><td>${p.reasons.map((r) => `<code>${esc(r.code)}</code>`).join(' ')}</td></tr>`,
      )
      .join('');
    products =
      `<section class="panel" aria-labelledby="h-list"><h2 id="h-list">${esc(list.heading)}</h2>` +
      (list.rows.length === 0
        ? '<p>Nenhum produto.</p>'
        : `${scrollable('Produtos')}<table><thead><tr><th scope="col">SKU</th><th scope="col">Loja</th><th scope="col">Estado</th><th scope="col">Motivos</th></tr></thead>` +
          `<tbody>${rows}</tbody></table></div>`) +
      (list.next
        ? `<nav class="pages" aria-label="Páginas"><a href="${esc(list.next)}" rel="next">Próxima página</a></nav>`
        : '') +
      '</section>';
  }
  return portalLayout(
    links,
    who,
    'Catálogo',
    '<h1>Catálogo</h1>' +
      `<section class="panel"><h2>Estados</h2>${statesList(links, catalog.states)}<p>${catalog.searchable} na busca.</p>${search}</section>` +
      products +
      `<section class="panel" aria-labelledby="h-reasons"><h2 id="h-reasons">Motivos dos pendentes e rejeitados</h2>${reasons}</section>`,
    'catalog',
  );
}

// ---------------------------------------------------------------------------------------------------- product

export type VisibilityView = {
  searchable: boolean;
  checks: { check: VisibilityCheckName; ok: boolean; detail: string | null }[];
  fresh_until: string | null;
  svc_url: string | null;
};

export type HistoryLine = { at: string; what: string };

export function productPage(
  links: PortalLinks,
  who: SessionView,
  product: { sku: string; store_id: string; state: ProductState; reasons: { code: string; message: string }[] },
  visibility: VisibilityView,
  preview: OfferView | null,
  history: { lines: HistoryLine[]; total: number },
): string {
  const checks =
    '<ul class="checks">' +
    visibility.checks
      .map(
        (c) =>
          `<li><span class="${c.ok ? 'ok' : 'bad'}">${c.ok ? '✓ Sim' : '✗ Não'}</span> — ${CHECK_LABELS[c.check]}` +
          `${c.detail ? `<br>${esc(c.detail)}` : ''}</li>`,
      )
      .join('') +
    '</ul>';
  const summary = visibility.searchable
    ? `<p><strong>Esta oferta aparece na busca.</strong>${visibility.fresh_until ? ` Ela sai da busca em ${esc(timeBr(visibility.fresh_until))} se não for atualizada antes.` : ''}</p>`
    : '<p><strong>Esta oferta não aparece na busca.</strong> Veja abaixo o que falta.</p>';
  const reasons =
    product.reasons.length === 0
      ? ''
      : '<h3>Motivos</h3><ul>' +
        product.reasons.map((r) => `<li><code>${esc(r.code)}</code>: ${esc(reasonAdvice(r.code))}</li>`).join('') +
        '</ul>';
  const card = preview
    ? `<section class="panel preview" aria-labelledby="h-prev"><h2 id="h-prev">Prévia da oferta</h2>` +
      '<p class="preview-label">Prévia</p><p class="muted">Como o comprador veria esta oferta na busca.</p>' +
      `${offerCard(preview, true)}</section>`
    : '';
  const lines = history.lines.map((h) => `<tr><td>${esc(timeBr(h.at))}</td><td>${esc(h.what)}</td></tr>`).join('');
  const older =
    history.total > history.lines.length
      ? `<p class="muted">Mostrando os ${history.lines.length} eventos mais recentes de ${history.total}.</p>`
      : '';
  return portalLayout(
    links,
    who,
    `Produto ${product.sku}`,
    `<h1>Produto ${esc(product.sku)}</h1>` +
      `<section class="panel"><p>Loja <a href="${esc(links.portal)}/lojas/${encodeURIComponent(product.store_id)}">${esc(product.store_id)}</a> · Estado: <strong>${STATE_ONE[product.state]}</strong></p>` +
      `${visibility.svc_url ? `<p>Endereço da oferta: <code>${esc(visibility.svc_url)}</code></p>` : ''}${reasons}</section>` +
      `<section class="panel" aria-labelledby="h-vis"><h2 id="h-vis">Está na busca?</h2>${summary}${checks}</section>` +
      card +
      `<section class="panel" aria-labelledby="h-hist"><h2 id="h-hist">Histórico</h2>${older}` +
      `${scrollable('Histórico')}<table><thead><tr><th scope="col">Quando</th><th scope="col">O que aconteceu</th></tr></thead><tbody>${lines}</tbody></table></div></section>`,
    'catalog',
  );
}

// ---------------------------------------------------------------------------------------------------- stores

export type StoreRow = {
  store_id: string;
  name: string;
  status: 'pending_review' | 'active' | 'suspended';
  domains: string[];
  domains_approved: string[];
};

const STORE_STATUS: Record<StoreRow['status'], string> = {
  pending_review: 'Em análise',
  active: 'Ativa',
  suspended: 'Suspensa',
};

function domainsList(s: StoreRow): string {
  return (
    '<ul>' +
    s.domains
      .map(
        (d) =>
          `<li><code>${esc(d)}</code> — ${s.domains_approved.includes(d) ? 'aprovado' : 'aguardando aprovação'}</li>`,
      )
      .join('') +
    '</ul>'
  );
}

export function storesPage(links: PortalLinks, who: SessionView, stores: StoreRow[], next: string | null): string {
  const body =
    stores.length === 0
      ? '<p>Nenhuma loja cadastrada neste ambiente.</p>'
      : stores
          .map(
            (s) =>
              `<section class="panel"><h2><a href="${esc(links.portal)}/lojas/${encodeURIComponent(s.store_id)}">${esc(s.name)}</a></h2>` +
              `<p><code>${esc(s.store_id)}</code> · ${STORE_STATUS[s.status]}</p><h3>Domínios</h3>${domainsList(s)}</section>`,
          )
          .join('');
  const more = next
    ? `<nav class="pages" aria-label="Páginas"><a href="${esc(next)}" rel="next">Próxima página</a></nav>`
    : '';
  return portalLayout(links, who, 'Lojas', `<h1>Lojas</h1>${body}${more}`, 'stores');
}

export function storePage(links: PortalLinks, who: SessionView, s: StoreRow): string {
  return portalLayout(
    links,
    who,
    `Loja ${s.name}`,
    `<h1>${esc(s.name)}</h1><section class="panel"><p><code>${esc(s.store_id)}</code> · ${STORE_STATUS[s.status]}</p>` +
      `<h2>Domínios</h2>${domainsList(s)}` +
      `<p><a href="${esc(links.portal)}/catalogo?loja=${encodeURIComponent(s.store_id)}">Produtos desta loja</a></p></section>`,
    'stores',
  );
}

// ---------------------------------------------------------------------------------------------------- ledger

export type BalanceView = { net_cents: BigCents; known_expected_commission_cents: BigCents };

export type MovementView = {
  event_id: string;
  store_id: string;
  order_id: string;
  type: 'paid' | 'refunded' | 'cancelled';
  recorded_at: string;
  net_delta_cents: BigCents;
  known_expected_commission_delta_cents: BigCents;
  net_balance_cents: BigCents;
};

export type ClosingView = {
  period: string;
  opening: BalanceView;
  closing: BalanceView;
  movements: number;
  net_delta_cents: BigCents;
  sha256: string;
};

const MOVEMENT_TYPES: Record<MovementView['type'], string> = {
  paid: 'Pago',
  refunded: 'Reembolso',
  cancelled: 'Cancelamento',
};

/** The statement's balance as the overview and the statement say it. */
export function balanceText(b: BalanceView): string {
  return `${bigMoney(b.net_cents)} líquidos, ${bigMoney(b.known_expected_commission_cents)} de comissão esperada (conhecida)`;
}

export function statementPage(
  links: PortalLinks,
  who: SessionView,
  window: { since: string; until: string },
  opening: BalanceView,
  closing: BalanceView,
  movements: MovementView[],
  more: boolean,
): string {
  const rows = movements
    .map(
      (m) =>
        `<tr><td class="when">${esc(timeBr(m.recorded_at))}</td><td>${MOVEMENT_TYPES[m.type]}</td>` +
        `<td>${esc(m.store_id)} / ${esc(m.order_id)}</td><td class="n">${esc(bigMoney(m.net_delta_cents))}</td>` +
        `<td class="n">${esc(bigMoney(m.known_expected_commission_delta_cents))}</td><td class="n">${esc(bigMoney(m.net_balance_cents))}</td></tr>`,
    )
    .join('');
  const table =
    movements.length === 0
      ? '<p>Nenhum movimento neste período.</p>'
      : `${scrollable('Movimentos')}<table><thead><tr><th scope="col">Registrado em</th><th scope="col">Tipo</th><th scope="col">Loja / pedido</th>` +
        '<th scope="col" class="n">Líquido</th><th scope="col" class="n">Comissão</th><th scope="col" class="n">Saldo líquido</th></tr></thead>' +
        `<tbody>${rows}</tbody></table></div>` +
        (more
          ? `<p class="muted">Mostrando os ${movements.length} primeiros movimentos; o extrato completo está em GET /v1/statement.</p>`
          : '');
  return portalLayout(
    links,
    who,
    'Extrato',
    '<h1>Extrato de movimentos</h1>' +
      `<section class="panel"><p>De ${esc(timeBr(window.since))} a ${esc(timeBr(window.until))} (últimos 30 dias, pela data de registro).</p>` +
      `<p>Saldo inicial: ${esc(balanceText(opening))}.</p><p><strong>Saldo final: ${esc(balanceText(closing))}.</strong></p></section>` +
      `<section class="panel" aria-labelledby="h-mov"><h2 id="h-mov">Movimentos</h2>${table}</section>`,
    'statement',
  );
}

export function closingsPage(links: PortalLinks, who: SessionView, closings: ClosingView[]): string {
  const rows = closings
    .map(
      (c) =>
        `<tr><th scope="row">${esc(c.period)}</th><td class="n">${c.movements}</td><td class="n">${esc(bigMoney(c.net_delta_cents))}</td>` +
        `<td class="n">${esc(bigMoney(c.closing.net_cents))}</td>` +
        `<td><a href="${esc(links.portal)}/fechamentos/${esc(c.period)}/movimentos.csv" download>CSV de ${esc(c.period)}</a></td>` +
        `<td><code>${esc(c.sha256.slice(0, 12))}…</code></td></tr>`,
    )
    .join('');
  const body =
    closings.length === 0
      ? '<p>Nenhum mês fechado ainda (o primeiro fecha ao fim do mês do primeiro movimento).</p>'
      : `${scrollable('Fechamentos')}<table><thead><tr><th scope="col">Mês</th><th scope="col" class="n">Movimentos</th>` +
        '<th scope="col" class="n">Líquido no mês</th><th scope="col" class="n">Saldo no fim</th><th scope="col">Arquivo</th><th scope="col">SHA-256</th></tr></thead>' +
        `<tbody>${rows}</tbody></table></div>`;
  return portalLayout(
    links,
    who,
    'Fechamentos',
    '<h1>Fechamentos mensais</h1><section class="panel"><p>Meses no horário de Brasília; um mês fechado nunca muda.</p>' +
      `${body}</section>`,
    'closings',
  );
}
