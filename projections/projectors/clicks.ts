/** Clicks as `GET /clicks` lists them: one document per click, ordered by occurred_at, store_id, click_id. */
import type { ClickEvent } from '../../shared-schema/events/click.js';
import { scopedId, streamScope, type Projector } from '../projector.js';

export type ClickDoc = {
  _id: string;
  partner_id: string;
  env: 'live' | 'test';
  click_id: string;
  store_id: string;
  sku: string;
  price_cents: number | null;
  occurred_at: string;
  position: number;
};

export const CLICKS = 'clicks';

export const clicksProjector: Projector = {
  name: 'clicks',
  collections: [
    {
      name: CLICKS,
      indexes: [
        ['partner_id', 'env', 'occurred_at', 'store_id'],
        ['partner_id', 'env', 'store_id', 'occurred_at'],
      ],
    },
  ],
  categories: ['click'],
  async apply(recorded, tx) {
    const e = { type: recorded.type, data: recorded.data } as ClickEvent;
    if (e.type !== 'ClickRecorded') return;
    const { env, partnerId } = streamScope(recorded.stream);
    const id = scopedId(env, partnerId, e.data.click_id);
    const current = await tx.get<ClickDoc>(CLICKS, id);
    if (current && current.position >= recorded.position) return;
    const doc: ClickDoc = {
      _id: id,
      partner_id: partnerId,
      env,
      click_id: e.data.click_id,
      store_id: e.data.store_id,
      sku: e.data.sku,
      price_cents: e.data.price_cents,
      occurred_at: e.data.occurred_at,
      position: recorded.position,
    };
    await tx.put(CLICKS, doc);
  },
};
