/** The operator's partner and key commands (the admin API and `ops` call these). */
import { streams } from '../../shared-schema/domain/streams.js';
import type { Environment } from '../../shared-schema/domain/streams.js';
import { DEFAULT_SCOPES, type PartnerType, type Scope } from '../../shared-schema/events/partner.js';
import { newApiKey, newKeyId, newPartnerId, sha256Hex } from '../../shared-schema/domain/ids.js';
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import { partnerDecider } from '../deciders/partner.js';
import type { CommandDeps } from './context.js';

export async function createPartner(deps: CommandDeps, name: string, partnerType: PartnerType, meta: EventMetadata) {
  const partnerId = newPartnerId();
  const command = { type: 'CreatePartner', partnerId, name, partnerType, now: meta.recorded_at } as const;
  const handled = await deps.repo.handle(streams.partner(partnerId), partnerDecider, command, meta);
  return {
    partner: { partner_id: partnerId, name, partner_type: partnerType, created_at: meta.recorded_at },
    position: handled.position,
  };
}

/** Issues a key; the key is returned only here, and only its hash is stored. Without `scopes`: DEFAULT_SCOPES. */
export async function issueKey(
  deps: CommandDeps,
  partnerId: string,
  environment: Environment,
  scopes: Scope[] | undefined,
  meta: EventMetadata,
) {
  const apiKey = newApiKey(environment);
  const keyId = newKeyId();
  const granted = scopes ?? [...DEFAULT_SCOPES];
  const command = {
    type: 'IssueKey',
    keyId,
    keyHash: sha256Hex(apiKey),
    environment,
    scopes: granted,
    now: meta.recorded_at,
  } as const;
  const handled = await deps.repo.handle(streams.partner(partnerId), partnerDecider, command, meta);
  return {
    key: { key_id: keyId, api_key: apiKey, partner_id: partnerId, environment, scopes: granted },
    position: handled.position,
  };
}

export async function revokeKey(deps: CommandDeps, partnerId: string, keyId: string, meta: EventMetadata) {
  const handled = await deps.repo.handle(
    streams.partner(partnerId),
    partnerDecider,
    { type: 'RevokeKey', keyId, now: meta.recorded_at },
    meta,
  );
  return { position: handled.position };
}
