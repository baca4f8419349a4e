/**
 * Debian's Chromium driven by playwright-core, as every browser test launches it: headless, in a throw-away profile,
 * nothing reachable but loopback (every other name fails at once instead of being looked up), and a deadline that
 * bounds a stuck run, not a slow one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** A bound on a stuck run, not on a slow one. */
export const BROWSER_DEADLINE_MS = 60_000;

export interface Browser {
  context: BrowserContext;
  /** The profile folder, where downloads can be saved. */
  userDataDir: string;
  close(): Promise<void>;
}

export interface BrowserOptions {
  /** Test names resolved to 127.0.0.1 (the store's or the image host's). */
  loopbackNames?: readonly string[];
  /** A phone's viewport and certificates from a throw-away test CA accepted. */
  phone?: boolean;
}

export async function launchChromium(options: BrowserOptions = {}): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run infra/topology/scripts/install-system-deps.sh (make test does)`);
  const names = (options.loopbackNames ?? []).map((name) => `MAP ${name} 127.0.0.1, `).join('');
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    ...(options.phone ? { viewport: { width: 412, height: 915 }, ignoreHTTPSErrors: true } : {}),
    timeout: BROWSER_DEADLINE_MS,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--host-resolver-rules=${names}MAP * ~NOTFOUND, EXCLUDE 127.0.0.1`,
    ],
  });
  context.setDefaultTimeout(BROWSER_DEADLINE_MS);
  return {
    context,
    userDataDir,
    close: async () => {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    },
  };
}
