/**
 * What a channel receives of one searchable offer (FEEDS.md): the Offer shape of SHOPPER.md plus `description`,
 * `brand`, `gtin`, `category` and a stable `id`, with `?canal=<channel_id>` on `offer_url` and `buy_url`. No
 * commission. The channel feed's model keeps the channel-independent part (`FeedEntry`); the links are written
 * for the channel that reads.
 */
import { createHash } from 'node:crypto';
import type { OfferDoc, OfferStoreDoc } from '../shopper/offer-facts.js';
import type { SearchOffer } from '../shopper/ranking.js';
import { offerView, searchOfferOf, type OfferView } from '../shopper/search-view.js';
import { offerPath } from '../domain/product-status.js';
import { canonicalJson } from '../http/json.js';

/**
 * The offer's id in every feed: base64url of the first 24 bytes of the SHA-256 of its partner, store and SKU (32
 * characters of `[A-Za-z0-9_-]`). The same offer always has the same id; two offers share one with probability
 * 2^-192 (docs/adr/0084-feed-offer-ids.md).
 */
export function feedOfferId(partnerId: string, storeId: string, sku: string): string {
  return createHash('sha256')
    .update(JSON.stringify([partnerId, storeId, sku]), 'utf8')
    .digest()
    .subarray(0, 24)
    .toString('base64url');
}

/** The channel-independent part of a feed offer, as the feed model keeps it. */
export type FeedEntry = {
  id: string;
  offer: SearchOffer;
  description: string | null;
  category: string | null;
};

export type FeedOffer = OfferView & {
  description: string | null;
  brand: string | null;
  gtin: string | null;
  category: string | null;
  id: string;
};

export function feedEntryOf(doc: OfferDoc, store: OfferStoreDoc, description: string | null): FeedEntry {
  return {
    id: feedOfferId(doc.partner_id, doc.store_id, doc.sku),
    offer: searchOfferOf(doc, store),
    description,
    category: doc.product.category ?? null,
  };
}

/** `url` with `canal=<channel id>` in its query (our own links: no query of their own). */
export const withCanal = (url: string, channelId: string): string =>
  `${url}${url.includes('?') ? '&' : '?'}canal=${encodeURIComponent(channelId)}`;

/** `view` completed in place with the feed's links and fields (its keys' order is the JSON's). */
function completed(view: OfferView, entry: FeedEntry, offerUrl: string, buyUrl: string): FeedOffer {
  // In place (a fresh view each call): the links keep their places, the feed's fields follow in order, and no copy
  // of the view is made per offer.
  return Object.assign(view, {
    offer_url: offerUrl,
    buy_url: buyUrl,
    description: entry.description,
    brand: entry.offer.brand,
    gtin: entry.offer.gtin,
    category: entry.category,
    id: entry.id,
  });
}

export function feedOffer(entry: FeedEntry, publicBase: string, channelId: string): FeedOffer {
  const view = offerView(entry.offer, publicBase);
  return completed(view, entry, withCanal(view.offer_url, channelId), withCanal(view.buy_url, channelId));
}

/** One change of the changes feed as the model keeps it (FEEDS.md: an offer that entered or moved, or left). */
export type FeedEntryChange = { op: 'upsert'; entry: FeedEntry } | { op: 'delete'; id: string };

/**
 * The JSON text of a change as `GET /feeds/changes` lists it (`JSON.stringify` of `{op, offer: feedOffer(...)}` or
 * `{op, id}`), without what depends on the service's address and the channel: `offer_url` and `buy_url` hold the
 * paths alone (`/p/…`, `/r/…`, percent-encoded: no `"`, `\`, `?` nor `&`). The feed projector keeps it with the
 * change so that a page is spliced together without reading the change's document (`changeOf` completes it); a
 * change kept before the text was goes through it at the read, the same bytes.
 */
export function changeTemplate(change: FeedEntryChange): string {
  if (change.op === 'delete') return JSON.stringify({ op: 'delete', id: change.id });
  const view = offerView(change.entry.offer, '');
  return JSON.stringify({ op: 'upsert', offer: completed(view, change.entry, view.offer_url, view.buy_url) });
}

/** What `changeOf` adds to both links of every upsert of one answer, as JSON string text (escaped, unquoted). */
export interface ChangeLink {
  before: string;
  after: string;
}

const jsonText = (s: string): string => JSON.stringify(s).slice(1, -1);

export function changeLink(publicBase: string, channelId: string): ChangeLink {
  // As `withCanal` writes the links: the paths never hold a `?`, so the base alone decides between `?` and `&`. Each
  // part escaped alone is the escape of the whole link: they join at ASCII characters, never inside a surrogate pair.
  return {
    before: jsonText(publicBase),
    after: jsonText(`${publicBase.includes('?') ? '&' : '?'}canal=${encodeURIComponent(channelId)}`),
  };
}

const OFFER_URL = '"offer_url":"';
const BUY_URL = '"buy_url":"';

/**
 * The change's JSON for the channel, from its `changeTemplate`: the same bytes. The links are found by their keys
 * searched from the end: after `offer_url` the offer holds only `buy_url` and strings or null (no object whose keys
 * could repeat them), and inside a JSON string every `"` is escaped, so no value can hold `"offer_url":"`.
 */
export function changeOf(template: string, link: ChangeLink): string {
  if (!template.startsWith('{"op":"upsert"')) return template;
  const offer = template.lastIndexOf(OFFER_URL) + OFFER_URL.length;
  const offerEnd = template.indexOf('"', offer);
  const buy = template.indexOf(BUY_URL, offerEnd) + BUY_URL.length;
  const buyEnd = template.indexOf('"', buy);
  return `${template.slice(0, offer)}${link.before}${template.slice(offer, offerEnd)}${link.after}${template.slice(offerEnd, buy)}${link.before}${template.slice(buy, buyEnd)}${link.after}${template.slice(buyEnd)}`;
}

/** `"1234.56 BRL"` (exact: integer cents). */
export function feedMoney(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')} BRL`;
}

export const TSV_COLUMNS = [
  'id',
  'title',
  'description',
  'link',
  'image_link',
  'availability',
  'price',
  'sale_price',
  'condition',
  'brand',
  'gtin',
  'product_type',
  'shipping',
] as const;

/** A value of a TSV line: a tab, CR or LF inside it is written as a space. */
const cell = (v: string | null): string => {
  const text = v ?? '';
  return /[\t\r\n]/.test(text) ? text.replace(/[\t\r\n]/g, ' ') : text;
};

export const TSV_HEADER = `${TSV_COLUMNS.join('\t')}\n`;

/** One line of the full feed (Google Merchant Center's text feed columns, FEEDS.md). */
export function tsvLine(o: FeedOffer): string {
  const onSale = o.original_price_cents !== null;
  const shipping = o.shipping.kind === 'to_be_calculated' ? '' : `BR:::${feedMoney(o.shipping.cost_cents ?? 0)}`;
  return (
    [
      o.id,
      o.title,
      o.description,
      o.offer_url,
      o.image_url,
      'in_stock',
      feedMoney(onSale ? o.original_price_cents! : o.price_cents),
      onSale ? feedMoney(o.price_cents) : '',
      o.condition,
      o.brand,
      o.gtin,
      o.category,
      shipping,
    ]
      .map(cell)
      .join('\t') + '\n'
  );
}

/**
 * The line of `tsvLine` without what depends on the service's address and the channel: its `link` cell holds the
 * offer page's path alone (`/p/…`, percent-encoded: no tab, `?` nor `&`). The feed projector keeps it beside the offer
 * so that the full feed writes each line without reading the offer's document (`tsvOf` completes it).
 */
export function tsvTemplate(entry: FeedEntry): string {
  const o = entry.offer;
  const onSale = o.original_price_cents !== null;
  const shipping =
    o.shipping === null ? '' : `BR:::${feedMoney(o.shipping.type === 'free' ? 0 : o.shipping.cost_cents)}`;
  return `${cell(entry.id)}\t${cell(o.title)}\t${cell(entry.description)}\t/p/${offerPath(o.partner_id, o.store_id, o.sku)}\t${cell(o.image_url)}\tin_stock\t${feedMoney(onSale ? o.original_price_cents! : o.price_cents)}\t${onSale ? feedMoney(o.price_cents) : ''}\t${cell(o.condition)}\t${cell(o.brand)}\t${cell(o.gtin)}\t${cell(entry.category)}\t${shipping}\n`;
}

/** What `tsvOf` adds to every template of one answer: the service's address before the path, the channel after it. */
export interface TsvLink {
  before: string;
  after: string;
}

export function tsvLink(publicBase: string, channelId: string): TsvLink {
  // As `withCanal` writes it on `offer_url`: the path itself never holds a `?`.
  return {
    before: cell(publicBase),
    after: cell(`${publicBase.includes('?') ? '&' : '?'}canal=${encodeURIComponent(channelId)}`),
  };
}

/** The line of `tsvLine` for the channel, from the offer's `tsvTemplate`: the same bytes. */
export function tsvOf(template: string, link: TsvLink): string {
  const start = template.indexOf('\t', template.indexOf('\t', template.indexOf('\t') + 1) + 1) + 1;
  const end = template.indexOf('\t', start);
  return `${template.slice(0, start)}${link.before}${template.slice(start, end)}${link.after}${template.slice(end)}`;
}

/** `{…}` of `o`'s own keys in sorted order, each value written by `value`: canonicalJson's text for one level. */
function sortedObject(o: object, value: (v: unknown) => string): string {
  const keys = Object.keys(o).sort();
  let text = '{';
  for (let i = 0; i < keys.length; i++)
    text += `${i === 0 ? '' : ','}${JSON.stringify(keys[i])}:${value((o as Record<string, unknown>)[keys[i]])}`;
  return `${text}}`;
}

const leafJson = (v: unknown): string =>
  v !== null && typeof v === 'object' ? canonicalJson(v) : (JSON.stringify(v) ?? 'null');

/**
 * `canonicalJson(entry)`, the same text, at a third of its cost: the entry and its offer are plain objects of scalars
 * (sorted here, one level each), and only the partner's own objects below them go through canonicalJson. The feed
 * projector compares entries by it on every product write.
 */
export function entryCanonicalJson(entry: FeedEntry): string {
  return sortedObject(entry, (v) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? sortedObject(v, leafJson) : leafJson(v),
  );
}
