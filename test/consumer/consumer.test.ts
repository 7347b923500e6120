// engram as a dependency, tested from outside as a user would use it: build the
// library, `npm pack` it, install the tarball into the fixture apps of
// test/consumer/fixtures/ copied to a folder outside the repository, and
//   - node-app: a TypeScript script over fake-indexeddb, type-checked against the
//     packed declarations, before and after `npx engram-model`;
//   - vite-app: a TypeScript page built with `vite build`, served from loopback and
//     driven in Chromium with every other request blocked; then the same under `vite` (dev).
// Installs come from the npm cache when it holds everything (`--offline`), else
// from the registry. Set ENGRAM_CONSUMER_KEEP=1 to keep the apps for a look.
import { lstat, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, NO_CHROMIUM_HELP, chromiumPath } from '../../scripts/chromium.js';
import { ROOT, createApp, packLibrary, repoVersion, run, runOk, start, type Packed, type Started } from './packed-app.js';
import { serveFolder, type StaticServer } from './static-server.js';

const MODEL = 'engram-glove-100d';
const MEMORIES = ['Ana is allergic to peanuts', 'The train to Porto leaves at nine in the morning', 'Pixel the dog loves running on the beach'];
/** What both apps search for: no word in common with the memory it should find. */
const EXPECTED_TOP = 'Ana is allergic to peanuts';
/** The files the package ships besides dist/. */
const SHIPPED_OUTSIDE_DIST = ['LICENSE', 'README.md', 'package.json', 'scripts/build-offline-model.mjs', 'scripts/download-model.mjs', 'scripts/ensure-model.mjs', 'scripts/minilm-model.mjs', 'scripts/model-folder.mjs'];
const PAGE_WAIT = 90_000;

let parent = '';
let packed: Packed;
/** The fixture apps, installed. */
let nodeApp = '';
let viteApp = '';
const timings: Record<string, number> = {};

async function timed<T extends { ms: number }>(label: string, work: Promise<T>): Promise<T> {
  const result = await work;
  timings[label] = Math.round(result.ms);
  return result;
}

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'engram-consumer-'));
  if (parent.startsWith(`${ROOT}/`)) throw new RangeError(`the apps must live outside the repository, got ${parent}`);
  await timed('npm run build', runOk('npm', ['run', 'build'], ROOT, 120_000));
  const started = performance.now();
  packed = await packLibrary(parent);
  timings['npm pack'] = Math.round(performance.now() - started);
  // Both installs at once: they mostly wait on the disk.
  const version = async (p: string): Promise<string> => `${p}@${await repoVersion(p)}`;
  const [node, vite] = await Promise.all([
    Promise.all(['fake-indexeddb', 'typescript', '@types/node'].map(version)).then((packages) => createApp(parent, 'node-app', packed.tarball, packages)),
    Promise.all(['vite', 'typescript'].map(version)).then((packages) => createApp(parent, 'vite-app', packed.tarball, packages)),
  ]);
  nodeApp = node.dir;
  viteApp = vite.dir;
  timings[`installs, in parallel (${node.offline && vite.offline ? 'offline' : 'registry'})`] = Math.round(Math.max(node.install.ms, vite.install.ms));
}, 500_000);

afterAll(async () => {
  console.log(`[consumer] timings (ms): ${JSON.stringify(timings)}`);
  if (parent !== '' && process.env['ENGRAM_CONSUMER_KEEP'] !== '1') await rm(parent, { recursive: true, force: true });
  else if (parent !== '') console.log(`[consumer] apps kept in ${parent}`);
}, 60_000);

describe('npm pack', () => {
  it('pack holds dist, the declarations and the model scripts, nothing of the sources, tests, benchmarks or demo', () => {
    const { files } = packed;
    expect(files).toContain('dist/engram.js');
    expect(files).toContain('dist/types/index.d.ts');
    expect(files.some((f) => /^dist\/assets\/embed-worker-[\w-]+\.js$/.test(f))).toBe(true);
    for (const f of SHIPPED_OUTSIDE_DIST) expect(files).toContain(f);
    // Every file that `exports` and `bin` point at is in the tarball.
    for (const target of packed.entryPoints) expect(files).toContain(target);
    expect(packed.entryPoints).toContain('dist/engram.js');
    const stray = files.filter((f) => !f.startsWith('dist/') && !SHIPPED_OUTSIDE_DIST.includes(f));
    expect(stray).toEqual([]);
    for (const folder of ['lib/', 'test/', 'bench/', 'demo/', 'desktop/', 'models/', 'dist/types/test/']) {
      expect(files.filter((f) => f.startsWith(folder))).toEqual([]);
    }
  });
});

describe('a Node script app (fake-indexeddb)', () => {
  let app = '';
  const modelDir = (): string => join(app, 'node_modules', 'engram', 'models', MODEL);

  beforeAll(() => {
    app = nodeApp;
  });

  it('tsc type-checks the script against the packed declarations', async () => {
    // The app skips library checks as apps do; engram's own declarations must pass without that.
    const [, strict] = await Promise.all([
      timed('node-app tsc', runOk('npx', ['--no', '--', 'tsc', '-p', 'tsconfig.json'], app, 120_000)),
      run('npx', ['--no', '--', 'tsc', '-p', 'tsconfig.json', '--noEmit', '--skipLibCheck', 'false', '--listFiles'], app, 120_000),
    ]);
    const lines = strict.stdout.split('\n');
    expect(lines).toContain(join(app, 'node_modules/engram/dist/types/index.d.ts'));
    expect(lines.filter((l) => l.startsWith('node_modules/engram/'))).toEqual([]);
  }, 200_000);

  it('the script rejects with ModelLoadError naming every folder looked in and `npx engram-model` before the model is built', async () => {
    const result = await run('node', ['build/main.js'], app, 60_000);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`MODEL_LOAD: embedding model "${MODEL}" not found`);
    expect(result.stderr).toContain(modelDir());
    expect(result.stderr).toContain(join(app, 'models', MODEL));
    expect(result.stderr).toContain('`npx engram-model`');
  }, 90_000);

  it('npx engram-model builds the model through the bin link into node_modules/engram/models and says where', async () => {
    expect((await lstat(join(app, 'node_modules/.bin/engram-model'))).isSymbolicLink()).toBe(true);
    const built = await timed('npx engram-model', runOk('npx', ['--no', '--', 'engram-model'], app, 120_000));
    expect(built.stdout).toContain(`[model] wrote ${modelDir()}`);
    expect((await stat(join(modelDir(), 'onnx/model.onnx'))).size).toBeGreaterThan(1_000_000);
    const again = await runOk('npx', ['--no', '--', 'engram-model'], app, 60_000);
    expect(again.stdout).toContain(`[model] ${modelDir()} is complete`);
    expect(again.stdout).not.toContain('wrote');
  }, 200_000);

  it('the script opens a store, adds, searches by meaning, exports and imports the file', async () => {
    const result = await timed('node-app run', runOk('node', ['build/main.js'], app, 60_000));
    const report = JSON.parse(result.stdout) as {
      embedder: { id: string; dimensions: number };
      added: string[];
      search: { memory: string; score: number }[];
      exported: { bytes: number; lines: number };
      imported: { total: number; search: string[] };
    };
    expect(report.embedder).toEqual({ id: MODEL, dimensions: 100 });
    expect(report.added).toEqual(MEMORIES);
    expect(report.search.map((h) => h.memory).sort()).toEqual([...MEMORIES].sort());
    expect(report.search[0]?.memory).toBe(EXPECTED_TOP);
    const scores = report.search.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(report.exported.lines).toBeGreaterThan(MEMORIES.length);
    expect(report.imported).toEqual({ total: MEMORIES.length, search: [EXPECTED_TOP] });
  }, 90_000);
});

/** What the Vite app's page reports in #report. */
interface PageReport {
  embedder: { id: string; dimensions: number; inWorker: boolean };
  added: string[];
  search: { memory: string; score: number }[];
  total: number;
}

/** One visit of the Vite app's page with every request off `origin` blocked. */
interface Visit {
  state: string | null;
  text: string;
  /** Every URL the page and its worker asked for. */
  requested: string[];
  blocked: string[];
  failed: string[];
  pageErrors: string[];
  ms: number;
}

async function visit(browser: Browser, origin: string): Promise<Visit> {
  const context = await browser.newContext();
  const result: Visit = { state: null, text: '', requested: [], blocked: [], failed: [], pageErrors: [], ms: 0 };
  try {
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) {
        await route.continue();
      } else {
        result.blocked.push(url);
        await route.abort();
      }
    });
    context.on('request', (r) => result.requested.push(r.url()));
    context.on('requestfailed', (r) => result.failed.push(`${r.url()}: ${r.failure()?.errorText ?? 'failed'}`));
    context.on('response', (r) => {
      if (r.status() >= 400) result.failed.push(`${r.url()}: HTTP ${r.status()}`);
    });
    const page = await context.newPage();
    page.on('pageerror', (e) => result.pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') result.pageErrors.push(m.text());
    });
    const started = performance.now();
    await page.goto(`${origin}/`);
    await page.waitForSelector('body[data-state="done"], body[data-state="failed"]', { timeout: PAGE_WAIT });
    result.ms = performance.now() - started;
    result.state = await page.getAttribute('body', 'data-state');
    result.text = await page.locator('#report').innerText();
    return result;
  } finally {
    await context.close();
  }
}

/** The page worked: model loaded in the worker, add and search right, nothing blocked or failed. */
function expectWorked(result: Visit): void {
  expect({ state: result.state, text: result.text }).toMatchObject({ state: 'done' });
  const report = JSON.parse(result.text) as PageReport;
  expect(report.embedder).toEqual({ id: MODEL, dimensions: 100, inWorker: true });
  expect(report.added).toEqual(MEMORIES);
  expect(report.total).toBe(MEMORIES.length);
  expect(report.search).toHaveLength(MEMORIES.length);
  expect(report.search[0]?.memory).toBe(EXPECTED_TOP);
  expect(result.blocked).toEqual([]);
  expect(result.failed).toEqual([]);
  expect(result.pageErrors).toEqual([]);
}

/** A free loopback port (for the dev server, which takes one on its command line). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => {
    done();
  }));
  return port;
}

describe('a Vite app in Chromium, offline', () => {
  let app = '';
  let server: StaticServer | undefined;
  let browser: Browser | undefined;
  let dev: Started | undefined;
  const publicModelDir = (): string => join(app, 'public', 'engram-models', MODEL);
  const launch = async (): Promise<Browser> => {
    const executablePath = chromiumPath();
    if (executablePath === undefined) throw new TypeError(NO_CHROMIUM_HELP);
    browser ??= await chromium.launch({ executablePath, args: [...CHROMIUM_ARGS] });
    return browser;
  };

  beforeAll(() => {
    app = viteApp;
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await dev?.stop();
  }, 30_000);

  it('npx engram-model --out public/engram-models writes the model there, --force rebuilds it, a bad flag shows the usage', async () => {
    const built = await runOk('npx', ['--no', '--', 'engram-model', '--out', 'public/engram-models'], app, 120_000);
    expect(built.stdout).toContain(`[model] wrote ${publicModelDir()}`);
    expect(built.stdout).toContain('localModelPath');
    const forced = await runOk('npx', ['--no', '--', 'engram-model', '--force', '--out', 'public/engram-models'], app, 120_000);
    expect(forced.stdout).toContain(`[model] building ${publicModelDir()}: rebuild forced`);
    expect(forced.stdout).toContain(`[model] wrote ${publicModelDir()}`);
    const bad = await run('npx', ['--no', '--', 'engram-model', '--outt', 'x'], app, 60_000);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown argument --outt');
    expect(bad.stderr).toContain('usage: engram-model [--force] [--out DIR]');
    // The default folder was left alone.
    await expect(stat(join(app, 'node_modules/engram/models'))).rejects.toThrow();
  }, 300_000);

  it('tsc type-checks the app and vite build bundles the worker, the ONNX Runtime files and the model', async () => {
    await timed('vite-app tsc + vite build', runOk('npm', ['run', 'build'], app, 180_000));
    const assets = await readdir(join(app, 'dist', 'assets'));
    expect(assets.some((f) => /^embed-worker-.*\.js$/.test(f))).toBe(true);
    expect(assets.some((f) => /^ort-wasm-simd-threaded\.asyncify-.*\.wasm$/.test(f))).toBe(true);
    expect(assets.some((f) => /^ort-wasm-simd-threaded\.asyncify-.*\.mjs$/.test(f))).toBe(true);
    expect((await stat(join(app, 'dist', 'engram-models', MODEL, 'onnx', 'model.onnx'))).isFile()).toBe(true);
  }, 200_000);

  it('the built page loads the model from its own files, adds and searches with every other request blocked, and no request fails', async () => {
    server = await serveFolder(join(app, 'dist'));
    const result = await visit(await launch(), server.origin);
    timings['vite-app built page'] = Math.round(result.ms);
    expectWorked(result);
    // Everything came from the app's own server: the worker, ONNX Runtime's files and the model.
    const served = server.requested;
    expect(served.some((p) => /^\/assets\/embed-worker-.*\.js$/.test(p))).toBe(true);
    expect(served.some((p) => /^\/assets\/ort-wasm-simd-threaded\.asyncify-.*\.wasm$/.test(p))).toBe(true);
    expect(served.some((p) => /^\/assets\/ort-wasm-simd-threaded\.asyncify-.*\.mjs$/.test(p))).toBe(true);
    for (const file of ['config.json', 'tokenizer.json', 'onnx/model.onnx']) expect(served).toContain(`/engram-models/${MODEL}/${file}`);
  }, 150_000);

  it('the dev server (vite) serves the same page working offline', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    dev = start(process.execPath, [join(app, 'node_modules/vite/bin/vite.js'), '--host', '127.0.0.1', '--port', String(port), '--strictPort'], app);
    const answers = (): Promise<number> => fetch(`${origin}/`).then((r) => r.status, () => 0);
    const running = dev;
    await expect
      .poll(answers, { timeout: 30_000, interval: 250 })
      .toBe(200)
      .catch((e: unknown) => {
        throw new RangeError(`vite (dev) did not answer at ${origin}:\n${running.output()}`, { cause: e });
      });
    const result = await visit(await launch(), origin);
    timings['vite-app dev page'] = Math.round(result.ms);
    expectWorked(result);
    const paths = result.requested.map((u) => new URL(u).pathname);
    expect(paths.some((p) => p.endsWith('.wasm'))).toBe(true);
    expect(paths).toContain(`/engram-models/${MODEL}/onnx/model.onnx`);
  }, 120_000);
});
