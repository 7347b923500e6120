/**
 * Runs a benchmark page in real Chromium: starts a Vite dev server on loopback,
 * opens the page with Playwright (Debian's Chromium or CHROMIUM_PATH), relays
 * the page's console lines as progress, and returns what the page posts to
 * `window.__benchResult`. Node side only.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { chromium } from 'playwright';
import { createServer } from 'vite';
import { CHROMIUM_ARGS, NO_CHROMIUM_HELP, chromiumPath } from '../scripts/chromium.js';

/** The Chromium executable benchmarks drive; exits with help when there is none. */
export function requireChromium(): string {
  const found = chromiumPath();
  if (found === undefined) {
    console.error(NO_CHROMIUM_HELP);
    process.exit(2);
  }
  return found;
}

/**
 * The CPU time every process has used so far, in nanoseconds, from the root
 * control group (Linux, cgroup v1 or v2); undefined where it cannot be read.
 */
export function rootCgroupCpuNs(
  read: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): number | undefined {
  try {
    const ns = Number(read('/sys/fs/cgroup/cpuacct/cpuacct.usage').trim());
    if (Number.isFinite(ns) && ns > 0) return ns;
  } catch {
    // not cgroup v1: try v2
  }
  try {
    const usec = /^usage_usec (\d+)$/m.exec(read('/sys/fs/cgroup/cpu.stat'))?.[1];
    if (usec !== undefined) return Number(usec) * 1000;
  } catch {
    // neither: the kernel's per-core tick counts below
  }
  return undefined;
}

/**
 * CPU time every core of the machine has spent busy so far, in milliseconds,
 * and the number of cores. From the root control group's counter where there
 * is one (nanoseconds: a stage of a tenth of a second reads true); otherwise
 * from the per-core times, which move in 10 ms ticks (such a stage could read
 * more cores busy than the machine has).
 */
export function machineCpu(): { busyMs: number; cores: number } {
  const all = cpus();
  const ns = rootCgroupCpuNs();
  const busyMs =
    ns !== undefined
      ? ns / 1e6
      : all.reduce((sum, c) => sum + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0);
  return { busyMs, cores: all.length };
}

/**
 * A Vite dev server over the repository on loopback (no HMR, no watching: edits
 * elsewhere in the tree must not reload a running benchmark). Packages that
 * find their WASM or data files next to their own module (`new URL(…,
 * import.meta.url)`: PGlite and its extensions) are served from node_modules
 * as they are, not pre-bundled, so those files are found there and nothing
 * comes from a CDN.
 */
export async function startBenchServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const root = resolve(import.meta.dirname, '..');
  const server = await createServer({
    root,
    configFile: false,
    logLevel: 'error',
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null, fs: { allow: [root] } },
    optimizeDeps: {
      exclude: [
        '@huggingface/transformers',
        'onnxruntime-web',
        '@electric-sql/pglite',
        '@electric-sql/pglite-pgvector',
      ],
      include: ['libsodium-wrappers'],
    },
  });
  await server.listen();
  const address = server.httpServer?.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { port, close: () => server.close() };
}

/** The flags benchmark pages run with: precise memory figures, and gc() for measuring memory. */
export const BENCH_CHROMIUM_ARGS: readonly string[] = [
  ...CHROMIUM_ARGS,
  '--enable-precise-memory-info',
  '--js-flags=--expose-gc',
];

/**
 * Opens `page` (a path under the repository, e.g. 'bench/pages/recall-search.html')
 * with `query` parameters and waits up to `timeoutMs` for its result.
 */
export async function runPage<T>(
  page: string,
  query: Record<string, string>,
  timeoutMs = 30 * 60_000,
  profile?: (p: unknown) => void,
): Promise<T> {
  const server = await startBenchServer();
  const port = server.port;
  const browser = await chromium.launch({ executablePath: requireChromium(), args: [...BENCH_CHROMIUM_ARGS] });
  try {
    const tab = await browser.newPage();
    tab.on('console', (msg) => {
      console.log(`  [page] ${msg.text()}`);
    });
    tab.on('pageerror', (err) => {
      console.error(`  [page error] ${err.message}`);
    });
    // The page's V8 heap without ArrayBuffer backing stores (performance.memory counts a grown WASM memory's buffer too).
    const heapCdp = await tab.context().newCDPSession(tab);
    await tab.exposeFunction('__benchHeapUsage', async () => (await heapCdp.send('Runtime.getHeapUsage')) as unknown);
    // The machine's CPU time so far (every process: the browser's IndexedDB backend works outside the page).
    await tab.exposeFunction('__benchCpu', () => machineCpu());
    const qs = new URLSearchParams(query).toString();
    // With `profile`, a Chromium CPU profile (DevTools Protocol) of the whole page run is handed to it.
    const cdp = profile === undefined ? undefined : await tab.context().newCDPSession(tab);
    if (cdp !== undefined) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
    }
    await tab.goto(`http://127.0.0.1:${port}/${page}?${qs}`);
    await tab.waitForFunction(
      () => (window as unknown as { __benchResult?: unknown }).__benchResult !== undefined,
      undefined,
      {
        timeout: timeoutMs,
        polling: 500,
      },
    );
    const result = await tab.evaluate(() => (window as unknown as { __benchResult: unknown }).__benchResult);
    if (cdp !== undefined && profile !== undefined) profile((await cdp.send('Profiler.stop')).profile);
    const failure = (result as { error?: string }).error;
    if (typeof failure === 'string') throw new Error(`benchmark page failed: ${failure}`);
    return result as T;
  } finally {
    await browser.close();
    await server.close();
  }
}
