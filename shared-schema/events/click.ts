/**
 * Clicks: one stream per click (`streams.click(tenant, click_id)`), one event. A click carries no IP address, no
 * browser data and no personal data: only what the partner reads back (PartnerClick) and whose click it is.
 */
import type { Environment } from '../domain/streams.js';

export interface ClickData {
  click_id: string;
  partner_id: string;
  environment: Environment;
  store_id: string;
  sku: string;
  /** The product's price at the moment of the click (null when unknown). */
  price_cents: number | null;
  /** UTC ISO 8601 with milliseconds, from the injected clock. */
  occurred_at: string;
  /** `redirect`: a shopper went through the redirector; `sandbox`: `POST /sandbox/clicks` (test keys only). */
  source: 'redirect' | 'sandbox';
  /** The channel whose link the shopper followed (`canal`, FEEDS.md); absent when none, or not a valid one. */
  channel_id?: string;
}

export type ClickEvent = { type: 'ClickRecorded'; data: ClickData };

/** The contract's PartnerClick. */
export interface PartnerClick {
  click_id: string;
  store_id: string;
  sku: string;
  price_cents: number | null;
  occurred_at: string;
}

export const partnerClick = (c: ClickData): PartnerClick => ({
  click_id: c.click_id,
  store_id: c.store_id,
  sku: c.sku,
  price_cents: c.price_cents,
  occurred_at: c.occurred_at,
});
