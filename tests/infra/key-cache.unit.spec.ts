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
