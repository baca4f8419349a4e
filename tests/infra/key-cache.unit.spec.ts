/** The embedded doors' key cache: bounded, and a key it let go is read again with what the read store holds now. */
import { expect } from 'chai';
import { KeyCache } from '../../infra/wiring/doors.js';
import type { KeyRecord } from '../../shared-schema/read-models/partners.js';

const record = (hash: string, revoked = false): KeyRecord => ({
  key_id: `key-${hash}`,
  partner_id: `partner-${hash}`,
  partner_name: 'A partner',
  partner_type: 'store',
  environment: 'live',
  scopes: [],
  revoked,
});

describe('KeyCache: bounded', () => {
  it('holds at most its capacity while many partners call, and reads again a key it let go', async () => {
    const held = new Map<string, KeyRecord>();
    let reads = 0;
    const cache = new KeyCache(8);
    const lookup = cache.over(async (hash) => {
      reads++;
      return held.get(hash) ?? null;
    });
    for (let i = 0; i < 100; i++) held.set(`h${i}`, record(`h${i}`));
    for (let i = 0; i < 100; i++) {
      expect((await lookup(`h${i}`))?.key_id).to.equal(`key-h${i}`);
      expect(cache.size).to.be.at.most(8);
    }
    expect(reads).to.equal(100);
    await lookup('h99'); // still held: no read
    expect(reads).to.equal(100);
    // h0 was let go: its next lookup reads the store, and sees the revocation made meanwhile.
    held.set('h0', record('h0', true));
    expect((await lookup('h0'))?.revoked).to.equal(true);
    expect(reads).to.equal(101);
  });
});

describe('KeyCache: following a count of partner changes', () => {
  it('forgets every key held once the count it follows has changed, at the next lookup, and not before', async () => {
    const held = new Map<string, KeyRecord>([['h1', record('h1')]]);
    let reads = 0;
    let changes = 7;
    const cache = new KeyCache();
    cache.follow(() => changes);
    const lookup = cache.over(async (hash) => {
      reads++;
      return held.get(hash) ?? null;
    });
    expect((await lookup('h1'))?.revoked).to.equal(false);
    expect((await lookup('h1'))?.revoked).to.equal(false);
    expect(reads).to.equal(1);
    // The projections committed the revocation: the store holds it, the cache still the key as it was.
    held.set('h1', record('h1', true));
    expect((await lookup('h1'))?.revoked).to.equal(false);
    changes++;
    expect((await lookup('h1'))?.revoked).to.equal(true);
    expect(reads).to.equal(2);
    expect((await lookup('h1'))?.revoked).to.equal(true);
    expect(reads).to.equal(2);
  });
});
