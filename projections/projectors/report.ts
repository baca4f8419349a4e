/**
 * The commission report's pre-aggregated figures, so that a report never scans every order of its window:
 *
 * - `report_items`: one document per click (at its `occurred_at`) and per order (at its `paid_at`, with the
 *   figures of its current state), for the exact edges of a window;
 * - `report_hours` / `report_days`: per partner, environment, store and UTC hour / day, the sum of the items of
 *   that period.
 *
 * A report adds the day buckets of the whole days inside its window, the hour buckets of the whole hours of the
 * partial days, and the items of the partial hours at both ends (shared-schema/read-models/report.ts coveringRanges). When an
 * order's balance changes, its buckets lose the order's old figures and gain the new ones (paid_at, hence the
 * buckets, never changes). Clicks only ever add one. Every write of one event happens in the runner's unit of work,
 * and the item's `position` makes a replayed event change nothing.
 */
import { asUnion } from '../../shared-schema/ports/event-store.js';
import type { ReadTx } from '../../shared-schema/ports/read-store.js';
import type { ClickEvent } from '../../shared-schema/events/click.js';
import { APPLIED_ORDER_EVENTS, type OrderEvent } from '../../shared-schema/events/order.js';
import {
  clickFigures,
  combine,
  figuresOf,
  LEVELS,
  periodOf,
  orderFigures,
  storedFields,
  zeroFigures,
  REPORT,
  REPORT_COLLECTIONS,
  reportBucketId,
  reportClickId,
  reportOrderId,
  type ReportBucketDoc,
  type ReportFigures,
  type ReportItemDoc,
} from '../../shared-schema/read-models/report.js';
import type { Environment } from '../../shared-schema/domain/streams.js';
import { alreadyApplied, streamScope, type Projector } from '../projector.js';

type Owner = { partner_id: string; env: Environment; store_id: string };

/** Adds `sign × delta` to the hour and the day bucket holding `at`. */
async function addToBuckets(tx: ReadTx, owner: Owner, at: string, delta: ReportFigures): Promise<void> {
  for (const level of [1, 2] as const) {
    const { collection, field } = LEVELS[level];
    const period = periodOf(level, at);
    const id = reportBucketId({ env: owner.env, partnerId: owner.partner_id }, owner.store_id, period);
    const current = await tx.get<ReportBucketDoc>(collection, id);
    const next = combine(current ? figuresOf(current) : zeroFigures(), delta);
    await tx.put(collection, { _id: id, ...owner, [field]: period, ...storedFields(next) });
  }
}

export const reportProjector: Projector = {
  name: REPORT.projection,
  collections: REPORT_COLLECTIONS,
  categories: ['click', 'order'],
  async apply(recorded, tx) {
    const scope = streamScope(recorded.stream);
    const { env, partnerId } = scope;
    if (recorded.stream.startsWith('click-')) {
      const e = asUnion<ClickEvent>(recorded);
      if (e.type !== 'ClickRecorded') return;
      const id = reportClickId(scope, e.data.click_id);
      if (await tx.get(REPORT.items, id)) return; // a click is recorded once
      const base = { partner_id: partnerId, env, store_id: e.data.store_id };
      const figures = clickFigures();
      const item: ReportItemDoc = {
        _id: id,
        ...base,
        kind: 'click',
        at: e.data.occurred_at,
        ...storedFields(figures),
        position: recorded.position,
      };
      await tx.put(REPORT.items, item);
      await addToBuckets(tx, base, item.at, figures);
      return;
    }
    const e = asUnion<OrderEvent>(recorded);
    if (!APPLIED_ORDER_EVENTS.includes(e.type)) return;
    const order = e.data.order;
    const id = reportOrderId(scope, order.store_id, order.order_id);
    const current = await tx.get<ReportItemDoc>(REPORT.items, id);
    if (alreadyApplied(current, recorded)) return;
    const base = { partner_id: partnerId, env, store_id: order.store_id };
    const before = current ? figuresOf(current) : zeroFigures();
    const after = orderFigures(order);
    const item: ReportItemDoc = {
      _id: id,
      ...base,
      kind: 'order',
      at: order.paid_at,
      ...storedFields(after),
      position: recorded.position,
    };
    await tx.put(REPORT.items, item);
    await addToBuckets(tx, base, item.at, combine(after, before, -1));
  },
};
