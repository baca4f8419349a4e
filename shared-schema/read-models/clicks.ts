/**
 * The clicks read model, written by projections/projectors/clicks.ts, served by `GET /clicks`: one document per
 * click, listed by occurred_at, store_id, click_id. The portal counts a window's clicks per channel from it.
 */
import type { CollectionSpec } from '../ports/read-store.js';
import type { Tenant } from '../domain/streams.js';
import { scopedId, type ScopedDoc } from './scoped-id.js';

export const CLICKS = 'clicks';

export type ClickDoc = ScopedDoc & {
  click_id: string;
  store_id: string;
  sku: string;
  price_cents: number | null;
  occurred_at: string;
  /**
   * The channel whose link the shopper followed; null for the service's own pages. Never in PartnerClick. Absent on
   * a document projected before it was kept (counted as null until the clicks projection is rebuilt).
   */
  channel_id?: string | null;
};

export const clickDocId = (t: Tenant, clickId: string): string => scopedId(t, clickId);

export const CLICK_COLLECTIONS: readonly CollectionSpec[] = [
  {
    name: CLICKS,
    indexes: [
      ['partner_id', 'env', 'occurred_at', 'store_id'],
      ['partner_id', 'env', 'store_id', 'occurred_at'],
      // A window's clicks per channel, counted from the index alone.
      ['partner_id', 'env', 'occurred_at', 'channel_id'],
    ],
    applyIndexes: [], // the projector reads clicks by `_id` only
  },
];
