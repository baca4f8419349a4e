/** Partners and their keys (the model: shared-schema/read-models/partners.ts). */
import { asUnion } from '../../shared-schema/ports/event-store.js';
import type { PartnerEvent } from '../../shared-schema/events/partner.js';
import {
  KEYS,
  PARTNERS,
  PARTNER_COLLECTIONS,
  type KeyDoc,
  type PartnerDoc,
} from '../../shared-schema/read-models/partners.js';
import type { Projector } from '../projector.js';

export const partnersProjector: Projector = {
  name: PARTNERS,
  collections: PARTNER_COLLECTIONS,
  categories: ['partner'],
  async apply(recorded, tx) {
    const e = asUnion<PartnerEvent>(recorded);
    switch (e.type) {
      case 'PartnerCreated':
        await tx.put(PARTNERS, { _id: e.data.partner_id, ...e.data, activated_at: null } satisfies PartnerDoc);
        return;
      case 'KeyIssued': {
        const partnerId = recorded.stream.slice('partner-'.length);
        const partner = await tx.get<PartnerDoc>(PARTNERS, partnerId);
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
        await tx.put(KEYS, doc);
        if (!partner.activated_at) await tx.put(PARTNERS, { ...partner, activated_at: e.data.issued_at });
        return;
      }
      case 'KeyRevoked': {
        const [key] = await tx.find<KeyDoc>(KEYS, { where: { key_id: e.data.key_id }, limit: 1 });
        if (key) await tx.put(KEYS, { ...key, revoked: true, revoked_at: e.data.revoked_at });
        return;
      }
      case 'PartnerConverted': {
        const partnerId = recorded.stream.slice('partner-'.length);
        const partner = await tx.get<PartnerDoc>(PARTNERS, partnerId);
        if (partner) await tx.put(PARTNERS, { ...partner, partner_type: e.data.partner_type });
        for (const key of await tx.find<KeyDoc>(KEYS, { where: { partner_id: partnerId } })) {
          await tx.put(KEYS, { ...key, partner_type: e.data.partner_type });
        }
        return;
      }
    }
  },
};
