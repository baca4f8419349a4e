/**
 * Debian's Chromium driven by playwright-core, as every browser test launches it: headless, in a throw-away profile,
 * nothing reachable but loopback (every other name fails at once instead of being looked up), and a deadline that
 * bounds a stuck run, not a slow one. Beside it, what the browser tests do with a page: open one whose
 * Content-Security-Policy reports are collected, check that it fits a phone, save its screenshot when asked for.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

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

/**
 * A new page of `context` whose Content-Security-Policy reports land in `cspReports`: what Chromium logs about a
 * refused script, style, image or form, and every `securitypolicyviolation` event (reported through the console by
 * an init script, which the page's own policy does not govern).
 */
export async function watchedPage(context: BrowserContext): Promise<{ page: Page; cspReports: string[] }> {
  const page = await context.newPage();
  const cspReports: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspReports.push(m.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.log(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  return { page, cspReports };
}

/** The page fits a phone's width: no sideways scrolling. */
export async function expectFitsPhone(page: Page, name: string): Promise<void> {
  const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  expect(fits, `${name} fits a phone's width`).to.equal(true);
}

export interface Screenshots {
  /** Whether the run was asked for screenshots. */
  readonly enabled: boolean;
  /** Saves the whole page as docs/screenshots/<prefix><name>.png when enabled; nothing otherwise. */
  save(page: Page, name: string): Promise<void>;
}

/** Screenshots into docs/screenshots/ when the environment variable `variable` is `1` (`SHOPPER_SCREENSHOTS=1`). */
export function screenshots(variable: string, prefix = ''): Screenshots {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const dir = process.env[variable] === '1' ? path.join(root, 'docs', 'screenshots') : null;
  return {
    enabled: dir !== null,
    async save(page, name) {
      if (!dir) return;
      fs.mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: path.join(dir, `${prefix}${name}.png`), fullPage: true });
    },
  };
}
