/**
 * From the offers model to the ranking input, and from ranked products to the JSON shapes of SHOPPER.md
 * (`SearchPage`, `Product`, `Offer`). Rule 2: shipping the partner did not send is `to_be_calculated` with
 * `cost_cents` null, never `free`.
 */
import type { Shipping } from '../events/product.js';
import { offerPath, svcUrl } from '../domain/product-status.js';
import { CONDITION_LABELS, type Condition } from './offer-rules.js';
import type { OfferDoc, OfferStoreDoc } from './offer-facts.js';
import type { RankedProduct, SearchOffer } from './ranking.js';

export function searchOfferOf(doc: OfferDoc, store: OfferStoreDoc): SearchOffer {
  const p = doc.product;
  return {
    id: doc._id,
    partner_id: doc.partner_id,
    store_id: doc.store_id,
    store_name: store.name,
    sku: doc.sku,
    gtin: doc.gtin,
    title: p.title,
    brand: p.brand ?? null,
    condition: p.condition ?? 'new',
    price_cents: p.price_cents,
    original_price_cents: p.original_price_cents ?? null,
    installments: p.installments ?? null,
    shipping: p.shipping ?? null,
    rating: p.rating ?? null,
    image_url: p.image_urls[0],
    updated_at: p.updated_at,
  };
}

export type ShippingView = {
  kind: 'free' | 'fixed' | 'to_be_calculated';
  cost_cents: number | null;
  delivery_days_min: number | null;
  delivery_days_max: number | null;
};

export function shippingView(s: Shipping | null): ShippingView {
  if (s === null)
    return { kind: 'to_be_calculated', cost_cents: null, delivery_days_min: null, delivery_days_max: null };
  const days = { delivery_days_min: s.delivery_days_min ?? null, delivery_days_max: s.delivery_days_max ?? null };
  if (s.type === 'free') return { kind: 'free', cost_cents: 0, ...days };
  return { kind: 'fixed', cost_cents: s.cost_cents, ...days };
}

/** The words pages show for shipping (pt-BR); null for a fixed cost, written as money. */
export const SHIPPING_LABELS: Record<ShippingView['kind'], string | null> = {
  free: 'Frete grátis',
  fixed: null,
  to_be_calculated: 'Frete a calcular',
};

export type OfferView = {
  store: { store_id: string; name: string };
  sku: string;
  title: string;
  price_cents: number;
  original_price_cents: number | null;
  installments: SearchOffer['installments'];
  shipping: ShippingView;
  condition: Condition;
  condition_label: string | null;
  rating: SearchOffer['rating'];
  image_url: string;
  offer_url: string;
  buy_url: string;
  updated_at: string;
};

export type ProductView = {
  title: string;
  gtin: string | null;
  brand: string | null;
  image_url: string;
  price_from_cents: number | null;
  offers: OfferView[];
  alternatives: OfferView[];
};

export type SearchPage = { query: string; results: ProductView[]; next_cursor: string | null };

/** The redirector's address (SHOPPER.md: `/r/{store address}/{sku}`; live only). */
export function buyUrl(publicBase: string, partnerId: string, storeId: string, sku: string): string {
  return `${publicBase}/r/${offerPath(partnerId, storeId, sku)}`;
}

export function offerView(o: SearchOffer, publicBase: string): OfferView {
  return {
    store: { store_id: o.store_id, name: o.store_name },
    sku: o.sku,
    title: o.title,
    price_cents: o.price_cents,
    original_price_cents: o.original_price_cents,
    installments: o.installments,
    shipping: shippingView(o.shipping),
    condition: o.condition,
    condition_label: CONDITION_LABELS[o.condition],
    rating: o.rating,
    image_url: o.image_url,
    offer_url: svcUrl(publicBase, { partnerId: o.partner_id, env: 'live' }, o.store_id, o.sku),
    buy_url: buyUrl(publicBase, o.partner_id, o.store_id, o.sku),
    updated_at: o.updated_at,
  };
}

export function productView(p: RankedProduct, publicBase: string): ProductView {
  const first = p.offers[0] ?? p.alternatives[0];
  return {
    title: first.title,
    gtin: first.gtin,
    brand: first.brand,
    image_url: first.image_url,
    price_from_cents: p.offers.length > 0 ? Math.min(...p.offers.map((o) => o.price_cents)) : null,
    offers: p.offers.map((o) => offerView(o, publicBase)),
    alternatives: p.alternatives.map((o) => offerView(o, publicBase)),
  };
}
