/** Clicks as `GET /clicks` lists them (the model: shared-schema/read-models/clicks.ts). */
import { asUnion } from '../../shared-schema/ports/event-store.js';
import type { ClickEvent } from '../../shared-schema/events/click.js';
import { CLICKS, CLICK_COLLECTIONS, clickDocId, type ClickDoc } from '../../shared-schema/read-models/clicks.js';
import { alreadyApplied, streamScope, type Projector } from '../projector.js';

export const clicksProjector: Projector = {
  name: 'clicks',
  collections: CLICK_COLLECTIONS,
  categories: ['click'],
  async apply(recorded, tx) {
    const e = asUnion<ClickEvent>(recorded);
    if (e.type !== 'ClickRecorded') return;
    const { env, partnerId } = streamScope(recorded.stream);
    const id = clickDocId({ env, partnerId }, e.data.click_id);
    if (alreadyApplied(await tx.get<ClickDoc>(CLICKS, id), recorded)) return;
    const doc: ClickDoc = {
      _id: id,
      partner_id: partnerId,
      env,
      click_id: e.data.click_id,
      store_id: e.data.store_id,
      sku: e.data.sku,
      price_cents: e.data.price_cents,
      occurred_at: e.data.occurred_at,
      channel_id: e.data.channel_id ?? null,
      position: recorded.position,
    };
    await tx.put(CLICKS, doc);
  },
};
