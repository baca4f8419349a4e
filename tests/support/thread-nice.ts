/** Each thread's nice value and name of a process, as an operator reads them (`ps -L -o tid,nice,comm`): Linux's /proc. */
import fs from 'node:fs';

/** Thread id → nice value (field 19 of `/proc/<pid>/task/<tid>/stat`, counted after the command name). */
export function threadNiceValues(pid: number = process.pid): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      values.set(Number(tid), Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]));
    } catch {
      // the thread ended while we read
    }
  }
  return values;
}

/** Thread id → name (`/proc/<pid>/task/<tid>/comm`). */
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
