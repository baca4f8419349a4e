import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventStore } from '../../infra/sqlite/event-store.js';
import { eventStoreContract } from './event-store-contract.js';

for (const writerThread of [false, true]) {
  eventStoreContract(writerThread ? 'SQLite, writer thread' : 'SQLite', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'event-store-contract-'));
    const store = SqliteEventStore.open({ path: path.join(dir, 'events.db'), writerThread });
    return {
      store,
      cleanup: async () => {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  });
}
