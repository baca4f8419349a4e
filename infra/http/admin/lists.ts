/**
 * The operator's lists (admin API, behind the admin token), read from the partners and stores read models through
 * the read-store port:
 *
 * - GET /admin/v1/partners?limit=&cursor=                          partners, oldest first, with their key counts and
 *                                                                  their stores by status per environment
 * - GET /admin/v1/stores?status=&partner_id=&env=&limit=&cursor=   stores across partners (e.g. status=pending_review:
 *                                                                  the ones awaiting approval), by partner, env, store
 * - GET /admin/v1/domains/pending?partner_id=&env=&limit=&cursor=  declared domains not yet approved, one per line
 *
 * Pages are keyset pages: `next_cursor` (null on the last page) is the base64url JSON of the last row's sort values.
 */
import type Router from '@koa/router';
import { fieldError, invalid } from '../../../shared-schema/contract/problems.js';
import { ENVIRONMENTS, type Environment } from '../../../shared-schema/domain/streams.js';
import type { ReadView, Where } from '../../../shared-schema/ports/read-store.js';
import type { StoreStatus } from '../../../shared-schema/events/store.js';
import { KEYS, PARTNERS, type PartnerDoc } from '../../../shared-schema/read-models/partners.js';
import { STORES, type StoreDoc } from '../../../shared-schema/read-models/stores.js';

const STATUSES: readonly StoreStatus[] = ['pending_review', 'active', 'suspended'];

type Query = Record<string, string | string[] | undefined>;

function one(q: Query, name: string): string | undefined {
  const raw = q[name];
  if (Array.isArray(raw)) throw invalid([fieldError(name, 'repeated', `${name}: give it once.`)]);
  return raw === undefined || raw === '' ? undefined : raw;
}

function envOf(q: Query): Environment | undefined {
  const raw = one(q, 'env');
  if (raw !== undefined && !ENVIRONMENTS.includes(raw as Environment))
    throw invalid([fieldError('env', 'enum', 'env: live or test.')]);
  return raw as Environment | undefined;
}

function limitOf(q: Query, fallback: number, max: number): number {
  const raw = one(q, 'limit');
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isInteger(n) || n < 1 || n > max)
    throw invalid([fieldError('limit', 'range', `limit: an integer from 1 to ${max}.`)]);
  return n;
}

const encodeCursor = (values: readonly string[]): string =>
  Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');

/** The sort values of a cursor: `count` strings, or 422. */
function cursorOf(q: Query, count: number): string[] | undefined {
  const raw = one(q, 'cursor');
  if (raw === undefined) return undefined;
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown;
  } catch {
    values = undefined;
  }
  if (!Array.isArray(values) || values.length !== count || !values.every((v) => typeof v === 'string')) {
    throw invalid([fieldError('cursor', 'invalid', 'The cursor is not valid.')]);
  }
  return values;
}

type StatusCounts = Record<StoreStatus, number> & { total: number };

async function storeCounts(reads: ReadView, partnerId: string, env: Environment): Promise<StatusCounts> {
  const counts = { total: 0 } as StatusCounts;
  for (const status of STATUSES) {
    counts[status] = await reads.count(STORES, { partner_id: partnerId, env, status });
    counts.total += counts[status];
  }
  return counts;
}

/** The store filters shared by the stores and domains lists (`partner_id`, `env`); sorted on the stores index. */
function storeWhere(q: Query): Where {
  const where: Where = {};
  const partnerId = one(q, 'partner_id');
  const env = envOf(q);
  if (partnerId !== undefined) where.partner_id = partnerId;
  if (env !== undefined) where.env = env;
  return where;
}
const STORE_ORDER = [{ field: 'partner_id' }, { field: 'env' }, { field: 'store_id' }] as const;
/** The keyset values of a store row: its sort values and `_id` (the tie-breaker every query ends with). */
const storeKey = (s: StoreDoc): string[] => [s.partner_id, s.env, s.store_id, s._id];

/** Partner names of one page, read once per partner. */
function partnerNames(reads: ReadView): (partnerId: string) => Promise<string | null> {
  const known = new Map<string, string | null>();
  return async (partnerId) => {
    if (!known.has(partnerId)) known.set(partnerId, (await reads.get<PartnerDoc>(PARTNERS, partnerId))?.name ?? null);
    return known.get(partnerId)!;
  };
}

export function adminListRoutes(router: Router, reads: ReadView): void {
  router.get('/partners', async (ctx) => {
    const q = ctx.query;
    const limit = limitOf(q, 100, 500);
    const after = cursorOf(q, 2);
    const rows = await reads.find<PartnerDoc>(PARTNERS, {
      orderBy: [{ field: 'created_at' }],
      ...(after ? { after } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const partners = [];
    for (const p of page) {
      const active = await reads.count(KEYS, { partner_id: p.partner_id, revoked: false });
      const all = await reads.count(KEYS, { partner_id: p.partner_id });
      partners.push({
        partner_id: p.partner_id,
        name: p.name,
        partner_type: p.partner_type,
        created_at: p.created_at,
        activated_at: p.activated_at,
        keys: { active, revoked: all - active },
        stores: {
          live: await storeCounts(reads, p.partner_id, 'live'),
          test: await storeCounts(reads, p.partner_id, 'test'),
        },
      });
    }
    const last = page[page.length - 1];
    ctx.body = {
      partners,
      next_cursor: rows.length > limit && last ? encodeCursor([last.created_at, last._id]) : null,
    };
  });

  router.get('/stores', async (ctx) => {
    const q = ctx.query;
    const where = storeWhere(q);
    const status = one(q, 'status');
    if (status !== undefined) {
      if (!STATUSES.includes(status as StoreStatus))
        throw invalid([fieldError('status', 'enum', `status: one of ${STATUSES.join(', ')}.`)]);
      where.status = status;
    }
    const limit = limitOf(q, 100, 500);
    const after = cursorOf(q, 4);
    const rows = await reads.find<StoreDoc>(STORES, {
      where,
      orderBy: STORE_ORDER,
      ...(after ? { after } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const nameOf = partnerNames(reads);
    const stores = [];
    for (const s of page) {
      stores.push({
        partner_id: s.partner_id,
        partner_name: await nameOf(s.partner_id),
        environment: s.env,
        store_id: s.store_id,
        name: s.input.name,
        status: s.status,
        domains: s.input.domains,
        domains_approved: s.domains_approved,
      });
    }
    const last = page[page.length - 1];
    ctx.body = { stores, next_cursor: rows.length > limit && last ? encodeCursor(storeKey(last)) : null };
  });

  /**
   * Scans the stores (in the stores index order, pages of 500) and keeps their declared domains not approved. The
   * limit counts domains; a store's domains are never split across pages (a page may hold a few more than limit).
   */
  router.get('/domains/pending', async (ctx) => {
    const q = ctx.query;
    const where = storeWhere(q);
    const limit = limitOf(q, 500, 1000);
    let after: string[] | undefined = cursorOf(q, 4);
    const nameOf = partnerNames(reads);
    const domains = [];
    let next: string | null = null;
    scan: for (;;) {
      const rows: StoreDoc[] = await reads.find<StoreDoc>(STORES, {
        where,
        orderBy: STORE_ORDER,
        ...(after ? { after } : {}),
        limit: 500,
      });
      for (const s of rows) {
        after = storeKey(s);
        const pending = s.input.domains.filter((d) => !s.domains_approved.includes(d));
        if (pending.length === 0) continue;
        if (domains.length >= limit) {
          next = encodeCursor(lastKey(domains));
          break scan;
        }
        const partnerName = await nameOf(s.partner_id);
        for (const domain of pending) {
          domains.push({
            partner_id: s.partner_id,
            partner_name: partnerName,
            environment: s.env,
            store_id: s.store_id,
            store_status: s.status,
            domain,
            key: storeKey(s),
          });
        }
      }
      if (rows.length < 500) break;
    }
    ctx.body = { domains: domains.map(({ key: _key, ...d }) => d), next_cursor: next };
  });
}

/** The keyset values of the store of the last domain listed. */
function lastKey(domains: readonly { key: string[] }[]): string[] {
  return domains[domains.length - 1].key;
}
