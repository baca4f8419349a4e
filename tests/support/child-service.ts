/**
 * The real service as a child process (`node dist/infra/main.js`) on loopback ports chosen by the OS: for tests that
 * kill it. The child announces its addresses in its start-up log line (pino JSON on stdout), which is parsed here;
 * the rest of its output is drained (and the last lines kept for error messages).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../infra/main.js', import.meta.url));

export interface ChildService {
  /** `http://127.0.0.1:<port>/v1` */
  api: string;
  /** `http://127.0.0.1:<port>/admin/v1` */
  admin: string;
  process: ChildProcess;
  /** Resolves when the child has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Last lines the child wrote (stdout and stderr), for failure messages. */
  tail(): string;
}

/** `nodeArgs` go to node before the script (a CPU profile); `main` is another build's entry (benchmark A/B). */
export async function spawnService(
  env: Record<string, string>,
  startTimeoutMs = 15_000,
  nodeArgs: readonly string[] = [],
  main = MAIN,
): Promise<ChildService> {
  const child = spawn(process.execPath, [...nodeArgs, main], {
    // COVER_CHECK off unless asked: test host names must never reach DNS (see tests/support/cover-env.ts).
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      ADMIN_HOST: '127.0.0.1',
      PORT: '0',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
      COVER_CHECK: 'off',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (line: string) => {
    lines.push(line);
    if (lines.length > 50) lines.shift();
  };
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  readline.createInterface({ input: child.stderr }).on('line', keep);
  const started = new Promise<{ api: string; admin: string }>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      keep(line);
      if (!line.includes('partner commerce service started')) return;
      try {
        const entry = JSON.parse(line) as { api?: string; admin?: string };
        if (entry.api && entry.admin) resolve({ api: entry.api, admin: entry.admin });
      } catch (err) {
        reject(err);
      }
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`the service exited (${code ?? signal}) before it started:\n${lines.join('\n')}`)),
    );
    setTimeout(
      () => reject(new Error(`the service did not start within ${startTimeoutMs} ms:\n${lines.join('\n')}`)),
      startTimeoutMs,
    ).unref();
  });
  try {
    const { api, admin } = await started;
    return { api, admin, process: child, exited, tail: () => lines.join('\n') };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}
