// A headless browser for the console's tests (test/console/): Debian's `chromium`, driven by
// playwright-core through the executable's path (playwright's own browser downloads cannot be
// fetched here, and CI installs the same package: .ci/run). As root (CI) a missing chromium is
// installed; otherwise the error says what to install. Each page records its console errors, its
// failed requests and every URL it asked for, so a test can say that nothing left weir's host.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureDebianPackage } from './apt.js';

const CANDIDATES = ['/usr/bin/chromium', '/usr/lib/chromium/chromium'];

/** The chromium executable: `which chromium`, or Debian's paths; installed when root and missing. */
export async function chromiumPath(): Promise<string> {
  const found = () => {
    try {
      return execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      return undefined;
    }
  };
  const before = found();
  if (before) return before;
  await ensureDebianPackage('chromium', CANDIDATES);
  const after = found() ?? CANDIDATES.find((c) => existsSync(c));
  if (!after) throw new Error("chromium is installed but not on PATH: the console's browser tests need `chromium` (Debian's package)");
  return after;
}

export interface WatchedPage {
  readonly page: Page;
  /** Console messages of type error, and uncaught exceptions. */
  readonly errors: string[];
  /** Every URL the page requested. */
  readonly requests: string[];
  /** Requests that failed, or got an HTTP status of 400 or more. */
  readonly failures: string[];
}

export interface BrowserOptions {
  /** http.basic_auth's credentials, answered when weir asks. */
  readonly credentials?: { username: string; password: string };
}

export class TestBrowser {
  private constructor(private readonly browser: Browser) {}

  static async launch(): Promise<TestBrowser> {
    const executablePath = await chromiumPath();
    // --no-sandbox: the tests run as root in CI, where Chromium's sandbox refuses to start.
    const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    return new TestBrowser(browser);
  }

  /** A new page of `width` × `height` CSS pixels whose errors and requests are recorded. */
  async page(width = 1280, height = 900, opts: BrowserOptions = {}): Promise<WatchedPage> {
    const context = await this.browser.newContext({
      viewport: { width, height },
      ...(opts.credentials ? { httpCredentials: opts.credentials } : {}),
      colorScheme: 'light',
    });
    const page = await context.newPage();
    const w: WatchedPage = { page, errors: [], requests: [], failures: [] };
    page.on('console', (m) => {
      if (m.type() === 'error') w.errors.push(`${m.text()} (${m.location().url})`);
    });
    page.on('pageerror', (e) => w.errors.push(`uncaught: ${e.message}`));
    page.on('request', (r) => w.requests.push(r.url()));
    page.on('requestfailed', (r) => w.failures.push(`${r.url()}: ${r.failure()?.errorText}`));
    page.on('response', (r) => {
      if (r.status() >= 400) w.failures.push(`${r.url()}: HTTP ${r.status()}`);
    });
    return w;
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}
