/**
 * A reactor whose subscription to the log ends on an error that retrying cannot cure does not stop in silence: the
 * error is logged, `pc_subscription_stops_total{subscriber}` counts it, and readiness answers 503 naming it, until a
 * restart resumes it from its checkpoint. The error is the one a store gives for a start it refuses (EventStoreDB: a
 * position inside a record, InvalidArgument): the reactors' subscriptions are asked, through the real SQLite event
 * store, to start after a position it never handed out.
 */
import { expect } from 'chai';
import pino from 'pino';
import { portOf } from '../../infra/http/gateway.js';
import type { EventStore, SubscribeOptions } from '../../shared-schema/ports/event-store.js';
import { CATEGORIES } from '../../shared-schema/domain/streams.js';
import type { CoverChecker } from '../../shared-schema/ports/cover-checker.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/deadline.js';
import { parsePrometheus } from '../support/prometheus.js';

/** The subscriptions of the batch runner and the cover check (one category each), started where the store refuses. */
let refuseReactorStarts = true;
const REACTOR_CATEGORIES: readonly string[] = [CATEGORIES.job, CATEGORIES.product];
const refusingReactorStarts = (store: EventStore): EventStore =>
  new Proxy(store, {
    get(target, prop) {
      if (prop === 'subscribeToAll') {
        return (options: SubscribeOptions = {}) => {
          const reactor = options.categories?.length === 1 && REACTOR_CATEGORIES.includes(options.categories[0]);
          return target.subscribeToAll(reactor && refuseReactorStarts ? { ...options, afterPosition: 0.5 } : options);
        };
      }
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });

const acceptEveryCover: CoverChecker = async () => ({ ok: true, reasons: [] });

describe('a reactor whose subscription to the log stops', function () {
  let t: TestService;
  const admin = (path: string) => fetch(`http://127.0.0.1:${portOf(t.service.admin)}${path}`);
  const ready = async () => {
    const r = await admin('/admin/v1/health/ready');
    return {
      status: r.status,
      body: (await r.json()) as { status: string; checks: { subscriptions?: Record<string, string> } },
    };
  };
  const logged: { msg: string; subscriber?: string; level: number }[] = [];
  const log = pino(
    { level: 'info' },
    { write: (line: string) => void logged.push(JSON.parse(line) as (typeof logged)[number]) },
  );
  const stops = async (subscriber: string) =>
    parsePrometheus(await (await admin('/metrics')).text()).value('pc_subscription_stops_total', { subscriber }) ?? 0;

  before(async function () {
    if (process.env.TOPOLOGY === 'multi' || process.env.EVENTSTORE_URL) this.skip(); // the wrapper needs the embedded SQLite store
    refuseReactorStarts = true;
    t = await startTestService({ COVER_CHECK: 'on' }, undefined, {
      eventStore: refusingReactorStarts,
      coverChecker: acceptEveryCover,
      log,
    });
  });
  after(async () => t?.close());

  it('is logged, counted per reactor, and makes readiness 503 naming both, until a restart', async () => {
    await until(
      async () => Object.keys((await ready()).body.checks.subscriptions ?? {}).length === 2,
      30_000,
      'both reactors reported stopped',
    );
    const r = await ready();
    expect(r.status).to.equal(503);
    expect(r.body.status).to.equal('not_ready');
    expect(r.body.checks.subscriptions).to.have.all.keys('batch-runner', 'cover-check');
    for (const reason of Object.values(r.body.checks.subscriptions!)) expect(reason).to.match(/^stopped: .*position/);
    expect(await stops('batch-runner')).to.equal(1);
    expect(await stops('cover-check')).to.equal(1);
    expect(await stops('projections')).to.equal(0);
    const errors = logged.filter((l) => l.level >= 50 && l.msg.startsWith('subscription to the event log stopped'));
    expect(errors.map((l) => l.subscriber).sort()).to.deep.equal(['batch-runner', 'cover-check']);

    refuseReactorStarts = false;
    await t.restart();
    await until(async () => (await ready()).status === 200, 30_000, 'ready after the restart');
    expect((await ready()).body.checks.subscriptions).to.equal(undefined);
  });
});
