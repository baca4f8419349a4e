/**
 * Movements through the projection runner: one per event applied to an order's balance (repeats and stale events
 * are none), deltas as the order's figures after minus before (the decider's own view), running balances per
 * partner and per store, exact beyond 2^53, and a replay of every event changes nothing; each movement carries its
 * CSV line, and the closing's CSV is byte for byte what it was when the lines were written at the download.
 */
import { expect } from 'chai';
import { streams } from '../../shared-schema/domain/streams.js';
import { orderDecider } from '../../command-api/deciders/order.js';
import { ledgerProjector } from '../../projections/projectors/ledger.js';
import { CSV_HEADER, LEDGER, csvLine, type MovementDoc } from '../../shared-schema/read-models/ledger.js';
import { closingCsv, movementKey, movementsIn, periodBounds, periodOf } from '../../query-api/ledger.js';
import type { Scalar } from '../../shared-schema/ports/read-store.js';
import { CLICK, PAID_AT, RULES, at, cancel, command, paid, refund, tenant } from '../support/order-fixtures.js';
import { recorded } from '../support/decider-given.js';
import { ProjectorSpec, type GivenEvent } from '../support/projector-spec.js';
import type { RecordConversion } from '../../command-api/deciders/order.js';

describe('ledger projection (movements)', () => {
  let spec: ProjectorSpec;
  const BIG = Number.MAX_SAFE_INTEGER; // a fixed commission of 2^53 − 1 per unit
  const order = (storeId: string, orderId: string, commands: RecordConversion[]): GivenEvent[] =>
    recorded(orderDecider, ...commands).map((e, i) => ({
      stream: streams.order(tenant, storeId, orderId),
      ...e,
      metadata: { recorded_at: at(PAID_AT, i * 1000) },
    }));
  const movements = async () =>
    (await spec.reads.find<MovementDoc>(LEDGER.movements, { orderBy: [{ field: 'position' }] })).map((m) => ({
      event: m.event_id,
      store: m.store_id,
      type: m.type,
      net: m.net_delta,
      known: m.known_delta,
      expected: m.expected_delta,
      balances: [m.net_balance, m.known_balance, m.store_net_balance, m.store_known_balance],
    }));

  before(async () => {
    spec = await ProjectorSpec.open(ledgerProjector);
    const o1 = (input: ReturnType<typeof paid>) => command({ ...input, order_id: 'order-1' });
    await spec.given(
      ...order('store-1', 'order-1', [
        o1(paid()),
        o1(paid({ event_id: 'ev-again' })), // a second paid with the same content: ConversionRepeated
        o1(refund('ev-r', at(PAID_AT, 1000), { 'sku-a': 500 })),
        o1(refund('ev-old', at(PAID_AT, 500), { 'sku-a': 900 })), // older than the last applied: stale
        o1(cancel('ev-c', at(PAID_AT, 2000))),
      ]),
      ...order('store-2', 'order-2', [
        command(
          { ...paid({ event_id: 'ev-big', store_id: 'store-2', order_id: 'order-2' }) },
          {
            click: { ...CLICK, store_id: 'store-2' },
            rules: {
              ...RULES,
              'sku-b': { commission: { type: 'fixed', amount_cents: BIG }, commission_source: 'store' },
            },
          },
        ),
      ]),
    );
  });
  after(async () => {
    await spec.close();
  });

  it('books one movement per applied event with the signed change of the order', async () => {
    // paid: gross 5300; known 10 % of 2000 + 500 fixed = 700; sku-c has no rule, so the expectation is unknown.
    // refund of 500 on sku-a: known 150 + 500. Cancel: everything back to 0, the expectation known again (0).
    const big = BigInt(BIG) + 200n;
    expect(await movements()).to.deep.equal([
      {
        event: 'ev-paid',
        store: 'store-1',
        type: 'paid',
        net: '5300',
        known: '700',
        expected: null,
        balances: ['5300', '700', '5300', '700'],
      },
      {
        event: 'ev-r',
        store: 'store-1',
        type: 'refunded',
        net: '-500',
        known: '-50',
        expected: null,
        balances: ['4800', '650', '4800', '650'],
      },
      {
        event: 'ev-c',
        store: 'store-1',
        type: 'cancelled',
        net: '-4800',
        known: '-650',
        expected: null,
        balances: ['0', '0', '0', '0'],
      },
      {
        event: 'ev-big',
        store: 'store-2',
        type: 'paid',
        net: '5300',
        known: big.toString(),
        expected: null,
        balances: ['5300', big.toString(), '5300', big.toString()],
      },
    ]);
  });

  it('never books a movement before the previous one of its scope (a log whose times disagree with its order)', async () => {
    const other = { partnerId: 'pt_OTHER', env: 'test' as const };
    const events = recorded(orderDecider, command(paid({ event_id: 'x-paid', order_id: 'x' }), { click: CLICK }));
    const later = recorded(orderDecider, command(paid({ event_id: 'y-paid', order_id: 'y' })));
    const at = ['2026-03-01T12:00:05.000Z', '2026-03-01T12:00:01.000Z']; // the second stamped before the first
    await spec.reads.transact(async (tx) => {
      for (const [i, e] of [events[0], later[0]].entries())
        await ledgerProjector.apply(
          {
            id: `e${i}`,
            stream: streams.order(other, 'store-1', i === 0 ? 'x' : 'y'),
            revision: 0,
            position: 1_000_000 + i,
            type: e.type,
            data: e.data,
            metadata: { recorded_at: at[i] },
          },
          tx,
        );
    });
    const mine = (await spec.reads.find<MovementDoc>(LEDGER.movements, { where: { partner_id: other.partnerId } }))
      .sort((a, b) => a.position - b.position)
      .map((m) => [m.event_id, m.recorded_at, m.net_balance]);
    expect(mine).to.deep.equal([
      ['x-paid', at[0], '5300'],
      ['y-paid', at[0], '10600'],
    ]);
  });

  it('changes nothing when every event is applied again', async () => {
    const before = await spec.documents(LEDGER.movements);
    const state = await spec.documents(LEDGER.state);
    await spec.replayAll();
    expect(await spec.documents(LEDGER.movements)).to.deep.equal(before);
    expect(await spec.documents(LEDGER.state)).to.deep.equal(state);
  });

  describe("the closing's CSV from the lines written at projection", () => {
    const period = periodOf(PAID_AT);
    const text = async (page?: number) => {
      let out = '';
      for await (const chunk of closingCsv(spec.reads, tenant, period, page)) out += chunk;
      return out;
    };
    /** The CSV as the download wrote it before movements carried their line: every line from the fields. */
    const fromFields = async () => {
      let out = CSV_HEADER + '\r\n';
      let after: Scalar[] | undefined;
      for (;;) {
        const rows = await movementsIn(spec.reads, { tenant }, periodBounds(period), 2, after);
        for (const m of rows) out += csvLine({ ...m, csv: undefined });
        if (rows.length < 2) return out;
        after = movementKey(rows[rows.length - 1]);
      }
    };
    const withoutLines = async (keep: (m: MovementDoc, i: number) => boolean) => {
      const docs = await spec.documents<MovementDoc>(LEDGER.movements);
      await spec.reads.transact(async (tx) => {
        for (const [i, m] of docs.entries()) {
          if (keep(m, i)) continue;
          const { csv: _line, ...fields } = m;
          await tx.put(LEDGER.movements, fields);
        }
      });
    };

    it("stores each movement's line as written from its fields, and the CSV is the same bytes either way", async () => {
      const docs = await spec.documents<MovementDoc>(LEDGER.movements);
      expect(docs.length).to.be.greaterThan(3);
      for (const m of docs) expect(m.csv, m.event_id).to.equal(csvLine({ ...m, csv: undefined }));
      const expected = await fromFields();
      expect(expected.split('\r\n')).to.have.length(6); // header, four movements of the tenant, the final ''
      for (const page of [undefined, 1, 2, 3, 4]) expect(await text(page), `pages of ${page}`).to.equal(expected);
    });

    it('writes the same bytes for movements projected before they carried their line (all, or some of a page)', async () => {
      const expected = await fromFields();
      await withoutLines((_m, i) => i % 2 === 0);
      for (const page of [undefined, 1, 2, 3]) expect(await text(page), `mixed, pages of ${page}`).to.equal(expected);
      await withoutLines(() => false);
      expect((await spec.documents<MovementDoc>(LEDGER.movements)).every((m) => m.csv === undefined)).to.equal(true);
      for (const page of [undefined, 1, 2]) expect(await text(page), `none, pages of ${page}`).to.equal(expected);
    });
  });
});
