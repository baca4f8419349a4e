/** 401 unless `Authorization: Bearer <key>` names a key that is not revoked; sets the caller. Public paths pass. */
import { unauthorized } from '../../shared-schema/contract/problems.js';
import { API_PREFIX, isPublicPath } from '../../shared-schema/http/routes.js';
import { sha256Hex } from '../../shared-schema/domain/ids.js';
import type { KeyRecord } from '../../shared-schema/read-models/partners.js';
import type { DoorContext, DoorMiddleware, Next } from '../../shared-schema/http/context.js';

/** Finds a key by the hash of the key sent: only a hash is ever looked up, the key itself is stored nowhere. */
export type KeyLookup = (keyHash: string) => Promise<KeyRecord | null>;

const BEARER = /^Bearer ([A-Za-z0-9_]{1,200})$/;

export function authenticate(lookup: KeyLookup): DoorMiddleware {
  return async (ctx: DoorContext, next: Next) => {
    const path = ctx.path.slice(API_PREFIX.length);
    if (isPublicPath(path) && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      await next();
      return;
    }
    const match = BEARER.exec(ctx.get('Authorization'));
    if (!match) throw unauthorized();
    const record = await lookup(sha256Hex(match[1]));
    if (!record || record.revoked) throw unauthorized();
    ctx.state.caller = {
      keyId: record.key_id,
      partnerId: record.partner_id,
      partnerName: record.partner_name,
      partnerType: record.partner_type,
      env: record.environment,
      scopes: record.scopes,
    };
    await next();
  };
}
