/**
 * An operator's write through the admin API is answered once the read models show it: a revoked key is refused by
 * the very next request, in every process. When the projections do not show it within the bound, the answer says so
 * (503 with Retry-After, and a warning in the log) instead of a success the next request would contradict; and the
 * operator's retry, which appends nothing (the key is already revoked in the log), waits for that same revocation
 * rather than answering 204 at once.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createAdminApi } from '../../infra/http/admin/app.js';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { InProcessMessaging } from '../../infra/adapters/messaging/in-process.js';
import { CachedAggregateStates } from '../../infra/adapters/event-store/cached-state.js';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { partnersProjector } from '../../projections/projectors/partners.js';
import { KEYS, PARTNER_COLLECTIONS, type KeyDoc } from '../../shared-schema/read-models/partners.js';
import { sha256Hex } from '../../shared-schema/domain/ids.js';
import { systemClock } from '../../shared-schema/ports/clock.js';

type Line = { level: number; msg: string; position?: number; stream?: string };

describe('admin API: a write answered only once the read models show it', function () {
  let dir: string;
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let runner: ProjectionRunner;
  let server: http.Server;
  let base: string;
  const lines: Line[] = [];

  const ask = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`${base}/admin/v1${p}`, {
      method,
      headers: { Authorization: 'Bearer admin-token', 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, headers: r.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const startRunner = async () => {
    runner = new ProjectionRunner(events, reads, [partnersProjector]);
    await runner.start();
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-admin-settle-'));
    events = SqliteEventStore.open({ path: path.join(dir, 'events.db') });
    reads = SqliteReadStore.open({ path: path.join(dir, 'read.db') });
    await reads.ensureCollections(PARTNER_COLLECTIONS);
    await startRunner();
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
    const admin = createAdminApi({
      deps: {
        events,
        reads,
        messaging: new InProcessMessaging(),
        clock: systemClock,
        repo: new AggregateRepository(new CachedAggregateStates(events)),
        publicBaseUrl: 'http://127.0.0.1',
      },
      token: 'admin-token',
      problemBaseUrl: 'http://127.0.0.1',
      log,
      clock: systemClock,
      // Whichever runner is current: the test stops the projections and starts them again.
      waitForPosition: (position, timeoutMs) => runner.waitFor(position, timeoutMs),
      settleTimeoutMs: 300,
    });
    const handle = admin.callback();
    server = http.createServer((req, res) => void handle(req, res)).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  after(async () => {
    server.close();
    await runner.stop();
    await events.close();
    await reads.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 (Retry-After, a logged warning) while the revocation is not projected, 204 once it is', async () => {
    const partner = await ask('POST', '/partners', { name: 'Loja', partner_type: 'hub' });
    expect(partner.status).to.equal(201);
    const key = await ask('POST', `/partners/${String(partner.body.partner_id)}/keys`, { environment: 'live' });
    expect(key.status).to.equal(201);
    const hash = sha256Hex(String(key.body.api_key));
    expect((await reads.get<KeyDoc>(KEYS, hash))?.revoked).to.equal(false);

    await runner.stop(); // the projections stall
    const first = await ask('DELETE', `/keys/${String(key.body.key_id)}`);
    expect(first.status).to.equal(503);
    expect(Number(first.headers.get('retry-after'))).to.be.within(1, 60);
    expect(lines.some((l) => l.level === 40 && /not projected/.test(l.msg) && l.position! > 0)).to.equal(true);
    // The operator's retry appends nothing (the log holds the revocation) and still waits for it to be projected.
    const retry = await ask('DELETE', `/keys/${String(key.body.key_id)}`);
    expect(retry.status).to.equal(503);
    expect((await reads.get<KeyDoc>(KEYS, hash))?.revoked, 'not projected yet').to.equal(false);

    await startRunner(); // the projections catch up
    const again = await ask('DELETE', `/keys/${String(key.body.key_id)}`);
    expect(again.status).to.equal(204);
    expect((await reads.get<KeyDoc>(KEYS, hash))?.revoked, 'refused from the next request on').to.equal(true);
  });
});
