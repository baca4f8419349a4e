/**
 * Signed page cursors over HTTP: a cursor is `<payload>.<HMAC>` with the deployment's secret
 * (CURSOR_SECRET, else DATA_DIR/cursor-secret), bound to partner, environment, list and filters. Forged cursors —
 * the old format with its unkeyed hash recomputed, the new format with an unkeyed hash, object values such as
 * {"$ne":null} — answer 422 `cursor` `invalid` on every paged list; so does a cursor of one filter set sent with
 * another, and one signed with a secret the service no longer has. Valid cursors page, across a restart too.
 * Runs embedded and, unchanged, in the multi-process topology (the query-api replicas share DATA_DIR).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { CursorSecret, encodeCursor } from '../../shared-schema/http/pagination.js';
import type { Scalar } from '../../shared-schema/ports/read-store.js';
import { startTestService, type Answer, type Partner, type TestService } from '../support/service.js';
import { HOUR, codes, iso, paidBody, putProduct, registerStore, sandboxClick } from './commerce-support.js';

type Page = { data: Record<string, unknown>[]; next_cursor: string | null };

const LISTS = ['/stores', '/products', '/clicks', '/conversions'] as const;
const at = (list: string, cursor: string, query = ''): string =>
  `${list}?${query}${query ? '&' : ''}cursor=${encodeURIComponent(cursor)}`;
const key = (list: string, row: Record<string, unknown>): string =>
  list === '/stores'
    ? String(row.store_id)
    : list === '/products'
      ? String(row.sku)
      : list === '/clicks'
        ? String(row.click_id)
        : `${String(row.store_id)}/${String(row.order_id)}`;

/** What a client could make before cursors were signed: base64url of `{a, t}`, `t` an unkeyed hash it can recompute. */
function unkeyedOldCursor(partnerId: string, env: string, list: string, values: unknown[]): string {
  const body = JSON.stringify(values);
  const t = createHash('sha256')
    .update(`${env}\u0000${partnerId}\u0000${list}\u0000${body}`)
    .digest('base64url')
    .slice(0, 16);
  return Buffer.from(JSON.stringify({ a: values, t })).toString('base64url');
}

/** The new format with an unkeyed hash in place of the HMAC. */
function unkeyedNewCursor(values: unknown[]): string {
  const payload = Buffer.from(JSON.stringify(values)).toString('base64url');
  return `${payload}.${createHash('sha256').update(payload).digest('base64url')}`;
}

describe('signed page cursors (GET /stores, /products, /clicks, /conversions)', function () {
  let t: TestService;
  let p: Partner; // test environment: sandbox clicks
  const T0 = Date.parse('2026-06-01T12:00:00.000Z');
  const env = 'test';

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(T0));
    p = await t.partner({ type: 'hub', env });
    for (const store of ['a', 'b']) {
      await registerStore(p, store);
      for (const n of [1, 2, 3]) await putProduct(t, p, store, `${store}-sku-${n}`);
      for (const n of [1, 2, 3]) {
        const click = await sandboxClick(p, store, `${store}-sku-${n}`);
        const items = [{ sku: `${store}-sku-${n}`, quantity: 1, unit_price_cents: 1000, refunded_cents: 0 }];
        t.clock.set(new Date(T0 + HOUR));
        const body = paidBody({
          event_id: `ev-${store}-${n}`,
          order_id: `o-${n}`,
          store_id: store,
          click_id: click.click_id,
          paid_at: iso(T0 + HOUR),
          items,
        });
        const r = await p.api.post('/conversions', body);
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        t.clock.set(new Date(T0));
      }
    }
    await registerStore(p, 'c'); // a third store, so /stores has more than one page of two
    t.clock.set(new Date(T0 + 2 * HOUR));
  });
  after(async () => t.close());

  /** Through `t.as`: after a restart the embedded service listens on other ports. */
  const get = async (path: string): Promise<Answer<Page>> => t.as(p.key).get<Page>(path);
  const expectRefused = (r: Answer, what: string) => {
    expect(r.status, `${what}: ${JSON.stringify(r.body)}`).to.equal(422);
    expect(codes(r.body), what).to.deep.equal(['cursor:invalid']);
  };
  /** Every row of a list, page by page; the cursors handed out on the way. */
  async function walk(list: string, query: string, limit: number): Promise<{ keys: string[]; cursors: string[] }> {
    const keys: string[] = [];
    const cursors: string[] = [];
    let r = await get(`${list}?${query}${query ? '&' : ''}limit=${limit}`);
    for (;;) {
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      keys.push(...r.body.data.map((row) => key(list, row)));
      if (!r.body.next_cursor) return { keys, cursors };
      cursors.push(r.body.next_cursor);
      expect(cursors.length).to.be.below(50);
      r = await get(`${at(list, r.body.next_cursor, query)}&limit=${limit}`);
    }
  }
  /** The values a cursor carries (the payload before the dot). */
  const valuesOf = (cursor: string): Scalar[] =>
    JSON.parse(Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8')) as Scalar[];
  const secretFile = () => path.join(t.dataDir, 'cursor-secret');

  it('a valid cursor pages: every list, with and without filters, walks every row once and in order', async () => {
    for (const [list, query] of [
      ['/stores', ''],
      ['/products', ''],
      ['/products', 'store_id=a'],
      ['/products', 'state=pending'],
      ['/clicks', ''],
      ['/clicks', 'store_id=b'],
      ['/conversions', ''],
      ['/conversions', 'store_id=a'],
    ] as const) {
      const all = await get(`${list}?${query}${query ? '&' : ''}limit=200`);
      expect(all.status).to.equal(200);
      const { keys, cursors } = await walk(list, query, 2);
      expect(keys, `${list}?${query}`).to.deep.equal(all.body.data.map((row) => key(list, row)));
      expect(cursors.length, `${list}?${query}`).to.be.greaterThan(0);
    }
  });

  it('refuses an old-format cursor re-encoded with a recomputed unkeyed hash (422 cursor invalid)', async () => {
    for (const list of LISTS) {
      const cursor = (await get(`${list}?limit=1`)).body.next_cursor!;
      const values = valuesOf(cursor);
      expectRefused(
        await get(at(list, unkeyedOldCursor(p.partnerId, env, list.slice(1), values))),
        `${list} old format`,
      );
      expectRefused(await get(at(list, unkeyedNewCursor(values))), `${list} unkeyed hash`);
    }
  });

  it('refuses forged cursors holding objects such as {"$ne":null} or {"$regex":…} (422 cursor invalid, never 500)', async () => {
    for (const list of LISTS) {
      const arity = valuesOf((await get(`${list}?limit=1`)).body.next_cursor!).length;
      for (const value of [{ $ne: null }, { $regex: '.*' }, { $gt: '' }]) {
        const values = Array.from({ length: arity }, () => value);
        expectRefused(
          await get(at(list, unkeyedOldCursor(p.partnerId, env, list.slice(1), values))),
          `${list} ${JSON.stringify(value)}`,
        );
        expectRefused(await get(at(list, unkeyedNewCursor(values))), `${list} ${JSON.stringify(value)} new format`);
      }
    }
  });

  it('checks the values of a cursor signed with the deployment secret: objects, arrays, other types and arities are refused', async () => {
    const secret = new CursorSecret(fs.readFileSync(secretFile(), 'utf8').trim());
    const tenant = { partnerId: p.partnerId, env } as const;
    const stores = { tenant, list: 'stores', filters: {} };
    // The test signs as the service does: it reproduces a cursor the service handed out.
    const handedOut = (await get('/stores?limit=1')).body.next_cursor!;
    expect(encodeCursor(secret, stores, valuesOf(handedOut))).to.equal(handedOut);
    const [storeId, id] = valuesOf(handedOut);
    for (const values of [
      [{ $ne: null }, id],
      [storeId, { $regex: '.*' }],
      [[storeId], id],
      [storeId, 1],
      [storeId, null],
      [storeId],
      [storeId, id, id],
      [],
    ] as unknown as Scalar[][]) {
      expectRefused(await get(at('/stores', encodeCursor(secret, stores, values))), JSON.stringify(values));
    }
    const clicks = { tenant, list: 'clicks', filters: {} };
    const window = valuesOf((await get('/clicks?limit=1')).body.next_cursor!).slice(0, 2);
    for (const values of [
      [...window, { $ne: null }, 'a', 'x'],
      [...window, 'x', 'a'],
      [window[0], 5, 'x', 'a', 'y'],
    ] as unknown as Scalar[][]) {
      expectRefused(await get(at('/clicks', encodeCursor(secret, clicks, values))), JSON.stringify(values));
    }
  });

  it('binds a cursor to the filters it was made with: store_id=a is refused with store_id=b, or without the filter', async () => {
    for (const list of ['/products', '/clicks', '/conversions']) {
      const cursor = (await get(`${list}?store_id=a&limit=1`)).body.next_cursor!;
      expect((await get(at(list, cursor, 'store_id=a'))).status, list).to.equal(200);
      expectRefused(await get(at(list, cursor, 'store_id=b')), `${list} store_id=b`);
      expectRefused(await get(at(list, cursor)), `${list} without store_id`);
      const unfiltered = (await get(`${list}?limit=1`)).body.next_cursor!;
      expectRefused(await get(at(list, unfiltered, 'store_id=a')), `${list} unfiltered cursor with store_id=a`);
    }
    const pending = (await get('/products?state=pending&limit=1')).body.next_cursor!;
    expect((await get(at('/products', pending, 'state=pending'))).status).to.equal(200);
    expectRefused(await get(at('/products', pending, 'state=rejected')), 'state=rejected');
    expectRefused(await get(at('/products', pending, 'state=pending&store_id=a')), 'state=pending&store_id=a');
  });

  it('survives a restart (same DATA_DIR), and is refused by a service with another secret', async () => {
    const before = new Map<string, { cursor: string; next: string[] }>();
    for (const list of LISTS) {
      const cursor = (await get(`${list}?limit=2`)).body.next_cursor!;
      const next = await get(`${at(list, cursor)}&limit=2`);
      before.set(list, { cursor, next: next.body.data.map((row) => key(list, row)) });
    }
    expect((fs.statSync(secretFile()).mode & 0o777).toString(8)).to.equal('600');
    await t.restart();
    for (const [list, { cursor, next }] of before) {
      const r = await get(`${at(list, cursor)}&limit=2`);
      expect(r.status, `${list} after a restart: ${JSON.stringify(r.body)}`).to.equal(200);
      expect(
        r.body.data.map((row) => key(list, row)),
        list,
      ).to.deep.equal(next);
    }
    // Another secret (rotated while stopped): every outstanding cursor is refused; the lists start again.
    fs.writeFileSync(secretFile(), 'another-cursor-secret-of-this-deployment-0123456789\n', { mode: 0o600 });
    await t.restart();
    for (const [list, { cursor }] of before)
      expectRefused(await get(`${at(list, cursor)}&limit=2`), `${list} after rotation`);
    for (const list of LISTS) expect((await walk(list, '', 2)).cursors.length, list).to.be.greaterThan(0);
  });
});
