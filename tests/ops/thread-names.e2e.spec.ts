/**
 * The threads' names of the service process (`node dist/infra/main.js`, Linux): the service's own threads name
 * themselves `pc-…`, so that an operator reading `ps -L -o tid,comm` or `top -H` sees which one takes the CPU.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnService, type ChildService } from '../support/child-service.js';
import { threadNames } from '../support/thread-names.js';
import { waitFor } from '../support/wait-for.js';

describe('the service process: thread names', function () {
  this.timeout(60_000);
  let dir: string;
  let service: ChildService | undefined;

  before(function () {
    if (process.platform !== 'linux') this.skip();
  });
  afterEach(async () => {
    if (service && service.process.exitCode === null) {
      service.process.kill('SIGTERM');
      await service.exited;
    }
    service = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names the search, projection, event writer and history threads, and leaves the main thread its name', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-thread-names-'));
    service = await spawnService({ DATA_DIR: dir, SEARCH_THREADS: '2' });
    const pid = service.process.pid!;
    const origin = new URL(service.api).origin;
    // The search threads start, all of them, with the first search; each names itself as it starts.
    expect((await fetch(`${origin}/api/search?q=chaleira`)).status).to.equal(200);
    const searchThreads = () => [...threadNames(pid).values()].filter((name) => name === 'pc-search').length;
    await waitFor(() => searchThreads() === 2, 'both search threads named');
    const names = threadNames(pid);
    const named = new Set(names.values());
    for (const name of ['pc-projection', 'pc-event-writer', 'pc-history'])
      expect(named.has(name), `${name} in ${[...named].join(', ')}`).to.equal(true);
    expect(names.get(pid)).to.not.match(/^pc-/);
  });

  it('starts no search thread with SEARCH_THREADS=0, and answers the search on the event loop', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-thread-names-'));
    service = await spawnService({ DATA_DIR: dir, SEARCH_THREADS: '0' });
    const origin = new URL(service.api).origin;
    const answer = await fetch(`${origin}/api/search?q=chaleira`);
    expect(answer.status).to.equal(200);
    expect(await answer.json()).to.deep.equal({ query: 'chaleira', results: [], next_cursor: null });
    const named = new Set(threadNames(service.process.pid).values());
    expect(named.has('pc-search'), [...named].join(', ')).to.equal(false);
    expect(named.has('pc-projection')).to.equal(true); // the other threads named as before
  });
});
