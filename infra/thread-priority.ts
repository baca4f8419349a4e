/**
 * The calling thread's name and scheduling priority (nice value), as the system shows them. Linux names threads in
 * `/proc/<pid>/task/<tid>/comm` (what `top -H`, `ps -L` and the search bench show); the service's threads name
 * themselves `pc-…` there, so that an operator sees which one takes the CPU or waits for it.
 *
 * The scheduling priority (nice value) of the calling thread. Linux schedules threads, not processes:
 * `setpriority(PRIO_PROCESS, tid)` on a thread's own id changes that thread only, and `/proc/thread-self` names the
 * calling thread's id. Lowering a nice value (a higher priority) needs CAP_SYS_NICE; raising it never does.
 */
import fs from 'node:fs';
import os from 'node:os';

/** A nice value `offset` from `base`, kept in the range every system takes (-20 to 19). */
export function niceFrom(base: number, offset: number): number {
  return Math.max(-20, Math.min(19, base + offset));
}

/** Sets the calling thread's nice value; null when set, else why not (not Linux, not permitted). */
export function setThreadNice(nice: number): string | null {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    os.setPriority(tid, nice);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Names the calling thread (at most 15 bytes are kept), where the system allows it (Linux); elsewhere, or refused,
 * the thread keeps its name: a name is a help to the operator, never needed.
 */
export function nameThread(name: string): void {
  try {
    fs.writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    /* not Linux, or refused: the thread keeps the name it has */
  }
}
