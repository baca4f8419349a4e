/**
 * Stream names. The environment and the partner are part of every partner-owned stream, so isolation is
 * structural. The separator after the category is `:` because ExternalIds may hold `.`, `-` and `_`;
 * the text before the first `-` is the category (EventStoreDB's reading).
 */

export type Environment = 'live' | 'test';
export const ENVIRONMENTS: readonly Environment[] = ['live', 'test'];

export interface Tenant {
  partnerId: string;
  env: Environment;
}

const scope = (t: Tenant): string => `${t.env}:${t.partnerId}`;

export const streams = {
  partner: (partnerId: string) => `partner-${partnerId}`,
  store: (t: Tenant, storeId: string) => `store-${scope(t)}:${storeId}`,
  /** One per partner and environment: the list of its stores (single_store, lower-case address conflicts). */
  storeIndex: (t: Tenant) => `storeindex-${scope(t)}`,
  /** Reservation of one CNPJ per environment across all partners. */
  cnpj: (env: Environment, cnpj: string) => `cnpj-${env}:${cnpj}`,
  product: (t: Tenant, sku: string) => `product-${scope(t)}:${sku}`,
  order: (t: Tenant, storeId: string, orderId: string) => `order-${scope(t)}:${storeId}:${orderId}`,
  /** Reservation of one conversion event_id per partner and environment. */
  conversionEvent: (t: Tenant, eventId: string) => `convevent-${scope(t)}:${eventId}`,
  click: (t: Tenant, clickId: string) => `click-${scope(t)}:${clickId}`,
  job: (t: Tenant, jobId: string) => `job-${scope(t)}:${jobId}`,
  /** The partner's notification endpoint in one environment (one at most). */
  webhook: (t: Tenant) => `webhook-${scope(t)}`,
} as const;

/** Categories the projectors follow. */
export const CATEGORIES = {
  partner: 'partner',
  store: 'store',
  storeIndex: 'storeindex',
  cnpj: 'cnpj',
  product: 'product',
  order: 'order',
  conversionEvent: 'convevent',
  click: 'click',
  job: 'job',
  webhook: 'webhook',
  /** Channels of the feeds (shared-schema/events/channel.ts). */
  channel: 'channel',
  /** The feeds' own facts: how far their changes are kept (shared-schema/events/feed.ts). */
  feed: 'feed',
} as const;
