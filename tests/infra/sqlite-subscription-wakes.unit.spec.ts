/**
 * When a SQLite subscription reads the log again (infra/adapters/sqlite/event-store-subscription.ts): after a read that
 * reached the log's end it waits for a wake-up before the next read, and an append through the store wakes only the
 * subscriptions of the categories it wrote. A stand-in page reader counts the reads; the waker is the real one, with
 * no poll in the way (an interval of an hour).
 */
import { expect } from 'chai';
import { categoryOf, type RecordedEvent } from '../../shared-schema/ports/event-store.js';
import {
  AppendWaker,
  SqliteSubscription,
  SUBSCRIPTION_PAGE_SIZE,
  type PageReader,
} from '../../infra/adapters/sqlite/event-store-subscription.js';

const HOUR = 3_600_000;

function event(row: number, stream: string): RecordedEvent {
  return {
    id: `e${row}`,
    stream,
    revision: 0,
    position: row,
    type: 'T',
    data: {},
    metadata: { recorded_at: '2026-11-27T00:00:00.000Z' },
  };
}

/** A log held in memory, read as the store reads it (rows after `afterRow`, of the categories asked for). */
function memoryLog() {
  const rows: RecordedEvent[] = [];
  let reads = 0;
  const readPage: PageReader = (afterRow, categories, maxCount) => {
    reads += 1;
    const events = rows
      .filter((e) => e.position > afterRow && (!categories || categories.includes(categoryOf(e.stream))))
      .slice(0, maxCount);
    return { events, lastRow: events.length > 0 ? events[events.length - 1].position : afterRow };
  };
  return {
    readPage,
    append: (stream: string) => rows.push(event(rows.length + 1, stream)),
    get reads() {
      return reads;
    },
  };
}

/** Lets pending promise reactions run (the subscription's reads happen in them). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SQLite subscription: when it reads again', () => {
  let waker: AppendWaker;
  const subscriptions: SqliteSubscription[] = [];
  beforeEach(() => {
    waker = new AppendWaker(HOUR, () => false);
  });
  afterEach(async () => {
    for (const s of subscriptions.splice(0)) await s.close();
  });
  const subscribe = (log: ReturnType<typeof memoryLog>, categories?: string[]) => {
    const s = new SqliteSubscription(
      () => 0,
      categories,
      log.readPage,
      waker,
      () => undefined,
    );
    subscriptions.push(s);
    return s;
  };

  it('delivers a short page, then waits for a wake-up instead of reading the end of the log again', async () => {
    const log = memoryLog();
    log.append('product-a');
    log.append('product-b');
    const s = subscribe(log);
    expect((await s.next()).value.stream).to.equal('product-a');
    expect((await s.next()).value.stream).to.equal('product-b');
    const third = s.next();
    await settle();
    expect(log.reads, 'one read for both events, none after them before a wake-up').to.equal(1);
    log.append('product-c');
    waker.wake(new Set(['product']));
    expect((await third).value.stream).to.equal('product-c');
    expect(log.reads).to.equal(2);
  });

  it('an append made between its read and its wait is not missed: the wait was registered with the read', async () => {
    const log = memoryLog();
    log.append('product-a');
    const s = subscribe(log);
    expect((await s.next()).value.stream).to.equal('product-a'); // read done, the page was short
    log.append('product-b'); // committed while the consumer works on product-a
    waker.wake(new Set(['product']));
    expect((await s.next()).value.stream).to.equal('product-b');
  });

  it('reads on at once after a full page (the log may hold more)', async () => {
    const log = memoryLog();
    for (let i = 0; i <= SUBSCRIPTION_PAGE_SIZE; i++) log.append(`product-${i}`);
    const s = subscribe(log);
    for (let i = 0; i <= SUBSCRIPTION_PAGE_SIZE; i++) expect((await s.next()).value.position).to.equal(i + 1);
    expect(log.reads, 'a full page, then the rest').to.equal(2);
  });

  it("an append wakes only the subscriptions of the categories it wrote; a poll or another process's wakes all", async () => {
    const log = memoryLog();
    const jobs = subscribe(log, ['job']);
    const everything = subscribe(log);
    const nextJob = jobs.next();
    const nextAny = everything.next();
    await settle();
    const before = log.reads;
    expect(before).to.equal(2);

    log.append('product-a');
    waker.wake(new Set(['product']));
    expect((await nextAny).value.stream).to.equal('product-a');
    await settle();
    expect(log.reads - before, 'the subscription to every category read; the one to jobs did not').to.equal(1);

    log.append('job-1');
    waker.wake(new Set(['product', 'job']));
    expect((await nextJob).value.stream).to.equal('job-1');

    // A wake-up without categories (a poll that saw another connection commit, notifyAppended) wakes every wait.
    const afterJob = jobs.next();
    await settle();
    const reads = log.reads;
    waker.wake();
    await settle();
    expect(log.reads).to.be.greaterThan(reads);
    log.append('job-2');
    waker.wake(new Set(['job']));
    expect((await afterJob).value.stream).to.equal('job-2');
  });

  it('close() ends a subscription waiting with its page delivered', async () => {
    const log = memoryLog();
    log.append('product-a');
    const s = subscribe(log);
    await s.next();
    const pending = s.next();
    await s.close();
    expect(await pending).to.deep.equal({ value: undefined, done: true });
  });
});
