/**
 * FEEDS.md's promise across the 48 h rule, with the freshness reactor's periodic scan kept out of the way (an hour of
 * real time): the full feed read at X, with every change after X applied in order up to the cursor of the full feed
 * read at Y, equals the full feed read at Y — also when Y is read after an offer's 48 h passed and before any scan
 * recorded it. The full feed has the due lapse recorded before it reads, so the offer is out of Y and its `delete` is
 * among the changes up to Y's `Feed-Cursor`.
 */
import { expect } from 'chai';
import { tsvLine, type FeedOffer } from '../../shared-schema/feeds/feed-offer.js';
import { streams } from '../../shared-schema/domain/streams.js';
import { startTestService, type TestService } from '../support/service.js';
import { HOUR } from './commerce-support.js';
import { offer, settle, shopperWorld } from './shopper-support.js';
import { allChanges, feed, newChannel, type Channel } from './feeds-support.js';

const T0 = Date.parse('2026-09-14T10:00:00.000Z');

describe('channel feeds: the full feed and the changes agree across the 48 h rule, before any scan', function () {
  let t: TestService;
  let channel: Channel;

  before(async () => {
    t = await startTestService({ FRESHNESS_SCAN_MS: String(HOUR) });
  });
  after(() => t?.close());

  /** The full feed's lines by id, and its cursor. */
  async function fullFeed(): Promise<{ lines: Map<string, string>; cursor: string }> {
    const r = await feed(t, '/feeds/offers.tsv', channel.token);
    expect(r.status, r.text).to.equal(200);
    const lines = new Map<string, string>();
    for (const line of r.text.split('\n').slice(1, -1)) lines.set(line.split('\t')[0], `${line}\n`);
    return { lines, cursor: r.headers['feed-cursor'] as string };
  }

  /** X's lines with every change after X up to Y's cursor applied (nothing is written after Y: none after it). */
  async function applied(x: { lines: Map<string, string>; cursor: string }, y: { cursor: string }) {
    expect((await allChanges(t, channel.token, y.cursor)).changes, 'no change after Y').to.deep.equal([]);
    const lines = new Map(x.lines);
    const { changes } = await allChanges(t, channel.token, x.cursor);
    for (const c of changes) {
      if (c.op === 'delete') lines.delete(c.id);
      else lines.set(c.offer.id, tsvLine(c.offer as unknown as FeedOffer));
    }
    return { lines, changes };
  }

  const sorted = (m: Map<string, string>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1));

  it('X + the changes up to Y = Y when Y is read 48 h after an offer’s last write, and the offer is out of Y', async () => {
    const { other } = await shopperWorld(t, T0);
    channel = await newChannel(t, 'Lapso');
    const writtenAt = t.clock.now().getTime();
    await offer(t, other, 'Loja-C', 'lapse-old', { title: 'Ventilador de mesa' });
    // Another offer written an hour later: still fresh at Y.
    t.clock.advance(HOUR);
    await offer(t, other, 'Loja-C', 'lapse-new', { title: 'Ventilador de teto' });
    await settle(t);
    const x = await fullFeed();
    const titles = () => [...x.lines.values()].map((l) => l.split('\t')[1]);
    expect(titles()).to.include.members(['Ventilador de mesa', 'Ventilador de teto']);
    const oldId = [...x.lines.entries()].find(([, l]) => l.split('\t')[1] === 'Ventilador de mesa')![0];

    // Exactly 48 h after the write: still fresh (stale only past 48 h), in Y, and nothing changed.
    t.clock.set(new Date(writtenAt + 48 * HOUR));
    const atEdge = await fullFeed();
    expect(atEdge.lines.has(oldId)).to.equal(true);
    const edge = await applied(x, atEdge);
    expect(edge.changes).to.deep.equal([]);
    expect(sorted(edge.lines)).to.deep.equal(sorted(atEdge.lines));

    // 1 ms later, moved in-process (the operator's clock move would scan at once) with the scan an hour away.
    t.clock.set(new Date(writtenAt + 48 * HOUR + 1));
    const y = await fullFeed();
    expect(y.lines.has(oldId), 'the offer 48 h old is out of the feed read at Y').to.equal(false);
    expect([...y.lines.values()].map((l) => l.split('\t')[1])).to.include('Ventilador de teto');
    const { lines, changes } = await applied(x, y);
    expect(changes).to.deep.equal([{ op: 'delete', id: oldId }]);
    expect(sorted(lines)).to.deep.equal(sorted(y.lines));
    // Recorded once, by the reactor's own decision, though the feed was read again after it.
    await fullFeed();
    const history = await t.service.events.readStream(
      streams.product({ partnerId: other.partnerId, env: 'live' }, 'lapse-old'),
    );
    expect(history.filter((e) => e.type === 'ProductFreshnessLapsed')).to.have.length(1);
  });
});
