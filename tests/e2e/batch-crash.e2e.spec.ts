/**
 * The service as a child process (`node dist/infra/main.js`), killed with SIGKILL while a 1000-item batch is half
 * processed, then started again on the same DATA_DIR: the job reaches `done`, every item was applied exactly once,
 * and the totals add up.
 *
 * The gate that holds the batch half done, whatever the machine's speed: a trigger the test puts on the event log
 * refuses every chunk record of the job after the first. The runner records chunk 0, applies the items of chunk 1,
 * fails to record it and retries for ever: the service is killed in the middle of a pass, with items applied and not
 * recorded, the case the restart must recognise.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { client, storeBody, type Client } from '../support/service.js';
import { until, within } from '../support/deadline.js';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { streams } from '../../shared-schema/domain/streams.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../infra/main.js');
const ADMIN_TOKEN = 'crash-test-admin-token-0123456789';

interface Child {
  process: ChildProcess;
  api: string;
  admin: Client;
}

/** Starts the service and reads its addresses from the start-up log line. */
async function startChild(dataDir: string): Promise<Child> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PORT: '0',
      ADMIN_PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      COVER_CHECK: 'off',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const started = new Promise<{ api: string; admin: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`service exited with ${code} before it started`)));
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; api?: string; admin?: string };
        if (entry.msg === 'partner commerce service started') resolve({ api: entry.api!, admin: entry.admin! });
      } catch {
        /* not a log line */
      }
    });
  });
  const urls = await within(started, 15_000, 'service start');
  for (const url of Object.values(urls)) expect(new URL(url).hostname).to.equal('127.0.0.1');
  child.stdout.resume();
  return { process: child, api: urls.api, admin: client(urls.admin, ADMIN_TOKEN) };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('batch job across a crash (service as a child process, SIGKILL)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let child: Child | null = null;

  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-batch-crash-'));
  });
  after(async () => {
    if (child) {
      child.process.kill('SIGTERM');
      await within(exited(child.process), 15_000, 'service stop');
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes a half-processed 1000-item batch after SIGKILL and applies every item exactly once', async () => {
    child = await startChild(dataDir);
    const partner = await child.admin.post('/partners', { name: 'Crash Hub', partner_type: 'hub' });
    const partnerId = partner.body.partner_id as string;
    const key = await child.admin.post(`/partners/${partnerId}/keys`, { environment: 'live' });
    let api = client(child.api, key.body.api_key);
    expect((await api.put('/stores/loja-crash', storeBody())).status).to.equal(200);
    const updatedAt = new Date().toISOString();
    const items = Array.from({ length: 1000 }, (_, i) => ({
      op: 'upsert',
      sku: `crash-${i}`,
      product: {
        store_id: 'loja-crash',
        title: `Produto ${i}`,
        product_url: `https://shop.test/p/${i}`,
        image_urls: ['https://cdn.shop.test/1.jpg'],
        price_cents: 1000 + i,
        available: true,
        updated_at: updatedAt,
      },
    }));
    const eventsDb = path.join(dataDir, 'events.db');
    const gate = new Database(eventsDb);
    gate.pragma('busy_timeout = 20000');
    gate.exec(`CREATE TRIGGER hold_later_chunks BEFORE INSERT ON events
      WHEN NEW.type = 'BatchChunkProcessed'
        AND EXISTS (SELECT 1 FROM events WHERE stream = NEW.stream AND type = 'BatchChunkProcessed')
      BEGIN SELECT RAISE(ABORT, 'held by the test: later chunks are not recorded'); END`);
    const applied = gate.prepare<[], { n: number }>("SELECT count(*) AS n FROM events WHERE type = 'ProductUpserted'");

    const posted = await api.post('/products/batch', { items });
    expect(posted.status).to.equal(202);
    const jobId = posted.body.job_id as string;

    // Chunk 0 recorded, the items of chunk 1 applied, its record refused: kill in the middle of that pass.
    let atKill: any;
    await until(
      async () => {
        atKill = (await api.get(`/jobs/${jobId}`)).body;
        return atKill.state === 'running' && atKill.totals.pending > 0 && applied.get()!.n === 100;
      },
      20_000,
      'chunk 0 recorded and the items of chunk 1 applied',
    );
    child.process.kill('SIGKILL');
    await exited(child.process);
    expect(atKill.totals).to.include({ received: 1000, pending: 50 });
    expect(applied.get()!.n).to.equal(100); // no pass after the held one
    gate.exec('DROP TRIGGER hold_later_chunks');
    gate.close();

    const stream = streams.job({ partnerId, env: 'live' }, jobId);
    const log = SqliteEventStore.open({ path: eventsDb });
    try {
      const beforeRestart = (await log.readStream(stream)).map((e) => e.type);
      expect(beforeRestart.filter((t) => t === 'BatchChunkProcessed')).to.have.length(1);
      expect(beforeRestart).to.not.include('BatchDone');

      child = await startChild(dataDir);
      api = client(child.api, key.body.api_key);
      let job: any;
      await until(
        async () => {
          job = (await api.get(`/jobs/${jobId}`)).body;
          return job.state === 'done';
        },
        30_000,
        'job done after restart',
      );
      expect(job.totals).to.deep.equal({ received: 1000, accepted: 0, rejected: 0, pending: 1000, removed: 0 });
      expect(job.errors).to.deep.equal([]);

      const jobLog = await log.readStream(stream);
      expect(jobLog.filter((e) => e.type === 'BatchStarted')).to.have.length(1);
      expect(jobLog.filter((e) => e.type === 'BatchDone')).to.have.length(1);
      const indexes = jobLog
        .filter((e) => e.type === 'BatchChunkProcessed')
        .flatMap((e) => (e.data as { outcomes: { index: number }[] }).outcomes.map((o) => o.index))
        .sort((x, y) => x - y);
      expect(indexes).to.deep.equal(items.map((_, i) => i));
      for (let i = 0; i < items.length; i++) {
        const events = await log.readStream(streams.product({ partnerId, env: 'live' }, `crash-${i}`));
        expect(
          events.map((e) => [e.type, e.metadata.job_id, e.metadata.job_item]),
          `crash-${i}`,
        ).to.deep.equal([['ProductUpserted', jobId, i]]);
      }
      expect((await api.get('/products/crash-999')).body).to.include({ state: 'pending', sku: 'crash-999' });
    } finally {
      await log.close();
    }
  });
});
