/** Each thread's name of a process, as an operator reads them (`ps -L -o tid,comm`): Linux's /proc. */
import fs from 'node:fs';

/** Thread id → name (`/proc/<pid>/task/<tid>/comm`; threads that ended meanwhile left out). */
export function threadNames(pid: number = process.pid): Map<number, string> {
  const names = new Map<number, string>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      names.set(Number(tid), fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
    } catch {
      // the thread ended while we read
    }
  }
  return names;
}
