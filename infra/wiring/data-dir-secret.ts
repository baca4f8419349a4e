/**
 * Secrets of a deployment that may be generated: the configured value, else one generated once into a file of
 * DATA_DIR (mode 0600) that every later start, and every process sharing DATA_DIR, reads. The files are named in
 * SECRET_FILES.
 *
 * Several processes may start at once (two query-api replicas): the value is written to a file of its own, then
 * linked to the final name, which fails when the name exists. A process therefore either publishes a whole file
 * or reads the one another published; it never sees a half-written one. The value is never logged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CursorSecret } from '../../shared-schema/http/pagination.js';
import { WebhookKey } from '../../shared-schema/domain/webhooks.js';
import type { Config } from './config.js';

/** The file of DATA_DIR each generated secret is kept in (`ops backup` copies them all). */
export const SECRET_FILES = {
  adminToken: 'admin-token',
  cursorSecret: 'cursor-secret',
  webhookKey: 'webhook-key',
} as const;

export function dataDirSecret(dataDir: string, file: string, configured?: string): string {
  if (configured) return configured;
  const target = path.join(dataDir, file);
  const existing = readSecret(target);
  if (existing !== undefined) return existing;
  const value = randomBytes(32).toString('base64url');
  const temporary = path.join(dataDir, `.${file}.${process.pid}.${randomBytes(6).toString('hex')}`);
  fs.writeFileSync(temporary, value + '\n', { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(temporary, target); // several processes may race: one publishes, the others read its file
    return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const published = readSecret(target);
    if (published === undefined) throw new Error(`${target} vanished while it was being read`, { cause: err });
    return published;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** The secret kept in `target`; undefined when there is no such file. An empty file is refused (never a secret). */
function readSecret(target: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(target, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const value = text.trim();
  if (value === '') throw new Error(`${target} is empty: remove it to have a new secret generated, or configure one`);
  return value;
}

/** Where the generated admin token is kept when ADMIN_TOKEN is not set. */
export const adminTokenFile = (config: Config): string => path.join(config.dataDir, SECRET_FILES.adminToken);

/** The admin token: ADMIN_TOKEN, or one generated once and kept in DATA_DIR/admin-token (mode 0600). */
export function resolveAdminToken(config: Config): string {
  return dataDirSecret(config.dataDir, SECRET_FILES.adminToken, config.adminToken);
}

/**
 * The key of page cursors (shared-schema/http/pagination.ts): CURSOR_SECRET, or one generated once and kept in
 * DATA_DIR/cursor-secret (mode 0600). Every query door sharing DATA_DIR signs and checks with the same one.
 */
export function resolveCursorSecret(config: Config): CursorSecret {
  return new CursorSecret(dataDirSecret(config.dataDir, SECRET_FILES.cursorSecret, config.cursorSecret));
}

/**
 * The key partners' webhook signing secrets are derived from: WEBHOOK_KEY, or one generated once and kept in
 * DATA_DIR/webhook-key (mode 0600).
 */
export function resolveWebhookKey(config: Config): WebhookKey {
  return new WebhookKey(dataDirSecret(config.dataDir, SECRET_FILES.webhookKey, config.webhookKey));
}
