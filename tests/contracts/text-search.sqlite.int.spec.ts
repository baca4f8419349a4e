import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteReadStore } from '../../infra/sqlite/read-store.js';
import { textSearchContract } from './text-search-contract.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
textSearchContract('SQLite FTS5', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-text-'));
  dirs.push(dir);
  return SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
});
