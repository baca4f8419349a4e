/**
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
