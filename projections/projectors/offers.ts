/**
 * The offers read model (the shopper side, SHOPPER.md): one document per live SKU with the facts search needs — the
 * product as sent without its commission, removal, the cover verdict, the time of the last applied write, the text
 * index fields — and, in a collection of its own, the facts of each live store (name, status, declared and approved
 * domains). Whether an offer is searchable is not stored: the search derives it from these facts and the clock with
 * the partner API's own derivation of `state` (shared-schema/shopper/offer-facts.ts).
 *
 * Store facts are joined at search time instead of being copied into every offer, so a store event writes one
 * document (no fan-out over the store's products). The test area is not kept (visible to nobody). Times come from
 * the events only, so a replay gives the same documents. The text index (`text` fields) is kept in the same unit
 * of work by the read store (ports/text-search.ts).
 */
import { asUnion, type RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { ReadTx } from '../../shared-schema/ports/read-store.js';
import type { ProductEvent } from '../../shared-schema/events/product.js';
import type { StoreEvent } from '../../shared-schema/events/store.js';
import { applyPatch } from '../../shared-schema/domain/product-status.js';
import { evolveStanding, NEW_STANDING } from '../../shared-schema/domain/store-standing.js';
import { offerProduct, otherText, type OfferDoc, type OfferStoreDoc } from '../../shared-schema/shopper/offer-facts.js';
import { scopedId } from '../../shared-schema/read-models/scoped-id.js';
import { OFFER_COLLECTIONS, OFFER_STORES, OFFERS } from '../../shared-schema/read-models/offers.js';
import { alreadyApplied, streamScope, type Projector } from '../projector.js';

/** Sets the text index fields and the position of a document `offerAfter` has just made (no copy of it). */
function withText(doc: OfferDoc, position: number): OfferDoc {
  const live = !doc.removed;
  doc.gtin = doc.product.gtin ?? null;
  doc.text_title = live ? doc.product.title : '';
  doc.text_other = live ? otherText(doc.product) : '';
  doc.position = position;
  return doc;
}

/**
 * The offer's document after one event of its product stream (null: the event changes nothing of it). The channel
 * feed's model (projections/projectors/feed.ts) keeps the same facts by this same rule.
 */
export function offerAfter(current: OfferDoc | null, recorded: RecordedEvent, id: string): OfferDoc | null {
  const { env, partnerId } = streamScope(recorded.stream);
  const e = asUnion<ProductEvent>(recorded);
  let next: OfferDoc | null = null;
  switch (e.type) {
    case 'ProductUpserted': {
      const product = offerProduct(e.data.product);
      next = {
        _id: id,
        partner_id: partnerId,
        sku: e.data.sku,
        store_id: product.store_id,
        store_key: scopedId({ env, partnerId }, product.store_id),
        gtin: null,
        product,
        removed: false,
        cover: current?.cover ?? null, // as the products projector: only a check of the current cover address counts
        last_write_at: e.data.received_at,
        text_title: '',
        text_other: '',
        position: 0,
      };
      break;
    }
    case 'ProductPatched':
      if (current) {
        const { commission: _ignored, ...patch } = e.data.patch;
        next = {
          ...current,
          product: offerProduct(applyPatch(current.product, patch)),
          last_write_at: e.data.received_at,
        };
      }
      break;
    case 'ProductRemoved':
      if (current) next = { ...current, removed: true };
      break;
    case 'CoverChecked':
      if (current)
        next = {
          ...current,
          cover: { url: e.data.url, ok: e.data.ok, reasons: e.data.reasons, checked_at: e.data.checked_at },
        };
      break;
  }
  return next ? withText(next, recorded.position) : null;
}

async function onProductEvent(recorded: RecordedEvent, tx: ReadTx): Promise<void> {
  const { env, partnerId } = streamScope(recorded.stream);
  if (env !== 'live') return;
  const sku = (recorded.data as { sku: string }).sku;
  const id = scopedId({ env, partnerId }, sku);
  const current = await tx.get<OfferDoc>(OFFERS, id);
  if (alreadyApplied(current, recorded)) return;
  const next = offerAfter(current, recorded, id);
  if (next) await tx.put(OFFERS, next);
}

/** A live store's facts after one event of its stream (null: none to keep). Shared with the channel feed's model. */
export function offerStoreAfter(
  current: OfferStoreDoc | null,
  recorded: RecordedEvent,
  id: string,
): OfferStoreDoc | null {
  const e = asUnion<StoreEvent>(recorded);
  if (!('store_id' in e.data)) return null;
  const declares = e.type === 'StoreRegistered' || e.type === 'StoreReplaced';
  if (!current && !declares) return null;
  const standing = evolveStanding(current ?? NEW_STANDING, e);
  return declares
    ? {
        _id: id,
        store_id: e.data.store_id,
        name: e.data.store.name,
        domains: [...e.data.store.domains],
        ...standing,
        position: recorded.position,
      }
    : { ...current!, ...standing, position: recorded.position };
}

/** The `_id` of a live store's facts (`live:<partner>:<store_id>`), or null for a test store or a stream-wide event. */
export function offerStoreId(recorded: RecordedEvent): string | null {
  const { env, partnerId } = streamScope(recorded.stream);
  const data = recorded.data as { store_id?: unknown };
  if (env !== 'live' || typeof data.store_id !== 'string') return null;
  return scopedId({ env, partnerId }, data.store_id);
}

async function onStoreEvent(recorded: RecordedEvent, tx: ReadTx): Promise<void> {
  const id = offerStoreId(recorded);
  if (id === null) return;
  const current = await tx.get<OfferStoreDoc>(OFFER_STORES, id);
  if (alreadyApplied(current, recorded)) return;
  const next = offerStoreAfter(current, recorded, id);
  if (next) await tx.put(OFFER_STORES, next);
}

export const offersProjector: Projector = {
  name: 'offers',
  collections: OFFER_COLLECTIONS,
  categories: ['product', 'store'],
  async apply(recorded, tx) {
    if (recorded.stream.startsWith('product-')) return onProductEvent(recorded, tx);
    return onStoreEvent(recorded, tx);
  },
};
