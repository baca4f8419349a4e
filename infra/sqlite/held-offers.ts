/**
 * The shopper search of a search thread on what it holds of the offers (the embedded default): for every offer a
 * search of this thread has read, the facts its ranking and searchability read — ids, store, gtin, title,
 * condition, price, shipping, rating, availability, the state's facts, the time of the last write — kept off V8's
 * heap (typed arrays by rowid, and a Buffer of the few strings as small JSON arrays), so that a later search reads only rowids from
 * the text index and the gtin index, and the whole documents of the page it answers.
 *
 * Exact, not a cache with a time bound: each search runs in one read transaction, and first reads the collection's
 * change log (read-store-sql.ts, `changeLogOf`) since the last one it read; every offer written since is forgotten,
 * and read again when a search needs it. So what a search judges is what its snapshot holds, as when it reads the
 * documents (query-api/public/search.ts `findOffers`, whose candidate set and order this reproduces: same answers,
 * tested in tests/infra/held-offers.int.spec.ts). A log made anew, or a thread further behind than the log keeps,
 * forgets everything. Searchability is `searchableFrom` and `baseStateAt` (shared-schema/shopper/offer-facts.ts):
 * the partner API's own derivation of `state`, on the facts kept.
 *
 * Why: a search read and parsed ~340 whole documents at random from a 1 GB table (~8–9 µs a read, ~7 µs a parse),
 * most of its ~12 ms of CPU; SQLite empties a reader's page cache whenever the file changed, so no cache of pages
 * helps while partners write (docs/benchmarks.md). Parsed documents kept on V8's heap made the collections of the
 * thread the cost instead (docs/benchmarks.md, "The offers kept parsed in the search threads").
 */
import Database from 'better-sqlite3';
import { SqliteConnection } from './read-store-connection.js';
import { changeLogOf, columnOf, ftsMatch, ftsTableOf, tableOf } from './read-store-sql.js';
import { LIMIT_BOUND } from './limit.js';
import { MAX_TEXT_SCAN, MIN_PREFIX_LENGTH } from '../../shared-schema/ports/text-search.js';
import { currentCover, STALE_AFTER_MS, type BaseState } from '../../shared-schema/product-status.js';
import { urlHost } from '../../shared-schema/host-match.js';
import { scopedId } from '../../shared-schema/read-models/scoped-id.js';
import { OFFER_COLLECTIONS, OFFERS } from '../../shared-schema/read-models/offers.js';
import {
  baseStateAt,
  searchableFrom,
  type OfferDoc,
  type OfferStoreDoc,
  type SearchableFacts,
} from '../../shared-schema/shopper/offer-facts.js';
import {
  rankProducts,
  type RankedProduct,
  type RankInput,
  type SearchOffer,
} from '../../shared-schema/shopper/ranking.js';
import { productView, searchOfferOf } from '../../shared-schema/shopper/search-view.js';
import type { Condition } from '../../shared-schema/shopper/offer-rules.js';
import type { Shipping } from '../../shared-schema/events/product.js';
import { CANDIDATES, RETRY_CANDIDATES, textQueryOf, type ResultsPage } from '../../query-api/public/search.js';

/** An offer as held: what the ranking and the searchability judgment read of it, its rowid and its store's key. */
export type HeldOffer = RankInput & SearchableFacts & { rowid: number; store_key: string };

const CONDITIONS: readonly Condition[] = ['new', 'used', 'refurbished'];
/** `bits` of an offer: available, removed, its current cover's verdict, its condition, its shipping's kind. */
const AVAILABLE = 1;
const REMOVED = 2;
const COVER_OK = 4;
const COVER_REJECTED = 8;
const CONDITION_SHIFT = 4; // two bits: the index in CONDITIONS
const SHIPPING_FREE = 64;
const SHIPPING_FIXED = 128;

/** A gtin (8, 12, 13 or 14 digits) as one exact number: its length, then its value (< 1.5e15 < 2^53). */
const gtinNumber = (gtin: string): number => gtin.length * 1e14 + Number(gtin);
const gtinText = (n: number): string => String(n % 1e14).padStart(Math.floor(n / 1e14), '0');

/** Values seen often (stores, hosts), each kept once, by index. */
class Interned<T> {
  readonly values: T[] = [];
  private readonly index = new Map<string, number>();
  of(key: string, value: () => T): number {
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.values.push(value()) - 1;
      this.index.set(key, i);
    }
    return i;
  }
}

/** Bytes of strings a thread holds at most; past it, it forgets everything and starts again. */
export const HELD_BYTES_MAX = 256 * 1024 * 1024;

/**
 * The offers one collection (one generation of the offers model) holds for this thread, by rowid: numbers in typed
 * arrays, the strings the ranking seldom reads (partner, sku, title) as a JSON array in a Buffer, read when asked.
 */
class HeldCollection {
  /** 1 when the offer of that rowid is held. */
  private held = new Uint8Array(0);
  lastWrite = new Float64Array(0);
  price = new Float64Array(0);
  shippingCost = new Float64Array(0);
  ratingAverage = new Float64Array(0);
  ratingCount = new Float64Array(0);
  /** gtinNumber, NaN for none. */
  gtin = new Float64Array(0);
  bits = new Uint8Array(0);
  store = new Int32Array(0);
  host = new Int32Array(0);
  private at = new Uint32Array(0);
  private length = new Uint32Array(0);
  private pool = Buffer.alloc(1 << 20);
  private used = 0;
  private liveBytes = 0;
  readonly stores = new Interned<{ key: string; id: string }>();
  readonly hosts = new Interned<string>();
  /** The change log's token and the last change read; null: not read yet. */
  private token: number | null = null;
  private seq = 0;
  /** The documents the search under way has read (since the last `sync`), parsed: none is read twice. */
  private readNow = new Map<number, OfferDoc>();

  constructor(readonly name: string) {}

  get bytes(): number {
    return this.liveBytes;
  }

  /** Forgets every offer changed since the last call (false: the collection has no change log to read). */
  sync(conn: SqliteConnection): boolean {
    this.readNow = new Map();
    const log = changeLogOf(this.name);
    let token: unknown;
    try {
      token = conn.statement(`SELECT r FROM ${log} WHERE seq = 0`, 'pluck').get();
    } catch {
      return false; // no change log (a file an older version made, not yet opened by the writer of this one)
    }
    if (typeof token !== 'number') return false;
    // Past the bound (what the last searches held), everything goes, before this search holds anything.
    if (this.liveBytes > HELD_BYTES_MAX) this.token = null;
    if (token !== this.token) {
      this.forgetAll();
      this.token = token;
      this.seq = (conn.statement(`SELECT max(seq) FROM ${log}`, 'pluck').get() as number | null) ?? 0;
      // The arrays at the table's size at once, not grown step by step as the first searches read.
      const top = conn.statement(`SELECT max(rowid) FROM ${tableOf(this.name)}`, 'pluck').get() as number | null;
      if (top !== null) this.room(top, 0);
      return true;
    }
    const changed = conn.statement(`SELECT seq, r FROM ${log} WHERE seq > ? ORDER BY seq`).raw(true).all(this.seq) as [
      number,
      number,
    ][];
    if (changed.length === 0) return true;
    // The log's sequence has no gap; a first change after the next one means the ones between were let go.
    if (changed[0][0] !== this.seq + 1) this.forgetAll();
    else for (const [, r] of changed) this.forget(r);
    this.seq = changed[changed.length - 1][0];
    return true;
  }

  isHeld(rowid: number): boolean {
    return rowid < this.held.length && this.held[rowid] === 1;
  }

  /** Reads and holds the offers of `rowids` not held yet. */
  hold(conn: SqliteConnection, rowids: readonly number[]): void {
    const missing = rowids.filter((r) => !this.isHeld(r));
    if (missing.length === 0) return;
    const docs = this.documents(conn, missing);
    for (const r of missing) {
      const doc = docs.get(r);
      if (doc) this.put(r, doc);
    }
  }

  /** The whole documents of `rowids` (those that exist), parsed: read now unless this search read them already. */
  documents(conn: SqliteConnection, rowids: readonly number[]): ReadonlyMap<number, OfferDoc> {
    const missing = rowids.filter((r) => !this.readNow.has(r));
    if (missing.length > 0)
      for (const [rowid, json] of conn
        .statement(`SELECT rowid, doc FROM ${tableOf(this.name)} WHERE rowid IN (SELECT value FROM json_each(?))`)
        .raw(true)
        .all(JSON.stringify(missing)) as [number, string][])
        this.readNow.set(rowid, JSON.parse(json) as OfferDoc);
    return this.readNow;
  }

  /** The partner, sku and title of a held offer. */
  strings(rowid: number): [partner: string, sku: string, title: string] {
    const at = this.at[rowid];
    return JSON.parse(this.pool.toString('utf8', at, at + this.length[rowid])) as [string, string, string];
  }

  private put(rowid: number, doc: OfferDoc): void {
    const p = doc.product;
    const json = JSON.stringify([doc.partner_id, doc.sku, p.title]);
    const size = Buffer.byteLength(json);
    this.room(rowid, size);
    this.pool.write(json, this.used, 'utf8');
    this.at[rowid] = this.used;
    this.length[rowid] = size;
    this.used += size;
    this.liveBytes += size;
    const cover = currentCover({ product: p, removed: doc.removed, cover: doc.cover });
    this.bits[rowid] =
      (p.available === true ? AVAILABLE : 0) |
      (doc.removed ? REMOVED : 0) |
      (cover === null ? 0 : cover.ok ? COVER_OK : COVER_REJECTED) |
      (CONDITIONS.indexOf(p.condition ?? 'new') << CONDITION_SHIFT) |
      (p.shipping === undefined ? 0 : p.shipping.type === 'free' ? SHIPPING_FREE : SHIPPING_FIXED);
    this.shippingCost[rowid] = p.shipping?.type === 'fixed' ? p.shipping.cost_cents : 0;
    this.lastWrite[rowid] = Date.parse(doc.last_write_at);
    this.price[rowid] = p.price_cents;
    this.ratingAverage[rowid] = p.rating ? p.rating.average : NaN;
    this.ratingCount[rowid] = p.rating ? p.rating.count : NaN;
    this.gtin[rowid] = doc.gtin === null ? NaN : gtinNumber(doc.gtin);
    this.store[rowid] = this.stores.of(doc.store_key, () => ({ key: doc.store_key, id: doc.store_id }));
    const host = urlHost(p.product_url);
    this.host[rowid] = this.hosts.of(host, () => host);
    this.held[rowid] = 1;
  }

  private forget(rowid: number): void {
    if (!this.isHeld(rowid)) return;
    this.held[rowid] = 0;
    this.liveBytes -= this.length[rowid];
  }

  private forgetAll(): void {
    this.held = new Uint8Array(0);
    this.pool = Buffer.alloc(1 << 20);
    this.used = 0;
    this.liveBytes = 0;
  }

  /** Room for rowid `rowid` and `size` more bytes: longer arrays, a larger pool, or the pool compacted. */
  private room(rowid: number, size: number): void {
    if (rowid >= this.held.length) {
      const n = Math.max(rowid + 1, Math.ceil(this.held.length * 1.5), 1024);
      const grow = <A extends Uint8Array | Float64Array | Uint32Array | Int32Array>(
        a: A,
        make: (n: number) => A,
      ): A => {
        const b = make(n);
        b.set(a.subarray(0, Math.min(a.length, this.held.length)));
        return b;
      };
      const f64 = (k: number) => new Float64Array(k);
      this.lastWrite = grow(this.lastWrite, f64);
      this.price = grow(this.price, f64);
      this.shippingCost = grow(this.shippingCost, f64);
      this.ratingAverage = grow(this.ratingAverage, f64);
      this.ratingCount = grow(this.ratingCount, f64);
      this.gtin = grow(this.gtin, f64);
      this.bits = grow(this.bits, (k) => new Uint8Array(k));
      this.store = grow(this.store, (k) => new Int32Array(k));
      this.host = grow(this.host, (k) => new Int32Array(k));
      this.at = grow(this.at, (k) => new Uint32Array(k));
      this.length = grow(this.length, (k) => new Uint32Array(k));
      this.held = grow(this.held, (k) => new Uint8Array(k));
    }
    if (this.used + size <= this.pool.length) return;
    // Compact: the strings of the offers held, into a pool of at least twice their size.
    const next = Buffer.alloc(Math.max(this.pool.length, 2 * (this.liveBytes + size)));
    let used = 0;
    for (let r = 0; r < this.held.length; r++) {
      if (this.held[r] !== 1) continue;
      this.pool.copy(next, used, this.at[r], this.at[r] + this.length[r]);
      this.at[r] = used;
      used += this.length[r];
    }
    this.pool = next;
    this.used = used;
  }

  /** What the base state of a held offer reads besides its store's facts: the store, the page's host, the bits. */
  stateKey(rowid: number): string {
    return `${this.store[rowid]}:${this.host[rowid]}:${this.bits[rowid] & (REMOVED | COVER_OK | COVER_REJECTED)}`;
  }

  /** A held offer as the ranking and the searchability judgment read it. */
  offer(rowid: number): HeldOffer {
    return new HeldView(this, rowid);
  }
}

/**
 * One held offer, read from the collection's arrays when a field is first asked and kept (the ranking reads some
 * fields many times: shipping and rating in every comparison); its strings read once, together.
 */
class HeldView implements HeldOffer {
  private text: [string, string, string] | undefined;
  private ship: Shipping | null | undefined;
  private rate: { average: number; count: number } | null | undefined;
  private gtinValue: string | null | undefined;
  private idValue: string | undefined;
  constructor(
    private readonly c: HeldCollection,
    readonly rowid: number,
  ) {}
  private get strings(): [string, string, string] {
    return (this.text ??= this.c.strings(this.rowid));
  }
  get id(): string {
    return (this.idValue ??= scopedId({ env: 'live', partnerId: this.strings[0] }, this.strings[1]));
  }
  get sku(): string {
    return this.strings[1];
  }
  get title(): string {
    return this.strings[2];
  }
  get store_id(): string {
    return this.c.stores.values[this.c.store[this.rowid]].id;
  }
  get store_key(): string {
    return this.c.stores.values[this.c.store[this.rowid]].key;
  }
  get gtin(): string | null {
    if (this.gtinValue === undefined) {
      const g = this.c.gtin[this.rowid];
      this.gtinValue = Number.isNaN(g) ? null : gtinText(g);
    }
    return this.gtinValue;
  }
  get condition(): Condition {
    return CONDITIONS[(this.c.bits[this.rowid] >> CONDITION_SHIFT) & 3];
  }
  get price_cents(): number {
    return this.c.price[this.rowid];
  }
  get shipping(): Shipping | null {
    if (this.ship === undefined) {
      const bits = this.c.bits[this.rowid];
      this.ship =
        bits & SHIPPING_FREE
          ? { type: 'free' }
          : bits & SHIPPING_FIXED
            ? { type: 'fixed', cost_cents: this.c.shippingCost[this.rowid] }
            : null;
    }
    return this.ship;
  }
  get rating(): { average: number; count: number } | null {
    if (this.rate === undefined) {
      const average = this.c.ratingAverage[this.rowid];
      this.rate = Number.isNaN(average) ? null : { average, count: this.c.ratingCount[this.rowid] };
    }
    return this.rate;
  }
  get available(): boolean {
    return (this.c.bits[this.rowid] & AVAILABLE) !== 0;
  }
  get removed(): boolean {
    return (this.c.bits[this.rowid] & REMOVED) !== 0;
  }
  /** A rejected cover's reasons are not held: searchability reads only that it was rejected. */
  get cover(): { ok: boolean; reasons: [] } | null {
    const bits = this.c.bits[this.rowid];
    return bits & COVER_OK ? { ok: true, reasons: [] } : bits & COVER_REJECTED ? { ok: false, reasons: [] } : null;
  }
  get page_host(): string {
    return this.c.hosts.values[this.c.host[this.rowid]];
  }
  get last_write_at(): number {
    return this.c.lastWrite[this.rowid];
  }
}

/** The search of one thread on the offers it holds; one per thread (its own read connection to the file). */
export class HeldOffersSearch {
  private readonly conn: SqliteConnection;
  private collection: HeldCollection | null = null;
  /** The offers model's text fields: the first is the title (the text index's first column). */
  private readonly titleColumn = `t_${OFFER_COLLECTIONS.find((c) => c.name === OFFERS)!.text![0]}`;

  constructor(file: string) {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    this.conn = new SqliteConnection(db);
  }

  /** Bytes of records held (for the tests and the operator). */
  get heldBytes(): number {
    return this.collection?.bytes ?? 0;
  }

  close(): void {
    this.conn.db.close();
  }

  /**
   * One page of the answer for the words at `now` (`resultsPage` of query-api/public/search.ts, same answer), from
   * collection `name` of the offers model; `store(key)` gives a store's facts (a StoreFactsCopy brought up to date
   * just before). Undefined when this search cannot be answered here (no change log, or a query of more distinct
   * words than the text index takes, whose matches are tested on their whole text): the caller reads documents.
   */
  resultsPage(
    name: string,
    words: readonly string[],
    now: Date,
    offset: number,
    limit: number,
    publicBase: string,
    store: (key: string) => OfferStoreDoc | undefined,
  ): ResultsPage | undefined {
    const asked = textQueryOf(words);
    if (asked.holdsAll) return undefined;
    return this.conn.db.transaction((): ResultsPage | undefined => {
      if (this.collection?.name !== name) this.collection = new HeldCollection(name);
      const held = this.collection;
      if (!held.sync(this.conn)) return undefined;
      const found = (max: number) => this.searchable(held, asked.words, asked.prefixLast, now, max, store);
      const first = found(CANDIDATES);
      const offers =
        first.read < CANDIDATES || first.offers.length >= CANDIDATES ? first.offers : found(RETRY_CANDIDATES).offers;
      const ranked = rankProducts(words, offers, MIN_PREFIX_LENGTH);
      const page = ranked.slice(offset, offset + limit);
      const views = this.searchOffers(held, page, store).map((p) => productView(p, publicBase));
      return { total: ranked.length, count: page.length, results: JSON.stringify(views) };
    })();
  }

  /**
   * The searchable offers of up to `max` text matches and of their gtins, and how many offers were read: the
   * matches whose last write is within 48 h of `now` (at most MAX_TEXT_SCAN index entries looked at per part),
   * those whose title holds every word first, then the others, each part in the text index's order; then every
   * other offer of their gtins (the SQLite adapter's `textSearch` with `sharing: 'gtin'`).
   */
  private searchable(
    held: HeldCollection,
    words: readonly string[],
    prefixLast: boolean,
    now: Date,
    max: number,
    store: (key: string) => OfferStoreDoc | undefined,
  ): { offers: HeldOffer[]; read: number } {
    const bound = now.getTime() - STALE_AFTER_MS;
    const match = ftsMatch(words, prefixLast, MIN_PREFIX_LENGTH);
    const found = this.freshMatches(held, `${this.titleColumn} : (${match})`, bound, max);
    if (found.length < max) {
      const seen = new Set(found);
      for (const r of this.freshMatches(held, match, bound, max)) {
        if (found.length === max) break;
        if (!seen.has(r)) found.push(r);
      }
    }
    const all = found.map((r) => held.offer(r));
    const gtins = [...new Set(all.map((o) => o.gtin).filter((g): g is string => g !== null))];
    if (gtins.length > 0) {
      const siblings = this.conn
        .statement(
          `SELECT rowid FROM ${tableOf(held.name)} WHERE ${columnOf('gtin')} IN (SELECT value FROM json_each(?)) AND rowid NOT IN (SELECT value FROM json_each(?))`,
          'pluck',
        )
        .all(JSON.stringify(gtins), JSON.stringify(found)) as number[];
      held.hold(this.conn, siblings);
      for (const r of siblings) if (held.isHeld(r)) all.push(held.offer(r));
    }
    // The base state depends only on the store, the page's host, removal and the cover's verdict: derived once
    // for each of their combinations in this search.
    const bases = new Map<string, BaseState | null>();
    const offers: HeldOffer[] = [];
    for (const o of all) {
      const key = held.stateKey(o.rowid);
      let base = bases.get(key);
      if (base === undefined) {
        const s = store(o.store_key);
        bases.set(key, (base = s ? baseStateAt(o, s) : null));
      }
      if (base !== null && searchableFrom(base, o, now)) offers.push(o);
    }
    return { offers, read: all.length };
  }

  /**
   * The first `max` rowids of the text query's matches whose last write is at or after `bound`, among its first
   * MAX_TEXT_SCAN matches, in the index's order. Reads `max` matches, then four times as many while too few are
   * fresh, holding the offers of those it looks at.
   */
  private freshMatches(held: HeldCollection, text: string, bound: number, max: number): number[] {
    const read = this.conn.statement(
      `SELECT rowid FROM ${ftsTableOf(held.name)} WHERE ${ftsTableOf(held.name)} MATCH ? ${LIMIT_BOUND}`,
      'pluck',
    );
    let asked = Math.min(max, MAX_TEXT_SCAN);
    for (;;) {
      const rowids = read.all(text, asked) as number[];
      held.hold(this.conn, rowids);
      const fresh: number[] = [];
      for (const r of rowids) {
        if (held.isHeld(r) && held.lastWrite[r] >= bound) fresh.push(r);
        if (fresh.length === max) return fresh;
      }
      if (rowids.length < asked || asked === MAX_TEXT_SCAN) return fresh;
      asked = Math.min(asked * 4, MAX_TEXT_SCAN);
    }
  }

  /**
   * The page's products with their offers as the views need them: their whole documents (parsed already when this
   * search held them, read now otherwise).
   */
  private searchOffers(
    held: HeldCollection,
    page: readonly RankedProduct<HeldOffer>[],
    store: (key: string) => OfferStoreDoc | undefined,
  ): RankedProduct<SearchOffer>[] {
    const rowids = page.flatMap((p) => [...p.offers, ...p.alternatives].map((o) => o.rowid));
    const docs = held.documents(this.conn, rowids);
    const full = (o: HeldOffer): SearchOffer => searchOfferOf(docs.get(o.rowid)!, store(o.store_key)!);
    return page.map((p) => ({ ...p, offers: p.offers.map(full), alternatives: p.alternatives.map(full) }));
  }
}
