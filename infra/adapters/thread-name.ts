/**
 * Names the calling thread, as the system shows it: Linux names threads in `/proc/<pid>/task/<tid>/comm` (what
 * `top -H` and `ps -L` show). The service's threads name themselves `pc-…` there, so that an operator sees which one
 * takes the CPU. At most 15 bytes are kept; elsewhere, or refused, the thread keeps its name: a name is a help to the
 * operator, never needed.
 */
import fs from 'node:fs';

export function nameThread(name: string): void {
  try {
    fs.writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    /* not Linux, or refused: the thread keeps the name it has */
  }
}
