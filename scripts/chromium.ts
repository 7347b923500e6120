/**
 * The Chromium that browser tests, benchmarks and the demo's end-to-end test
 * drive, and the flags it needs on a machine with a closed network. Node side only.
 */
import { existsSync } from 'node:fs';

/** Flags for headless Chromium: no sandbox (root in CI), no GPU, no background network. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** CHROMIUM_PATH, else Debian's Chromium, else undefined (Playwright's own browser, if installed). */
export function chromiumPath(): string | undefined {
  const candidates = [
    process.env['CHROMIUM_PATH'],
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
  ];
  return candidates.find((p): p is string => typeof p === 'string' && p !== '' && existsSync(p));
}

/** How to get a Chromium when none is found. */
export const NO_CHROMIUM_HELP =
  'No Chromium found. Install one (apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium/Chrome executable.';
