/**
 * Reads of the movements read model (shared-schema/read-models/ledger.ts) shared by `GET /statement`, the closings
 * and the operator's verification (which runs them against a scratch store rebuilt from the log): balances at a
 * point in time, pages of movements, a period's bounds, and a closing's CSV, produced row by row.
 */
import { createHash } from 'node:crypto';
import type { Doc, ReadView, Scalar, Where } from '../shared-schema/ports/read-store.js';
import type { Tenant } from '../shared-schema/domain/streams.js';
import {
  CSV_HEADER,
  LEDGER,
  MOVEMENT_ORDER,
  answerCents,
  cents,
  csvLine,
  type MovementDoc,
} from '../shared-schema/read-models/ledger.js';

export { CSV_HEADER, csvField, csvLine } from '../shared-schema/read-models/ledger.js';

/** The statement's scope: a partner and environment, or one of its stores. */
export interface LedgerScope {
  tenant: Tenant;
  storeId?: string;
}

export interface Balance {
  net: bigint;
  known: bigint;
}

const ZERO: Balance = { net: 0n, known: 0n };

const scopeWhere = (scope: LedgerScope): Where => ({
  partner_id: scope.tenant.partnerId,
  env: scope.tenant.env,
  ...(scope.storeId !== undefined ? { store_id: scope.storeId } : {}),
});

/** A movement's running balances in `scope`. */
export const balanceIn = (scope: LedgerScope, m: MovementDoc): Balance =>
  scope.storeId === undefined
    ? { net: cents(m.net_balance), known: cents(m.known_balance) }
    : { net: cents(m.store_net_balance), known: cents(m.store_known_balance) };

/** The running totals of `scope` just before `at` (over everything booked before it). */
export async function balanceBefore(view: ReadView, scope: LedgerScope, at: string): Promise<Balance> {
  const last = await lastBefore(view, scope, at);
  return last ? balanceIn(scope, last) : ZERO;
}

/** The last movement of `scope` booked before `at`, if any: one indexed seek. */
async function lastBefore(view: ReadView, scope: LedgerScope, at: string): Promise<MovementDoc | null> {
  const [last] = await view.find<MovementDoc>(LEDGER.movements, {
    where: { ...scopeWhere(scope), recorded_at: { lt: at } },
    orderBy: [
      { field: 'recorded_at', dir: 'desc' },
      { field: 'position', dir: 'desc' },
    ],
    limit: 1,
  });
  return last ?? null;
}

export const answerBalance = (b: Balance) => ({
  net_cents: answerCents(b.net),
  known_expected_commission_cents: answerCents(b.known),
});

/** Movements of `scope` booked in [since, until), in order, after the keyset `after` (recorded_at, position, _id). */
export function movementsIn(
  view: ReadView,
  scope: LedgerScope,
  window: { since: string; until: string },
  limit: number,
  after?: readonly Scalar[],
): Promise<MovementDoc[]> {
  return view.find<MovementDoc>(LEDGER.movements, {
    where: { ...scopeWhere(scope), recorded_at: { gte: window.since, lt: window.until } },
    orderBy: MOVEMENT_ORDER,
    ...(after ? { after } : {}),
    limit,
  });
}

export const movementKey = (m: MovementDoc): Scalar[] => [m.recorded_at, m.position, m._id];

export function countIn(view: ReadView, scope: LedgerScope, window: { since: string; until: string }) {
  return view.count(LEDGER.movements, { ...scopeWhere(scope), recorded_at: { gte: window.since, lt: window.until } });
}

/** The first movement of `scope` ever, if any. */
export async function firstMovement(view: ReadView, scope: LedgerScope): Promise<MovementDoc | null> {
  const [first] = await view.find<MovementDoc>(LEDGER.movements, {
    where: scopeWhere(scope),
    orderBy: MOVEMENT_ORDER,
    limit: 1,
  });
  return first ?? null;
}

/** A movement as the statement answers it, its balances those of `scope`. */
export function answerMovement(scope: LedgerScope, m: MovementDoc) {
  const balance = balanceIn(scope, m);
  return {
    event_id: m.event_id,
    store_id: m.store_id,
    order_id: m.order_id,
    type: m.type,
    occurred_at: m.occurred_at,
    recorded_at: m.recorded_at,
    net_delta_cents: answerCents(cents(m.net_delta)),
    known_expected_commission_delta_cents: answerCents(cents(m.known_delta)),
    expected_commission_delta_cents: m.expected_delta === null ? null : answerCents(cents(m.expected_delta)),
    net_balance_cents: answerCents(balance.net),
    known_expected_commission_balance_cents: answerCents(balance.known),
  };
}

// ------------------------------------------------------------------------------------------------------ periods

/** Brasília time, UTC−03:00 all year (no daylight saving since 2019). */
export const PERIOD_TIMEZONE = 'America/Sao_Paulo';
const OFFSET_MS = 3 * 3_600_000;

/** Midnight UTC of the first day of a month (`Date.UTC` would read years 0–99 as 1900–1999). */
function monthStart(year: number, monthIndex: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, monthIndex, 1);
  return d.getTime();
}

/** `YYYY-MM` → its bounds in UTC: [first day 03:00Z, first day of the next month 03:00Z). */
export function periodBounds(period: string): { since: string; until: string } {
  const [year, month] = period.split('-').map(Number);
  return {
    since: new Date(monthStart(year, month - 1) + OFFSET_MS).toISOString(),
    until: new Date(monthStart(year, month) + OFFSET_MS).toISOString(),
  };
}

/** The period holding the instant `at`. */
export function periodOf(at: Date | string): string {
  const local = new Date(new Date(at).getTime() - OFFSET_MS);
  return `${String(local.getUTCFullYear()).padStart(4, '0')}-${String(local.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The period `n` months after `period` (n may be negative). */
export function periodPlus(period: string, n: number): string {
  const [year, month] = period.split('-').map(Number);
  const d = new Date(monthStart(year, month - 1 + n));
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** Closed once the clock has reached its end. */
export const isClosed = (period: string, now: Date): boolean => now.getTime() >= Date.parse(periodBounds(period).until);

// ---------------------------------------------------------------------------------------------------------- CSV

/**
 * Movements read per statement of the CSV. Each page's rows and its text are garbage once sent, but what is live when
 * a young-generation collection runs survives it, and survivors summed over a download make V8 enlarge the young
 * generation (by 16 MB at once) or promote: pages of 5,000 (about 1.5 MB of row objects, 0.6 MB of text) grew the
 * heap with the month's size, pages of 500 keep the live set small whatever the month. With each page's index range
 * starting at the keyset (the read store narrows it) a small page costs about what a large one did per row.
 */
const CSV_PAGE = 500;

/**
 * The CSV of a period of the partner's whole scope, as text chunks: the header, then the movements a page at a time
 * (never the whole month in memory). `from`: the lines the movements carry (what is served), or every line written
 * again from the movement's fields (`ops closings verify` checks that the two agree).
 */
export async function* closingCsv(
  view: ReadView,
  tenant: Tenant,
  period: string,
  page = CSV_PAGE,
  from: 'lines' | 'fields' = 'lines',
): AsyncGenerator<string> {
  yield CSV_HEADER + '\r\n';
  const window = periodBounds(period);
  const scope = { tenant };
  let after: Scalar[] | undefined;
  // Pages are read whole while they hold movements without a line (projected before lines were kept: the months
  // before an upgrade, which come first), so such a month costs one read a page, as before; lines alone otherwise.
  let whole = from === 'fields';
  for (;;) {
    // The lines the projector wrote, read alone (no movement parsed), with the keyset's fields.
    const lines = whole
      ? null
      : await view.find<CsvRow>(LEDGER.movements, {
          where: { ...scopeWhere(scope), recorded_at: { gte: window.since, lt: window.until } },
          orderBy: MOVEMENT_ORDER,
          ...(after ? { after } : {}),
          limit: page,
          fields: CSV_FIELDS,
        });
    let text = '';
    let read: number;
    let last: Scalar[] | undefined;
    if (lines !== null && lines.every((row) => row.csv !== null)) {
      // One copy into a flat string (a concatenation would leave a rope of a node per line to flatten on write).
      text = lines.map((row) => row.csv).join('');
      read = lines.length;
      const end = lines[read - 1];
      if (end) last = [end.recorded_at, end.position, end._id];
    } else {
      // A movement without its line: the page is read whole, and a line missing is written by the function the
      // projector uses, so the bytes are the same.
      const rows = await movementsIn(view, scope, window, page, after);
      let missing = false;
      for (const m of rows) {
        const line = from === 'lines' ? m.csv : undefined;
        if (line === undefined) missing = true;
        text += line ?? csvLine(m);
      }
      whole = missing;
      read = rows.length;
      if (read > 0) last = movementKey(rows[read - 1]);
    }
    if (read === 0) return;
    yield text;
    if (read < page) return;
    after = last;
  }
}

/** What the CSV reads of a movement: its line and its keyset (`_id` comes with every row). */
const CSV_FIELDS = ['recorded_at', 'position', 'csv'] as const;
type CsvRow = Doc & { recorded_at: string; position: number; csv: string | null };

/** The SHA-256 (lower-case hex) of a period's CSV, computed over the same chunks as they are produced. */
export async function closingSha256(view: ReadView, tenant: Tenant, period: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of closingCsv(view, tenant, period)) hash.update(chunk, 'utf8');
  return hash.digest('hex');
}

/** What is kept of a closed period once computed: its movement count and its CSV's hash. */
type KeptClosing = { movements: number; sha256: string };
/** Kept per read store, so a store built elsewhere (`ops closings verify`'s scratch) computes its own. */
const keptClosings = new WeakMap<ReadView, Map<string, KeptClosing>>();
/** Periods kept per read store at most; the oldest kept goes first. */
const KEPT_CLOSINGS = 10_000;

/**
 * A period's movement count and CSV hash, kept once computed, named by the last movement booked before the period's
 * end (`last`, the one its closing balance is read from). Movements are only ever added, in log order, and each is
 * booked at its event's `recorded_at`, which is never before an earlier event's: a movement projected after the
 * period was kept (a projection catching up past the period's end) is the period's new last one, and the count and
 * hash are computed again. A hit costs no walk of the period's rows.
 */
async function keptClosing(
  view: ReadView,
  tenant: Tenant,
  period: string,
  last: MovementDoc | null,
): Promise<KeptClosing> {
  let kept = keptClosings.get(view);
  if (!kept) keptClosings.set(view, (kept = new Map<string, KeptClosing>()));
  const key = JSON.stringify([tenant.partnerId, tenant.env, period, last?._id ?? null, last?.position ?? null]);
  let found = kept.get(key);
  if (found === undefined) {
    const window = periodBounds(period);
    const movements = last !== null && last.recorded_at >= window.since ? await countIn(view, { tenant }, window) : 0;
    found = { movements, sha256: await closingSha256(view, tenant, period) };
    if (kept.size >= KEPT_CLOSINGS) kept.delete(kept.keys().next().value!);
    kept.set(key, found);
  }
  return found;
}

/** A closed period's Closing (whole scope). */
export async function closingOf(view: ReadView, tenant: Tenant, period: string) {
  const scope: LedgerScope = { tenant };
  const window = periodBounds(period);
  const first = await firstMovement(view, scope);
  const lastBeforeSince = await lastBefore(view, scope, window.since);
  const lastBeforeUntil = await lastBefore(view, scope, window.until);
  const opening = lastBeforeSince ? balanceIn(scope, lastBeforeSince) : ZERO;
  const closing = lastBeforeUntil ? balanceIn(scope, lastBeforeUntil) : ZERO;
  const previousIsOurs = first !== null && periodOf(first.recorded_at) < period;
  const { movements, sha256 } = await keptClosing(view, tenant, period, lastBeforeUntil);
  // The previous period closes at this one's opening.
  const previousSha256 = previousIsOurs
    ? (await keptClosing(view, tenant, periodPlus(period, -1), lastBeforeSince)).sha256
    : null;
  return {
    period,
    timezone: PERIOD_TIMEZONE,
    since: window.since,
    until: window.until,
    environment: tenant.env,
    currency: 'BRL' as const,
    opening: answerBalance(opening),
    closing: answerBalance(closing),
    movements,
    net_delta_cents: answerCents(closing.net - opening.net),
    known_expected_commission_delta_cents: answerCents(closing.known - opening.known),
    sha256,
    previous_sha256: previousSha256,
  };
}

/**
 * How far the log is known settled, by the service clock, in one query process: once a wait for the log's head that
 * began at clock time t0 has been answered, every event recorded after that head is booked at a clock read after t0
 * (the stores book at recording, never going back in recording order), so no window ending at or before t0 can gain
 * a movement the projections do not hold already. Later reads of such a window skip the head's round trip through the
 * writer. Owned by the query door (one per process: another process's writes are still covered, the head is the
 * log's); a clock read earlier than the mark (a manual clock moved back) drops it, since bookings then follow a clock
 * the mark was not taken on.
 */
export class SettledWatermark {
  private through: number | undefined;

  /** True when a window ending at `end` (epoch ms) is settled, the clock reading `now`. */
  covers(end: number, now: number): boolean {
    if (this.through === undefined) return false;
    if (now < this.through) {
      this.through = undefined;
      return false;
    }
    return end <= this.through;
  }

  /** A head read after the clock read `startedAt` has been projected. */
  settledAt(startedAt: number): void {
    if (this.through === undefined || startedAt > this.through) this.through = startedAt;
  }
}
