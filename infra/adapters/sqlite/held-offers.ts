/**
 * The shopper search on what it holds of the offers (the embedded default, held-search.ts): for every offer a
 * search has read, the facts its ranking and searchability read — ids, store, gtin, title,
 * condition, price, shipping, rating, availability, the state's facts, the time of the last write — kept off V8's
 * heap (typed arrays in pages of rowids, and the few strings as small JSON arrays in chunks of Buffer), so that a later
 * search reads only rowids from the text index and the gtin index, and the whole documents of the page it answers.
 *
 * Exact, not a cache with a time bound: each search runs in one read transaction, and first reads the collection's
 * change log (read-store-sql.ts, `changeLogOf`) since the last one it read; every offer written since is forgotten,
 * and read again when a search needs it. So what a search judges is what its snapshot holds, as when it reads the
 * documents (query-api/public/product-search.ts `findOffers`, whose candidate set and order this reproduces: same answers,
 * tested in tests/infra/held-offers.int.spec.ts). A log made anew, or a search further behind than the log keeps,
 * forgets everything. Searchability is `searchableFrom` and `baseStateAt` (shared-schema/shopper/offer-facts.ts):
 * the partner API's own derivation of `state`, on the facts kept.
 *
 * Why: a search read and parsed ~340 whole documents at random from a 1 GB table (~8–9 µs a read, ~7 µs a parse),
 * most of its ~12 ms of CPU; SQLite empties a reader's page cache whenever the file changed, so no cache of pages
 * helps while partners write. Parsed documents kept on V8's heap made the garbage collections the cost
 * instead (docs/adr/0054-held-offers.md).
 */
import Database from 'better-sqlite3';
import { SqliteConnection } from './read-store-connection.js';
import { changeLogOf, columnOf, ftsMatch, ftsTableOf, tableOf } from './read-store-sql.js';
import { LIMIT_BOUND } from './limit.js';
import { MAX_TEXT_SCAN, MIN_PREFIX_LENGTH } from '../../../shared-schema/ports/text-search.js';
import { currentCover, STALE_AFTER_MS, type BaseState } from '../../../shared-schema/domain/product-status.js';
import { urlHost } from '../../../shared-schema/domain/host-match.js';
import { scopedId } from '../../../shared-schema/read-models/scoped-id.js';
import { OFFER_COLLECTIONS, OFFERS } from '../../../shared-schema/read-models/offers.js';
import {
  baseStateAt,
  searchableFrom,
  type OfferDoc,
  type OfferStoreDoc,
  type SearchableFacts,
} from '../../../shared-schema/shopper/offer-facts.js';
import { type RankedProduct, type RankInput, type SearchOffer } from '../../../shared-schema/shopper/ranking.js';
import { searchOfferOf } from '../../../shared-schema/shopper/search-view.js';
import type { Condition } from '../../../shared-schema/shopper/offer-rules.js';
import type { Shipping } from '../../../shared-schema/events/product.js';
import {
  CANDIDATES,
  rankedPageOf,
  readsAgain,
  RETRY_CANDIDATES,
  resultsPageOf,
  textQueryOf,
  type ResultsPage,
} from '../../../shared-schema/shopper/search-policy.js';

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

/** Bytes of strings the search holds at most; past it, it forgets everything and starts again. */
export const HELD_BYTES_MAX = 256 * 1024 * 1024;

/**
 * How the held offers are laid out: pages of 2^pageBits rows (a larger table adds pages, nothing held is copied, where
 * arrays grown to 1.5 times their length cost ~200 ms at a million rows), and the strings in chunks of `poolChunk`
 * bytes (one string of an offer, partner, sku and a title of at most 200 characters as JSON, is far smaller). The
 * tests take small ones, so that their few offers span many pages and chunks.
 */
export interface HeldGeometry {
  pageBits: number;
  poolChunk: number;
}
const GEOMETRY: HeldGeometry = { pageBits: 16, poolChunk: 4 << 20 };

/** The held offers of a page of `rows` consecutive rowids, one typed array a field. */
const newPage = (rows: number) => ({
  /** 1 when the offer of that row is held. */
  held: new Uint8Array(rows),
  lastWrite: new Float64Array(rows),
  price: new Float64Array(rows),
  shippingCost: new Float64Array(rows),
  ratingAverage: new Float64Array(rows),
  ratingCount: new Float64Array(rows),
  /** gtinNumber, NaN for none. */
  gtin: new Float64Array(rows),
  bits: new Uint8Array(rows),
  /** Indexes in the collection's interned stores and hosts. */
  store: new Int32Array(rows),
  host: new Int32Array(rows),
  /** Where the offer's strings are in the pool, and their length. */
  at: new Uint32Array(rows),
  length: new Uint32Array(rows),
});
type Page = ReturnType<typeof newPage>;

/**
 * The offers one collection (one generation of the offers model) holds for the search, by rowid: numbers in typed
 * arrays (pages), the strings the ranking seldom reads (partner, sku, title) as a JSON array in the pool's chunks, read
 * when asked.
 */
class HeldCollection {
  /** The offers by rowid, in pages of 2^shift rows. */
  private pages: Page[] = [];
  private readonly shift: number;
  /** A rowid's row in its page: `rowid & mask`. */
  private readonly mask: number;
  /** The strings, in chunks of `chunk` bytes (a string never straddles two); `at` counts across the chunks. */
  private pool: Buffer[] = [];
  private readonly chunk: number;
  private used = 0;
  private liveBytes = 0;
  readonly stores = new Interned<{ key: string; id: string }>();
  readonly hosts = new Interned<string>();
  /** The change log's token and the last change read; null: not read yet. */
  private token: number | null = null;
  private seq = 0;
  /** The documents the search under way has read (since the last `sync`), parsed: none is read twice. */
  private readNow = new Map<number, OfferDoc>();
  /** Base states by the store's facts they were derived with, then by host and state bits (`baseState`). */
  private readonly baseStates = new WeakMap<OfferStoreDoc, Map<number, BaseState>>();

  constructor(
    readonly name: string,
    geometry: HeldGeometry,
  ) {
    this.shift = geometry.pageBits;
    this.mask = (1 << geometry.pageBits) - 1;
    this.chunk = geometry.poolChunk;
  }

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
      // The pages of the table's rows at once, not added one by one as the first searches read.
      const top = conn.statement(`SELECT max(rowid) FROM ${tableOf(this.name)}`, 'pluck').get() as number | null;
      if (top !== null) this.room(top);
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
    const page = this.pages[rowid >>> this.shift];
    return page !== undefined && page.held[rowid & this.mask] === 1;
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
    const [page, i] = this.row(rowid);
    const [chunk, from] = this.slot(page.at[i]);
    return JSON.parse(chunk.toString('utf8', from, from + page.length[i])) as [string, string, string];
  }

  private put(rowid: number, doc: OfferDoc): void {
    const p = doc.product;
    const json = JSON.stringify([doc.partner_id, doc.sku, p.title]);
    const size = Buffer.byteLength(json);
    this.room(rowid);
    const at = this.place(size);
    const [chunk, offset] = this.slot(at);
    chunk.write(json, offset, 'utf8');
    const [page, i] = this.row(rowid);
    page.at[i] = at;
    page.length[i] = size;
    this.liveBytes += size;
    const cover = currentCover({ product: p, removed: doc.removed, cover: doc.cover });
    page.bits[i] =
      (p.available === true ? AVAILABLE : 0) |
      (doc.removed ? REMOVED : 0) |
      (cover === null ? 0 : cover.ok ? COVER_OK : COVER_REJECTED) |
      (CONDITIONS.indexOf(p.condition ?? 'new') << CONDITION_SHIFT) |
      (p.shipping === undefined ? 0 : p.shipping.type === 'free' ? SHIPPING_FREE : SHIPPING_FIXED);
    page.shippingCost[i] = p.shipping?.type === 'fixed' ? p.shipping.cost_cents : 0;
    page.lastWrite[i] = Date.parse(doc.last_write_at);
    page.price[i] = p.price_cents;
    page.ratingAverage[i] = p.rating ? p.rating.average : NaN;
    page.ratingCount[i] = p.rating ? p.rating.count : NaN;
    page.gtin[i] = doc.gtin === null ? NaN : gtinNumber(doc.gtin);
    page.store[i] = this.stores.of(doc.store_key, () => ({ key: doc.store_key, id: doc.store_id }));
    const host = urlHost(p.product_url);
    page.host[i] = this.hosts.of(host, () => host);
    page.held[i] = 1;
  }

  private forget(rowid: number): void {
    if (!this.isHeld(rowid)) return;
    const [page, i] = this.row(rowid);
    page.held[i] = 0;
    this.liveBytes -= page.length[i];
  }

  private forgetAll(): void {
    this.pages = [];
    this.pool = [];
    this.used = 0;
    this.liveBytes = 0;
  }

  /** Room for rowid `rowid`: the pages up to its own. */
  private room(rowid: number): void {
    while (this.pages.length <= rowid >>> this.shift) this.pages.push(newPage(this.mask + 1));
  }

  /** The page of a rowid with room, and its row there. */
  row(rowid: number): [page: Page, i: number] {
    return [this.pages[rowid >>> this.shift], rowid & this.mask];
  }

  /** The chunk of the pool (or of `pool`, one it replaces) that byte `at` is in, and where in it. */
  private slot(at: number, pool: Buffer[] = this.pool): [chunk: Buffer, offset: number] {
    return [pool[Math.floor(at / this.chunk)], at % this.chunk];
  }

  /**
   * Where the next `size` bytes go: after the last string, or at the start of a new chunk. Before a new chunk, when
   * more than a third of the pool is strings forgotten since, the strings held are first copied into new chunks.
   */
  private place(size: number): number {
    if (size > this.chunk) throw new RangeError(`${size} bytes of strings for one offer: more than a chunk`);
    let at = this.used;
    const chunk = Math.floor(at / this.chunk);
    if (chunk >= this.pool.length || Math.floor((at + size - 1) / this.chunk) !== chunk) {
      if (this.used - this.liveBytes > this.liveBytes / 2) return this.compact(size);
      at = this.pool.length * this.chunk;
      this.pool.push(Buffer.allocUnsafe(this.chunk));
    }
    this.used = at + size;
    return at;
  }

  /** Copies the strings of the offers held into new chunks, then places `size` bytes after them. */
  private compact(size: number): number {
    const old = this.pool;
    this.pool = [];
    this.used = 0;
    for (const page of this.pages)
      for (let i = 0; i <= this.mask; i++) {
        if (page.held[i] !== 1) continue;
        const [source, from] = this.slot(page.at[i], old);
        const at = this.place(page.length[i]);
        const [chunk, offset] = this.slot(at);
        source.copy(chunk, offset, from, from + page.length[i]);
        page.at[i] = at;
      }
    return this.place(size);
  }

  /**
   * The base state of a held offer with its live store's facts `store`, kept: it reads only those facts, the page's
   * host, removal and the cover's verdict. A store's facts are a document replaced, never changed, when the store
   * changes, so they key the states derived with them, and a new document derives anew.
   */
  baseState(rowid: number, store: OfferStoreDoc): BaseState {
    const [page, i] = this.row(rowid);
    let states = this.baseStates.get(store);
    if (states === undefined) this.baseStates.set(store, (states = new Map<number, BaseState>()));
    const key = page.host[i] * 16 + (page.bits[i] & (REMOVED | COVER_OK | COVER_REJECTED));
    let state = states.get(key);
    if (state === undefined) states.set(key, (state = baseStateAt(this.offer(rowid), store)));
    return state;
  }

  /** The index of a held offer's store in `stores`. */
  storeIndex(rowid: number): number {
    const [page, i] = this.row(rowid);
    return page.store[i];
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
  private readonly p: Page;
  private readonly i: number;
  constructor(
    private readonly c: HeldCollection,
    readonly rowid: number,
  ) {
    [this.p, this.i] = c.row(rowid);
  }
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
    return this.c.stores.values[this.p.store[this.i]].id;
  }
  get store_key(): string {
    return this.c.stores.values[this.p.store[this.i]].key;
  }
  get gtin(): string | null {
    if (this.gtinValue === undefined) {
      const g = this.p.gtin[this.i];
      this.gtinValue = Number.isNaN(g) ? null : gtinText(g);
    }
    return this.gtinValue;
  }
  get condition(): Condition {
    return CONDITIONS[(this.p.bits[this.i] >> CONDITION_SHIFT) & 3];
  }
  get price_cents(): number {
    return this.p.price[this.i];
  }
  get shipping(): Shipping | null {
    if (this.ship === undefined) {
      const bits = this.p.bits[this.i];
      this.ship =
        bits & SHIPPING_FREE
          ? { type: 'free' }
          : bits & SHIPPING_FIXED
            ? { type: 'fixed', cost_cents: this.p.shippingCost[this.i] }
            : null;
    }
    return this.ship;
  }
  get rating(): { average: number; count: number } | null {
    if (this.rate === undefined) {
      const average = this.p.ratingAverage[this.i];
      this.rate = Number.isNaN(average) ? null : { average, count: this.p.ratingCount[this.i] };
    }
    return this.rate;
  }
  get available(): boolean {
    return (this.p.bits[this.i] & AVAILABLE) !== 0;
  }
  get removed(): boolean {
    return (this.p.bits[this.i] & REMOVED) !== 0;
  }
  /** A rejected cover's reasons are not held: searchability reads only that it was rejected. */
  get cover(): { ok: boolean; reasons: [] } | null {
    const bits = this.p.bits[this.i];
    return bits & COVER_OK ? { ok: true, reasons: [] } : bits & COVER_REJECTED ? { ok: false, reasons: [] } : null;
  }
  get page_host(): string {
    return this.c.hosts.values[this.p.host[this.i]];
  }
  get last_write_at(): number {
    return this.p.lastWrite[this.i];
  }
}

/** The search on the offers it holds, with its own read connection to the file. */
export class HeldOffersSearch {
  private readonly conn: SqliteConnection;
  private collection: HeldCollection | null = null;
  /** The offers model's text fields: the first is the title (the text index's first column). */
  private readonly titleColumn = `t_${OFFER_COLLECTIONS.find((c) => c.name === OFFERS)!.text![0]}`;

  constructor(
    file: string,
    private readonly geometry: HeldGeometry = GEOMETRY,
  ) {
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
   * One page of the answer for the words at `now` (`resultsPage` of query-api/public/product-search.ts, same answer), from
   * collection `name` of the offers model; `store(key)` gives a store's facts (a StoreFactsCopy brought up to date
   * just before: a changed store's facts are a new document, never the old one changed in place). Undefined when this
   * search cannot be answered here (no change log, or a query of more distinct words than the text index takes, whose
   * matches are tested on their whole text): the caller reads documents.
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
      if (this.collection?.name !== name) this.collection = new HeldCollection(name, this.geometry);
      const held = this.collection;
      if (!held.sync(this.conn)) return undefined;
      const found = (max: number) => this.searchable(held, asked.words, asked.prefixLast, now, max, store);
      const first = found(CANDIDATES);
      const offers = readsAgain(first) ? found(RETRY_CANDIDATES).offers : first.offers;
      const { total, page } = rankedPageOf(words, offers, offset, limit);
      return resultsPageOf({ total, page: this.searchOffers(held, page, store) }, publicBase);
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
    // Each store's facts once per search, by its index among the stores held (null: the store is not live).
    const stores: (OfferStoreDoc | null)[] = [];
    const offers: HeldOffer[] = [];
    for (const o of all) {
      const index = held.storeIndex(o.rowid);
      let s = stores[index];
      if (s === undefined) stores[index] = s = store(held.stores.values[index].key) ?? null;
      if (s !== null && searchableFrom(held.baseState(o.rowid, s), o, s, now)) offers.push(o);
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
        if (!held.isHeld(r)) continue;
        const [page, i] = held.row(r);
        if (page.lastWrite[i] >= bound) fresh.push(r);
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
