/**
 * A real headless browser for the dashboard tests: Debian's `chromium`, driven by puppeteer-core (which
 * downloads no browser of its own). When no Chromium is installed and this process may install one
 * (root, on a machine with apt-get), it is installed here with apt; only where neither is possible do
 * the tests skip, saying why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome-stable', '/usr/bin/google-chrome'];
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** An installed Chromium (STRATA_TEST_CHROMIUM names one explicitly), or null. */
export function findChromium(): string | null {
  const named = process.env.STRATA_TEST_CHROMIUM;
  if (named) return existsSync(named) ? named : null;
  return CANDIDATES.find((path) => existsSync(path)) ?? null;
}

/**
 * The path of a Chromium to drive, installing Debian's package first when none is there and this process
 * may: `{ path }`, or `{ reason }` when no browser can be had here. Synchronous, so a test file can decide
 * at load time whether its suite runs.
 */
export function ensureChromium(): { path: string } | { reason: string } {
  const found = findChromium();
  if (found) return { path: found };
  if (process.platform !== 'linux' || process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    return { reason: 'no Chromium is installed and this process cannot install one (needs root and apt-get); install Debian\'s chromium package or set STRATA_TEST_CHROMIUM' };
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args: string[]) => spawnSync('apt-get', args, { env, encoding: 'utf8', timeout: INSTALL_TIMEOUT_MS });
  let install = apt(['install', '-y', 'chromium']);
  if (install.status !== 0) {
    // a fresh machine may have no package lists yet
    apt(['update']);
    install = apt(['install', '-y', 'chromium']);
  }
  const installed = findChromium();
  if (installed) return { path: installed };
  return { reason: `apt-get install chromium failed (status ${install.status}): ${(install.stderr ?? '').slice(-400)}` };
}

/** Chromium started headless, with no network use of its own (no updates, sync or first-run pages). */
export function launchChromium(executablePath: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox', // root in a container has no user namespace sandbox
      '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic', '--lang=en-US',
    ],
  });
}
