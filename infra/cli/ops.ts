/**
 * `ops`: the operator's command line. It calls the admin HTTP API of a running service and prints the answer as
 * JSON on stdout.
 *
 *   node dist/infra/cli/ops.js <command>        (or: npm run ops -- <command>)
 *
 * The commands are one table, commands.ts (`ops help` prints it; so does every usage error); admin-requests.ts runs
 * those that are one admin request each, operations-commands.ts history, projections, export, audit, health and
 * metrics.
 *
 * Environment: ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT, ADMIN_PORT default 8081; a trailing /admin/v1 is
 * accepted: service-address.ts); the token is ADMIN_TOKEN, else the file
 * $DATA_DIR/admin-token that the service writes (DATA_DIR default ./data). The token is never printed.
 * Exit status: 0 done; 1 the service answered a problem (message on stderr) or could not be reached; 2 usage error.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { OPS_USAGE, UsageError, isOperationsCommand } from './commands.js';
import { adminToken, runAdminRequest, type Output } from './admin-requests.js';
import { runOperationsCommand } from './operations-commands.js';
import { serviceAddress } from './service-address.js';

/**
 * Routes the command to operations-commands.ts (history, projections, streams export, audit, health, metrics) or
 * to admin-requests.ts (the rest); `help` and every usage error print the whole usage.
 */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv, io: Output): Promise<number> {
  if (argv.length > 0 && isOperationsCommand(argv)) {
    let token: string;
    try {
      token = adminToken(env);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      io.err(`ops: ${err.message}\n${OPS_USAGE}\n`);
      return 2;
    }
    const code = await runOperationsCommand(argv, {
      adminUrl: serviceAddress(env).adminUrl,
      token,
      out: process.stdout,
      err: process.stderr,
      ...(env.METRICS_TOKEN ? { metricsToken: env.METRICS_TOKEN } : {}),
    });
    if (code !== null) return code;
  }
  return runAdminRequest(argv, env, io);
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
