/**
 * The cover-check port: fetch a partner's cover photo and judge it (HTTPS on one of `allowedHosts`, JPEG/PNG/WebP,
 * at least 500 px on the shorter side). infra/adapters/cover/cover-fetcher.ts implements it; the write side's cover-check
 * reactor calls it. It never throws for a bad remote: every failure is a reason (`image_unreachable`, `image_type`,
 * `image_too_small`, field `image_urls[0]`).
 */
import type { RejectionReason } from '../events/product.js';

export interface CoverVerdict {
  ok: boolean;
  reasons: RejectionReason[];
}

export type CoverChecker = (url: string, allowedHosts: readonly string[]) => Promise<CoverVerdict>;
