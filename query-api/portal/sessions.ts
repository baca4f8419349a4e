/**
 * Sessions of the partner portal on the read store (shared by every query process): opened with a key, found by the
 * opaque id of the cookie, ended by `POST /portal/sair`, by the revocation of the key, or 12 h after sign-in by the
 * service clock. A session sees exactly what its key sees: the key is read again on every page.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../shared-schema/domain/ids.js';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import { KEYS, type KeyDoc, type KeyRecord } from '../../shared-schema/read-models/partners.js';
import { PORTAL_SESSIONS, SESSION_MS, type PortalSessionDoc } from '../../shared-schema/read-models/portal-sessions.js';

/** What a key looks like (the API's bearer pattern): anything else is refused without a lookup. */
const KEY_SHAPE = /^[A-Za-z0-9_]{1,200}$/;

/** The key's record when it names a key that is not revoked. */
export async function liveKey(reads: ReadStore, keyHash: string): Promise<KeyRecord | null> {
  const record = await reads.get<KeyDoc>(KEYS, keyHash);
  return record && !record.revoked ? record : null;
}

export class PortalSessions {
  constructor(
    private readonly reads: ReadStore,
    private readonly clock: Clock,
  ) {}

  /** A new session for a valid key: its opaque id (for the cookie), or null for a wrong, revoked or malformed key. */
  async open(apiKey: string): Promise<string | null> {
    if (!KEY_SHAPE.test(apiKey)) return null;
    const keyHash = sha256Hex(apiKey);
    if (!(await liveKey(this.reads, keyHash))) return null;
    const id = randomBytes(32).toString('base64url');
    const now = this.clock.now().getTime();
    const doc: PortalSessionDoc = {
      _id: sha256Hex(id),
      key_hash: keyHash,
      signed_in_at: new Date(now).toISOString(),
      expires_at: new Date(now + SESSION_MS).toISOString(),
    };
    if (!(await this.reads.insertIfAbsent(PORTAL_SESSIONS, doc))) throw new Error('session id collision');
    return id;
  }

  /** The key of a live session, or null (no such session, past its 12 h, or its key revoked: then it is ended). */
  async find(id: string | undefined): Promise<KeyRecord | null> {
    if (!id || id.length > 100) return null;
    const docId = sha256Hex(id);
    const doc = await this.reads.get<PortalSessionDoc>(PORTAL_SESSIONS, docId);
    if (!doc) return null;
    const key =
      Date.parse(doc.expires_at) > this.clock.now().getTime() ? await liveKey(this.reads, doc.key_hash) : null;
    if (!key) await this.reads.remove(PORTAL_SESSIONS, docId);
    return key;
  }

  async end(id: string | undefined): Promise<void> {
    if (id && id.length <= 100) await this.reads.remove(PORTAL_SESSIONS, sha256Hex(id));
  }
}
