/**
 * The clicks read model, written by projections/projectors/clicks.ts, served by `GET /clicks`: one document per
 * click, listed by occurred_at, store_id, click_id.
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
};

export const clickDocId = (t: Tenant, clickId: string): string => scopedId(t, clickId);

export const CLICK_COLLECTIONS: readonly CollectionSpec[] = [
  {
    name: CLICKS,
    indexes: [
      ['partner_id', 'env', 'occurred_at', 'store_id'],
      ['partner_id', 'env', 'store_id', 'occurred_at'],
    ],
  },
];
