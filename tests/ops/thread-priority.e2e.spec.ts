/**
 * The threads' priorities and names of the service process (`node dist/infra/main.js`, Linux): the event loop at
 * EVENT_LOOP_NICE, the search threads at SEARCH_NICE, both counted from the process's own nice value, every other
 * thread at the process's; the service's own threads named `pc-…`. Read from /proc, as an operator would
 * (`ps -L -o tid,nice,comm`). Values above the process's are used: raising a nice value needs no privilege.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnService, type ChildService } from '../support/child-service.js';
import { threadNames, threadNiceValues } from '../support/thread-nice.js';
import { waitFor } from '../support/wait-for.js';

describe('the service process: thread priorities (EVENT_LOOP_NICE, SEARCH_NICE)', function () {
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

  it('runs the event loop and the search threads at their values from the process’s, the other threads at its own', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-priority-'));
    const base = os.getPriority(process.pid); // the child starts with this process's nice value
    service = await spawnService({ DATA_DIR: dir, EVENT_LOOP_NICE: '3', SEARCH_NICE: '6', SEARCH_THREADS: '2' });
    const pid = service.process.pid!;
    const origin = new URL(service.api).origin;
    // The search threads start, all of them, with the first search; each names itself and takes its nice value as
    // it starts, which the one that answered did before answering and the other does when it gets there.
    expect((await fetch(`${origin}/api/search?q=chaleira`)).status).to.equal(200);
    const searchThreadsAtTheirValue = () => {
      const values = threadNiceValues(pid);
      return [...threadNames(pid)].filter(
        ([tid, name]) => name === 'pc-search' && values.get(tid) === Math.min(19, base + 6),
      ).length;
    };
    await waitFor(() => searchThreadsAtTheirValue() === 2, 'both search threads named and at SEARCH_NICE');
    const nice = threadNiceValues(pid);
    expect(nice.get(pid), 'the event loop (the main thread)').to.equal(Math.min(19, base + 3));
    const others = [...nice].filter(([tid]) => tid !== pid).map(([, n]) => n);
    expect(others.filter((n) => n === Math.min(19, base + 6))).to.have.length(2);
    expect(
      others.filter((n) => n !== Math.min(19, base + 6)).every((n) => n === base),
      `threads: ${others.join(', ')}`,
    ).to.equal(true);
    expect(others.length).to.be.greaterThan(4); // the projection, event store writer, history, libuv and V8 threads
    // The search threads are the two named so; the projection, the event store's writer and the history file's
    // thread name themselves too (the main thread keeps the process's name).
    const names = threadNames(pid);
    const searchThreads = [...names].filter(([, name]) => name === 'pc-search').map(([tid]) => tid);
    expect(searchThreads).to.have.length(2);
    for (const tid of searchThreads) expect(nice.get(tid)).to.equal(Math.min(19, base + 6));
    const named = new Set(names.values());
    for (const name of ['pc-projection', 'pc-event-writer', 'pc-history'])
      expect(named.has(name), `${name} in ${[...named].join(', ')}`).to.equal(true);
    expect(names.get(pid)).to.not.match(/^pc-/);
  });
});
