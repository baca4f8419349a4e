/**
 * The partner portal's sessions (PORTAL.md "The portal"): the one state of its own the query side keeps, written by
 * the query door at sign-in and read by every query process (docs/adr/0081-portal-door-and-sessions.md). A document
 * is keyed by the hash of the session id the cookie carries (the id itself is stored nowhere), holds the hash of the
 * key it was opened with (to end it when the key is revoked, never the key) and expires 12 h after sign-in.
 */
import type { CollectionSpec } from '../ports/read-store.js';

export const PORTAL_SESSIONS = 'portal_sessions';

/** A session lasts this long after sign-in, by the service clock. */
export const SESSION_MS = 12 * 60 * 60 * 1000;

export type PortalSessionDoc = {
  _id: string;
  key_hash: string;
  signed_in_at: string;
  /** `signed_in_at` + SESSION_MS; the read store may remove the document after it. */
  expires_at: string;
};

export const PORTAL_SESSION_COLLECTIONS: readonly CollectionSpec[] = [
  { name: PORTAL_SESSIONS, indexes: [], expires: true },
];
