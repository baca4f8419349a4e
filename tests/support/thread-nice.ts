/** Each thread's nice value and name of a process, as an operator reads them (`ps -L -o tid,nice,comm`): Linux's /proc. */
import fs from 'node:fs';

/** Thread id → what `read` makes of the thread's `/proc/<pid>/task/<tid>/<file>` (threads that ended meanwhile left out). */
function perThread<T>(pid: number, file: string, read: (text: string) => T): Map<number, T> {
  const values = new Map<number, T>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      values.set(Number(tid), read(fs.readFileSync(`/proc/${pid}/task/${tid}/${file}`, 'utf8')));
    } catch {
      // the thread ended while we read
    }
  }
  return values;
}

/** Thread id → nice value (field 19 of `/proc/<pid>/task/<tid>/stat`, counted after the command name). */
export function threadNiceValues(pid: number = process.pid): Map<number, number> {
  return perThread(pid, 'stat', (stat) => Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]));
}

/** Thread id → name (`/proc/<pid>/task/<tid>/comm`). */
export function threadNames(pid: number = process.pid): Map<number, string> {
  return perThread(pid, 'comm', (comm) => comm.trim());
}
