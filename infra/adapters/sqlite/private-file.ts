/**
 * The SQLite files hold partners' data and key hashes: only the service's user may read them. A database file is
 * made (or set) mode 0600 before SQLite opens it; SQLite then creates its `-wal` and `-shm` files with the mode of
 * the database file, and those already there are set too.
 */
import fs from 'node:fs';

export const PRIVATE_FILE_MODE = 0o600;

export function makePrivate(file: string): void {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return;
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      fs.chmodSync(f, PRIVATE_FILE_MODE);
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'ENOENT') throw err;
    }
  }
}
