import type { Commission } from '../domain/commission.js';

export type Shipping =
  | { type: 'free'; min_order_cents?: number; delivery_days_min?: number; delivery_days_max?: number }
  | { type: 'fixed'; cost_cents: number; delivery_days_min?: number; delivery_days_max?: number };

export interface ProductInput {
  commission?: Commission;
  store_id: string;
  title: string;
  description?: string;
  brand?: string;
  model?: string;
  gtin?: string;
  category?: string;
  attributes?: Record<string, string>;
  condition?: 'new' | 'used' | 'refurbished';
  group_id?: string;
  variant_attributes?: Record<string, string>;
  product_url: string;
  image_urls: string[];
  price_cents: number;
  original_price_cents?: number;
  available: boolean;
  stock_quantity?: number;
  shipping?: Shipping;
  installments?: { count: number; value_cents: number; interest_free: boolean };
  rating?: { average: number; count: number };
  updated_at: string;
}

export interface ProductPatch {
  commission?: Commission;
  price_cents?: number;
  original_price_cents?: number | null;
  available?: boolean;
  stock_quantity?: number;
  shipping?: Shipping;
  updated_at: string;
}

export interface RejectionReason {
  code: string;
  field?: string;
  message: string;
}

export type ProductEvent =
  | { type: 'ProductUpserted'; data: { sku: string; product: ProductInput; received_at: string } }
  | { type: 'ProductPatched'; data: { sku: string; patch: ProductPatch; received_at: string } }
  | { type: 'ProductRemoved'; data: { sku: string; store_id: string; removed_at: string } }
  /** Result of a cover check of `url`, appended by the cover check (command-api/reactors/cover-work.ts). */
  | {
      type: 'CoverChecked';
      data: { sku: string; url: string; ok: boolean; reasons: RejectionReason[]; checked_at: string };
    }
  /**
   * The service clock passed `lapsed_at` (the last applied PUT/PATCH + 48 h) while the product was accepted and no
   * later write had come: the offer went stale then. Appended once per write by the freshness reactor
   * (command-api/reactors/freshness.ts); the state is still derived from the clock, this only records when it moved.
   */
  | { type: 'ProductFreshnessLapsed'; data: { sku: string; store_id: string; lapsed_at: string } };
