/**
 * The full feed writes each offer from the line the feed projector kept (`tsvTemplate`), completed with the service's
 * address and the channel (`tsvOf`): the bytes must be those of `tsvLine` over the channel's offer, for every entry.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalJson } from '../../shared-schema/http/json.js';
import {
  entryCanonicalJson,
  feedOffer,
  tsvLine,
  tsvLink,
  tsvOf,
  tsvTemplate,
  type FeedEntry,
} from '../../shared-schema/feeds/feed-offer.js';
import { feedEntryArbitrary } from './feed-entry-arbitrary.js';

/** Text with the characters a TSV cell rewrites, and those a path encodes. */
const text = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '\t', '\r', '\n', '/', '?', '&', '%', 'é', '💡', '#') });
const cents = fc.integer({ min: 0, max: 2 ** 40 });

const entry = feedEntryArbitrary(text, cents);

describe('the feed entry as the projector compares it', () => {
  it('entryCanonicalJson is the text of canonicalJson, whatever the key order of the objects inside', () => {
    const shuffled = (e: FeedEntry): FeedEntry => {
      const reversed = <T extends object>(o: T): T =>
        Object.fromEntries(
          Object.entries(o)
            .reverse()
            .map(([k, v]) => [k, v !== null && typeof v === 'object' ? reversed(v as object) : v]),
        ) as T;
      return reversed(e);
    };
    fc.assert(
      fc.property(entry, (e) => {
        expect(entryCanonicalJson(e)).to.equal(canonicalJson(e));
        expect(entryCanonicalJson(shuffled(e))).to.equal(canonicalJson(e));
      }),
      { seed: 20261128, numRuns: 300 },
    );
  });
});

describe('the full feed line kept by the projector', () => {
  it('completed for a channel, is the bytes of tsvLine for that channel', () => {
    fc.assert(
      fc.property(
        entry,
        fc.constantFrom('http://127.0.0.1:8080', 'https://shop.example/base', 'https://x.example/?a=1'),
        fc.constantFrom('ch_AAAAAAAAAAAAAAAAAAAAAA', 'ch_a-b_c'),
        (e, base, channel) => {
          expect(tsvOf(tsvTemplate(e), tsvLink(base, channel))).to.equal(tsvLine(feedOffer(e, base, channel)));
        },
      ),
      { seed: 20261128, numRuns: 500 },
    );
  });
});
