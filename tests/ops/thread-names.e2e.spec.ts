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

  it('names the projection, event writer and history threads, answers the search on the event loop, and leaves the main thread its name', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-thread-names-'));
    service = await spawnService({ DATA_DIR: dir });
    const pid = service.process.pid!;
    const origin = new URL(service.api).origin;
    const answer = await fetch(`${origin}/api/search?q=chaleira`);
    expect(answer.status).to.equal(200);
    expect(await answer.json()).to.deep.equal({ query: 'chaleira', results: [], next_cursor: null });
    const expected = ['pc-projection', 'pc-event-writer', 'pc-history'];
    await waitFor(
      () => {
        const named = new Set(threadNames(pid).values());
        return expected.every((name) => named.has(name));
      },
      `${expected.join(', ')} named`,
    );
    const names = threadNames(pid);
    expect(
      [...names.values()].filter((name) => name === 'pc-search'),
      'no search thread',
    ).to.deep.equal([]);
    expect(names.get(pid)).to.not.match(/^pc-/);
  });
});
