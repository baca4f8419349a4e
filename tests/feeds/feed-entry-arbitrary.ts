/** The feed entries the feed's template tests generate (tests/feeds/*-template.unit.spec.ts). */
import fc from 'fast-check';
import type { FeedEntry } from '../../shared-schema/feeds/feed-offer.js';

/**
 * Feed entries (the feed model's `entry`) whose free text comes from `text` and whose amounts from `cents`: every
 * optional field present or null, shipping free or fixed with or without delivery days. Store ids and SKUs are
 * non-empty and well formed (a path segment is percent-encoded, which refuses lone surrogates).
 */
export function feedEntryArbitrary(text: fc.Arbitrary<string>, cents: fc.Arbitrary<number>): fc.Arbitrary<FeedEntry> {
  return fc.record({
    id: fc.string({ unit: fc.constantFrom('A', 'z', '0', '_', '-'), minLength: 32, maxLength: 32 }),
    description: fc.option(text),
    category: fc.option(text),
    offer: fc.record({
      id: text,
      partner_id: fc.string({ unit: fc.constantFrom('p', 'Q', '1', '-'), minLength: 1 }),
      store_id: text.filter((s) => s.length > 0 && wellFormed(s)),
      store_name: text,
      sku: text.filter((s) => s.length > 0 && wellFormed(s)),
      gtin: fc.option(text),
      title: text,
      brand: fc.option(text),
      condition: fc.constantFrom('new' as const, 'used' as const, 'refurbished' as const),
      price_cents: cents,
      original_price_cents: fc.option(cents),
      installments: fc.option(fc.record({ count: fc.nat(24), value_cents: cents, interest_free: fc.boolean() })),
      shipping: fc.option(
        fc.oneof(
          fc.record({
            type: fc.constant('free' as const),
            delivery_days_min: fc.option(fc.nat(60), { nil: undefined }),
          }),
          fc.record({
            type: fc.constant('fixed' as const),
            cost_cents: cents,
            delivery_days_max: fc.option(fc.nat(60), { nil: undefined }),
          }),
        ),
      ),
      rating: fc.option(fc.record({ average: fc.double({ min: 0, max: 5, noNaN: true }), count: fc.nat() })),
      image_url: text,
      updated_at: fc.constant('2026-06-01T12:00:00.000Z'),
    }),
  });
}

/** A path segment is percent-encoded, which refuses lone surrogates: store ids and SKUs never hold one. */
const wellFormed = (s: string): boolean =>
  !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
