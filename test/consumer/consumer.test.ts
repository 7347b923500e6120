// engram as a dependency, tested from outside as a user would use it: build the
// library, `npm pack` it, install the tarball into the fixture apps of
// test/consumer/fixtures/ copied to a folder outside the repository, and
//   - node-app: a TypeScript script over fake-indexeddb, type-checked against the
//     packed declarations, before and after `npx engram-model`;
//   - vite-app: a TypeScript page built with `vite build`, served from loopback and
//     driven in Chromium with every other request blocked; then the same under `vite` (dev);
//   - readme-app: every TypeScript block of README.md, type-checked against the packed
//     declarations with `ai` and `@langchain/core` installed; the Node script and the
//     adapter examples run (with the frameworks' test models, no network).
// node-app has neither framework: the core loads without them.
// Installs come from the npm cache when it holds everything (`--offline`), else
// from the registry. Set ENGRAM_CONSUMER_KEEP=1 to keep the apps for a look.
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, NO_CHROMIUM_HELP, chromiumPath } from '../../scripts/chromium.js';
import {
  ROOT,
  createApp,
  packLibrary,
  repoVersion,
  run,
  runOk,
  start,
  type Packed,
  type Started,
} from './packed-app.js';
import { serveFolder, type StaticServer } from './static-server.js';

const MODEL = 'engram-glove-100d';
const MEMORIES = [
  'Ana is allergic to peanuts',
  'The train to Porto leaves at nine in the morning',
  'Pixel the dog loves running on the beach',
];
/** What both apps search for: no word in common with the memory it should find. */
const EXPECTED_TOP = 'Ana is allergic to peanuts';
/** The files the package ships besides dist/. */
const SHIPPED_OUTSIDE_DIST = [
  'LICENSE',
  'README.md',
  'package.json',
  'scripts/build-offline-model.mjs',
  'scripts/download-model.mjs',
  'scripts/engram-mcp.mjs',
  'scripts/ensure-model.mjs',
  'scripts/sentence-models.mjs',
  'scripts/model-folder.mjs',
];
const PAGE_WAIT = 90_000;
/**
 * An in-browser library that brings another ONNX Runtime Web (1.14, through @xenova/transformers 2):
 * installed beside engram in the Vite app, it must not change what engram's own
 * `onnxruntime-web/…` imports resolve to. (A devDependency of the repository, for bench/peers.)
 */
const OTHER_ORT_LIBRARY = '@babycommando/entity-db';

let parent = '';
let packed: Packed;
/** The fixture apps, installed. */
let nodeApp = '';
let viteApp = '';
let readmeApp = '';
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
  const [node, vite, readme] = await Promise.all([
    Promise.all(['fake-indexeddb', 'typescript', '@types/node'].map(version)).then((packages) =>
      createApp(parent, 'node-app', packed.tarball, packages),
    ),
    Promise.all(['vite', 'typescript', OTHER_ORT_LIBRARY].map(version)).then((packages) =>
      createApp(parent, 'vite-app', packed.tarball, packages),
    ),
    Promise.all(['fake-indexeddb', 'typescript', '@types/node', 'ai', '@langchain/core'].map(version)).then(
      (packages) => createApp(parent, 'readme-app', packed.tarball, packages),
    ),
  ]);
  nodeApp = node.dir;
  viteApp = vite.dir;
  readmeApp = readme.dir;
  const offline = node.offline && vite.offline && readme.offline;
  timings[`installs, in parallel (${offline ? 'offline' : 'registry'})`] = Math.round(
    Math.max(node.install.ms, vite.install.ms, readme.install.ms),
  );
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
    for (const entry of [
      'dist/sync.js',
      'dist/ai-sdk.js',
      'dist/langchain.js',
      'dist/types/ai-sdk/index.d.ts',
      'dist/types/langchain/index.d.ts',
    ])
      expect(packed.entryPoints).toContain(entry);
  });

  it('package.json declares onnxruntime-web, which engram imports, at the version its transformers.js pins', async () => {
    const read = async (path: string): Promise<{ dependencies?: Record<string, string> }> =>
      JSON.parse(await readFile(path, 'utf8')) as { dependencies?: Record<string, string> };
    const own = await read(join(ROOT, 'package.json'));
    const transformers = await read(join(ROOT, 'node_modules/@huggingface/transformers/package.json'));
    expect(own.dependencies?.['onnxruntime-web']).toBeDefined();
    expect(own.dependencies?.['onnxruntime-web']).toBe(transformers.dependencies?.['onnxruntime-web']);
  });

  it('the core entry and every chunk it imports statically leave the frameworks out; each adapter imports only its own', async () => {
    const closure = async (entry: string): Promise<{ files: string[]; bare: Set<string>; bytes: number }> => {
      const files: string[] = [];
      const bare = new Set<string>();
      let bytes = 0;
      const queue = [entry];
      while (queue.length > 0) {
        const file = queue.shift()!;
        if (files.includes(file)) continue;
        files.push(file);
        const code = await readFile(join(ROOT, 'dist', file), 'utf8');
        bytes += Buffer.byteLength(code);
        // Static imports only: `import … from "x"` and `import "x"`; a dynamic import() loads on demand.
        for (const m of code.matchAll(/^(?:import|export)\b[^;'"]*?(?:from\s*)?["']([^"']+)["']/gm)) {
          const spec = m[1]!;
          if (spec.startsWith('./')) queue.push(spec.slice(2));
          else bare.add(spec);
        }
      }
      return { files, bare, bytes };
    };
    const core = await closure('engram.js');
    timings['core entry + static chunks (bytes)'] = core.bytes;
    const frameworks = (bare: Set<string>): string[] =>
      [...bare].filter((b) => /^(ai|@ai-sdk\/|@langchain\/|zod)/.test(b)).sort();
    expect(frameworks(core.bare)).toEqual([]);
    expect(frameworks((await closure('ai-sdk.js')).bare)).toEqual(['ai']);
    expect(frameworks((await closure('langchain.js')).bare).every((b) => b.startsWith('@langchain/core/'))).toBe(true);
    // The core's declarations do not name the frameworks either (an app without them type-checks).
    const types = await readdir(join(ROOT, 'dist', 'types'), { recursive: true });
    for (const file of types.filter(
      (f) => f.endsWith('.d.ts') && !f.startsWith('ai-sdk') && !f.startsWith('langchain'),
    )) {
      expect({
        file,
        framework: /from ['"](ai|@ai-sdk\/[^'"]+|@langchain\/[^'"]+)['"]/.exec(
          await readFile(join(ROOT, 'dist', 'types', file), 'utf8'),
        )?.[1],
      }).toEqual({ file, framework: undefined });
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
      run(
        'npx',
        ['--no', '--', 'tsc', '-p', 'tsconfig.json', '--noEmit', '--skipLibCheck', 'false', '--listFiles'],
        app,
        120_000,
      ),
    ]);
    const lines = strict.stdout.split('\n');
    expect(lines).toContain(join(app, 'node_modules/engram/dist/types/index.d.ts'));
    expect(lines.filter((l) => l.startsWith('node_modules/engram/'))).toEqual([]);
  }, 200_000);

  it('without ai and @langchain/core installed, engram imports as usual and each adapter names its missing peer', async () => {
    await expect(stat(join(app, 'node_modules', 'ai'))).rejects.toThrow();
    await expect(stat(join(app, 'node_modules', '@langchain', 'core'))).rejects.toThrow();
    const core = await runOk(
      'node',
      [
        '--input-type=module',
        '-e',
        "const m = await import('engram'); console.log(typeof m.Engram, typeof m.AgentTools)",
      ],
      app,
      60_000,
    );
    expect(core.stdout.trim()).toBe('function function');
    const aiSdk = await run('node', ['--input-type=module', '-e', "await import('engram/ai-sdk')"], app, 60_000);
    expect(aiSdk.code).toBe(1);
    expect(aiSdk.stderr).toContain("Cannot find package 'ai'");
    const langchain = await run('node', ['--input-type=module', '-e', "await import('engram/langchain')"], app, 60_000);
    expect(langchain.code).toBe(1);
    expect(langchain.stderr).toContain("Cannot find package '@langchain/core'");
  }, 90_000);

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

  it('npx engram-mcp runs the MCP stdio bridge from the installed package (no dependency): usage, and what to set without a token', async () => {
    expect((await lstat(join(app, 'node_modules/.bin/engram-mcp'))).isSymbolicLink()).toBe(true);
    const help = await runOk('npx', ['--no', '--', 'engram-mcp', '--help'], app, 60_000);
    expect(help.stdout).toContain('usage: engram-mcp');
    const noToken = await run('npx', ['--no', '--', 'engram-mcp'], app, 60_000);
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain('set ENGRAM_MCP_TOKEN (or ENGRAM_MCP_TOKEN_FILE)');
  }, 90_000);

  it('the script opens a store, adds, searches by meaning, exports and imports the file, and reopens an encrypted store', async () => {
    const result = await timed('node-app run', runOk('node', ['build/main.js'], app, 60_000));
    const report = JSON.parse(result.stdout) as {
      embedder: { id: string; dimensions: number };
      added: string[];
      search: { memory: string; score: number }[];
      exported: { bytes: number; lines: number };
      imported: { total: number; search: string[] };
      encrypted: string[];
    };
    expect(report.embedder).toEqual({ id: MODEL, dimensions: 100 });
    expect(report.added).toEqual(MEMORIES);
    expect(report.search.map((h) => h.memory).sort()).toEqual([...MEMORIES].sort());
    expect(report.search[0]?.memory).toBe(EXPECTED_TOP);
    const scores = report.search.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(report.exported.lines).toBeGreaterThan(MEMORIES.length);
    expect(report.imported).toEqual({ total: MEMORIES.length, search: [EXPECTED_TOP] });
    expect(report.encrypted).toEqual([EXPECTED_TOP]);
  }, 90_000);
});

/** What the Vite app's page reports in #report. */
interface PageReport {
  embedder: { id: string; dimensions: number; inWorker: boolean };
  added: string[];
  search: { memory: string; score: number }[];
  total: number;
  encrypted: { search: string[]; reopened: string[] };
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
  expect(report.encrypted).toEqual({ search: [EXPECTED_TOP], reopened: [EXPECTED_TOP] });
  expect(result.blocked).toEqual([]);
  expect(result.failed).toEqual([]);
  expect(result.pageErrors).toEqual([]);
}

/** A free loopback port (for the dev server, which takes one on its command line). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) =>
    probe.close(() => {
      done();
    }),
  );
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
    const forced = await runOk(
      'npx',
      ['--no', '--', 'engram-model', '--force', '--out', 'public/engram-models'],
      app,
      120_000,
    );
    expect(forced.stdout).toContain(`[model] building ${publicModelDir()}: rebuild forced`);
    expect(forced.stdout).toContain(`[model] wrote ${publicModelDir()}`);
    const bad = await run('npx', ['--no', '--', 'engram-model', '--outt', 'x'], app, 60_000);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown argument --outt');
    expect(bad.stderr).toContain('usage: engram-model [--model glove|e5-small|bge-small|minilm] [--out DIR] [--force]');
    // The default folder was left alone.
    await expect(stat(join(app, 'node_modules/engram/models'))).rejects.toThrow();
  }, 300_000);

  it('beside a library that brings onnxruntime-web 1.14, engram resolves the onnxruntime-web its transformers.js expects', async () => {
    const versionAt = async (dir: string): Promise<string | undefined> => {
      try {
        return (JSON.parse(await readFile(join(dir, 'onnxruntime-web', 'package.json'), 'utf8')) as { version: string })
          .version;
      } catch {
        return undefined;
      }
    };
    const nm = join(app, 'node_modules');
    // What a bundler finds from node_modules/engram/dist: engram's own node_modules first, then the app's.
    const seenByEngram = (await versionAt(join(nm, 'engram', 'node_modules'))) ?? (await versionAt(nm));
    const seenByTransformers =
      (await versionAt(join(nm, '@huggingface', 'transformers', 'node_modules'))) ??
      (await versionAt(join(nm, 'engram', 'node_modules'))) ??
      (await versionAt(nm));
    const pinned = (
      JSON.parse(await readFile(join(nm, '@huggingface', 'transformers', 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      }
    ).dependencies['onnxruntime-web'];
    expect(seenByEngram).toBe(pinned);
    expect(seenByTransformers).toBe(pinned);
    const other = (await versionAt(join(nm, '@xenova', 'transformers', 'node_modules'))) ?? (await versionAt(nm));
    expect(other).toBe('1.14.0');
  });

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
    for (const file of ['config.json', 'tokenizer.json', 'onnx/model.onnx'])
      expect(served).toContain(`/engram-models/${MODEL}/${file}`);
  }, 150_000);

  it('the dev server (vite) serves the same page working offline', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    dev = start(
      process.execPath,
      [join(app, 'node_modules/vite/bin/vite.js'), '--host', '127.0.0.1', '--port', String(port), '--strictPort'],
      app,
    );
    const answers = (): Promise<number> =>
      fetch(`${origin}/`).then(
        (r) => r.status,
        () => 0,
      );
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

/** A TypeScript block of README.md: its name (`<!-- consumer-test: name -->` before it) or its number. */
interface ReadmeBlock {
  name: string;
  code: string;
}

async function readmeBlocks(): Promise<ReadmeBlock[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const blocks: ReadmeBlock[] = [];
  for (const m of readme.matchAll(/(?:<!-- consumer-test: ([\w-]+) -->\n)?```ts\n([\s\S]*?)\n```/g)) {
    blocks.push({ name: m[1] ?? `block-${blocks.length + 1}`, code: m[2]! });
  }
  return blocks;
}

describe("the README's TypeScript, in an app with ai and @langchain/core", () => {
  let app = '';
  let blocks: ReadmeBlock[] = [];

  beforeAll(async () => {
    app = readmeApp;
    blocks = await readmeBlocks();
    // Each block is a file of its own, a module (`export {}`), so blocks never share names.
    await mkdir(join(app, 'src', 'readme'), { recursive: true });
    for (const b of blocks) await writeFile(join(app, 'src', 'readme', `${b.name}.ts`), `${b.code}\nexport {};\n`);
  });

  it('every TypeScript block of README.md type-checks against the packed declarations', async () => {
    const fences = ((await readFile(join(ROOT, 'README.md'), 'utf8')).match(/^```ts$/gm) ?? []).length;
    expect(blocks).toHaveLength(fences);
    expect(blocks.map((b) => b.name)).toEqual(expect.arrayContaining(['node-script', 'ai-sdk', 'langchain']));
    const built = await run('npx', ['--no', '--', 'tsc', '-p', 'tsconfig.json'], app, 180_000);
    timings['readme-app tsc'] = Math.round(built.ms);
    expect({ code: built.code, errors: built.stdout }).toEqual({ code: 0, errors: '' });
  }, 200_000);

  it('the Node script runs as written (offline model built by npx engram-model)', async () => {
    await runOk('npx', ['--no', '--', 'engram-model'], app, 120_000);
    const result = await runOk('node', ['build/readme/node-script.js'], app, 60_000);
    expect(result.stderr).toBe('');
  }, 200_000);

  it("the AI SDK and LangChain examples run as written with the frameworks' test models", async () => {
    const result = await runOk('node', ['build/run-adapters.js'], app, 60_000);
    const report = JSON.parse(result.stdout) as {
      aiSdk: { first: string; second: string; thread: string[] };
      langchain: { reply: string; history: string[] };
      memories: string[];
    };
    // MemoryChat: the first turn recalls nothing and stores the statement; the tools then find it.
    expect(report.aiSdk.first).toBe('From memory: No memories found.');
    expect(report.aiSdk.second).toBe('From memory: - I live in Porto');
    expect(report.aiSdk.thread).toEqual([
      'system: You are a helpful assistant with long-term memory.',
      'user: I live in Porto',
      'assistant: From memory: No memories found.',
    ]);
    // LangChain: the retrieved memory reached the model (FakeChatModel answers with its prompt); the history holds the turn.
    expect(report.langchain.reply).toBe(
      'What you know about the user:\nAna is allergic to peanuts\nWhat must I not eat?',
    );
    expect(report.langchain.history).toEqual(['user: What must I not eat?', `assistant: ${report.langchain.reply}`]);
    expect(report.memories).toEqual(['Ana is allergic to peanuts', 'I live in Porto']);
  }, 90_000);
});
