/** Partners and their keys, looked up by key hash on every call (the key itself is never stored). */
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { ReadTx } from '../../shared-schema/ports/read-store.js';
import type { PartnerEvent } from '../../shared-schema/events/partner.js';
import type { KeyRecord } from '../../shared-schema/http/door.js';
import type { Projector } from '../projector.js';

export type KeyDoc = KeyRecord & { _id: string; issued_at: string; revoked_at?: string };
export type PartnerDoc = { _id: string; partner_id: string; name: string; partner_type: 'hub' | 'store'; created_at: string; activated_at: string | null };

export const partnersProjector: Projector = {
  name: 'partners',
  collections: [
    { name: 'partners', indexes: [] },
    { name: 'keys', indexes: [['partner_id'], ['key_id']] },
  ],
  categories: ['partner'],
  async apply(recorded: RecordedEvent, tx: ReadTx) {
    const e = { type: recorded.type, data: recorded.data } as PartnerEvent;
    switch (e.type) {
      case 'PartnerCreated':
        await tx.put('partners', { _id: e.data.partner_id, ...e.data, activated_at: null } satisfies PartnerDoc);
        return;
      case 'KeyIssued': {
        const partnerId = recorded.stream.slice('partner-'.length);
        const partner = await tx.get<PartnerDoc>('partners', partnerId);
        if (!partner) return;
        const doc: KeyDoc = {
          _id: e.data.key_hash,
          key_id: e.data.key_id,
          partner_id: partnerId,
          partner_name: partner.name,
          partner_type: partner.partner_type,
          environment: e.data.environment,
          scopes: e.data.scopes,
          revoked: false,
          issued_at: e.data.issued_at,
        };
        await tx.put('keys', doc);
        if (!partner.activated_at) await tx.put('partners', { ...partner, activated_at: e.data.issued_at });
        return;
      }
      case 'KeyRevoked': {
        const [key] = await tx.find<KeyDoc>('keys', { where: { key_id: e.data.key_id }, limit: 1 });
        if (key) await tx.put('keys', { ...key, revoked: true, revoked_at: e.data.revoked_at });
        return;
      }
      case 'PartnerConverted': {
        const partnerId = recorded.stream.slice('partner-'.length);
        const partner = await tx.get<PartnerDoc>('partners', partnerId);
        if (partner) await tx.put('partners', { ...partner, partner_type: e.data.partner_type });
        for (const key of await tx.find<KeyDoc>('keys', { where: { partner_id: partnerId } })) {
          await tx.put('keys', { ...key, partner_type: e.data.partner_type });
        }
        return;
      }
    }
  },
};
