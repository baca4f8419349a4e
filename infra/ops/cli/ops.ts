/**
 * `ops`: the operator's command line. It calls the admin HTTP API of a running service and prints the answer on
 * stdout: as tables for a person, as JSON with `--json` (anywhere on the line).
 *
 *   node dist/infra/ops/cli/ops.js <command>        (or: npm run ops -- <command>)
 *
 * The commands are one table, commands.ts (`ops help` prints it; a usage error prints that command's usage);
 * admin-requests.ts runs those that are one admin request each, operations-commands.ts history, projections, export,
 * audit, health and metrics, backup-commands.ts backup and restore (files of DATA_DIR, on the service's host).
 *
 * Environment: ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT, ADMIN_PORT default 8081; a trailing /admin/v1 is
 * accepted: service-address.ts); the token is ADMIN_TOKEN, else the file
 * $DATA_DIR/admin-token that the service writes (DATA_DIR default ./data). The token is never printed.
 * Exit status: 0 done; 1 the service answered a problem (message on stderr) or could not be reached; 2 usage error.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError, isOperationsCommand, usageFor } from './commands.js';
import { adminToken, runAdminRequest, type Output } from './admin-requests.js';
import { runOperationsCommand } from './operations-commands.js';
import { serviceAddress } from './service-address.js';
import { isFilesCommand, runFilesCommand } from './backup-commands.js';

/**
 * Routes the command to operations-commands.ts (history, projections, streams export, audit, health, metrics) or
 * to admin-requests.ts (the rest); `--json` is taken out of the line first.
 */
export async function main(line: readonly string[], env: NodeJS.ProcessEnv, io: Output): Promise<number> {
  const json = line.includes('--json');
  const argv = line.filter((a) => a !== '--json');
  if (isFilesCommand(argv)) {
    try {
      return runFilesCommand(argv, env, io, json);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      io.err(`ops: ${err.message}\n${usageFor(argv)}\n`);
      return 2;
    }
  }
  if (argv.length > 0 && isOperationsCommand(argv)) {
    let token: string;
    try {
      token = adminToken(env);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      io.err(`ops: ${err.message}\n${usageFor(argv)}\n`);
      return 2;
    }
    const code = await runOperationsCommand(argv, {
      adminUrl: serviceAddress(env).adminUrl,
      token,
      json,
      out: process.stdout,
      err: process.stderr,
      ...(env.METRICS_TOKEN ? { metricsToken: env.METRICS_TOKEN } : {}),
    });
    if (code !== null) return code;
  }
  return runAdminRequest(argv, env, io, json);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2), process.env, {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`ops: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
