/** The SQLite files of DATA_DIR hold partners' data and key hashes: only the service's user may read them. */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, storeBody, type TestService } from '../support/service.js';

describe('the SQLite files are private to the service (mode 0600)', function () {
  let t: TestService;
  let umask: number;
  before(async function () {
    if (process.env.TOPOLOGY === 'multi' || process.env.EVENTSTORE_URL || process.env.MONGO_URL) this.skip();
    umask = process.umask(0o022); // a usual umask: files would be readable by all
    t = await startTestService();
  });
  after(async () => {
    await t?.close();
    if (umask !== undefined) process.umask(umask);
  });

  it('creates events.db, read.db, history.db and their -wal / -shm files readable by the owner only', async () => {
    const p = await t.partner();
    expect((await p.api.put('/stores/loja-f', storeBody())).status).to.equal(200);
    const files = ['events.db', 'read.db', 'history.db'].flatMap((f) => [f, `${f}-wal`, `${f}-shm`]);
    const modes = Object.fromEntries(
      files
        .map((f) => path.join(t.dataDir, f))
        .filter((f) => fs.existsSync(f))
        .map((f) => [path.basename(f), (fs.statSync(f).mode & 0o777).toString(8)]),
    );
    expect(Object.keys(modes)).to.include.members(['events.db', 'events.db-wal', 'read.db', 'read.db-wal']);
    for (const [file, mode] of Object.entries(modes)) expect(mode, file).to.equal('600');
  });

  it('makes files an older version left readable private when it opens them', async () => {
    for (const f of ['events.db', 'read.db']) fs.chmodSync(path.join(t.dataDir, f), 0o644);
    await t.restart(); // closes the service, then opens the same DATA_DIR
    for (const f of ['events.db', 'read.db']) {
      expect((fs.statSync(path.join(t.dataDir, f)).mode & 0o777).toString(8), f).to.equal('600');
    }
  });
});
