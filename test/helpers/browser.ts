/**
 * Headless Chromium for page tests: Debian's /usr/bin/chromium driven by playwright-core (never a browser
 * that a test tool downloads), with every console error, page error, failed or refused request recorded.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Why the page tests cannot run here, or false. Under CI a missing browser is no reason to skip: the
 * test runs and launchChromium fails with the install hint (.ci/run installs it).
 */
export function chromiumSkipReason(): string | false {
  if (existsSync(CHROMIUM) || process.env.CI) return false;
  return `${CHROMIUM} is missing: apt-get install -y chromium to run the browser tests`;
}

/** Launches headless Chromium (a fresh profile per launch) and closes it in `t.after`. */
export async function launchChromium(t: { after: (fn: () => unknown) => void }): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // as root Chromium needs --no-sandbox; the rest keeps it off the network this machine does not have
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.after(() => browser.close());
  return browser;
}

/** Everything a user would see go wrong on a page: console errors, uncaught errors, failed requests. */
export function recordProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return problems;
}
