/**
 * Runs every benchmark in bench/ one after the other, each as its own child
 * process (`node --import tsx bench/<name>.ts …`) with its progress streamed,
 * then writes bench/results/REPORT.md and the SVG charts (bench/report.ts).
 * A failing benchmark does not stop the others; the runner exits non-zero at the end.
 *
 *   npm run bench                         # everything at full size (20–40 min on 2 cores)
 *   npm run bench -- --quick              # small sizes: a smoke run of every benchmark (~2 min)
 *   npm run bench -- --only vector,ingest # some benchmarks (names as below)
 *   npm run bench -- --skip recall-search
 *   npm run bench -- --sizes 10000        # passed to the benchmarks that take it
 *
 * Options passed through to the benchmarks that accept them: --sizes, --queries,
 * --efs, --m, --ef-construction, --dims, --real-size, --skip-native (vector);
 * --sizes, --queries (memory-search); --sizes (recall-search, cold-open); --count, --batches (ingest); --count, --sizes,
 * --changes, --rounds (sync); --sizes, --queries, --rounds, --systems (peers); --adds, --updates, --deletes, --hot (growth);
 * --sizes, --queries (mcp-search); --configs (reembed);
 * --crossover-sizes (as --sizes to vector --crossover). Also --timeout-min
 * (per benchmark, default 90) and --no-report. Writes bench/results/run.json
 * (machine, per-benchmark status and time) and bench/results/<name>.log.
 * A --quick run leaves bench/results alone: its results, logs and report go to
 * $TMPDIR/engram-bench-quick/.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { option, flag } from './util/args.js';
import { describeMachine, load1, type BenchmarkRun, type RunRecord } from './report/machine.js';
import { RESULTS_DIR, writeReport } from './report/generate.js';

const ROOT = resolve(import.meta.dirname, '..');

/** A benchmark the runner knows: its result name, script, fixed arguments and quick-run sizes. */
export interface BenchmarkPlan {
  /** Result name (bench/results/<name>.json) and the name used by --only/--skip. */
  name: string;
  script: string;
  args: string[];
  /** Options this benchmark accepts, passed through from the runner's command line. */
  accepts: string[];
  /** Arguments for --quick (small sizes). */
  quick: string[];
  /** Runs in Chromium (needs a browser). */
  browser: boolean;
}

/** Known benchmarks in the order they run: Node ones first, then Chromium ones. */
export const PLANS: BenchmarkPlan[] = [
  {
    name: 'vector',
    script: 'bench/vector.ts',
    args: [],
    accepts: ['sizes', 'queries', 'efs', 'm', 'ef-construction', 'dims', 'real-size', 'skip-native'],
    quick: ['--sizes', '2000', '--queries', '50', '--real-size', '2000'],
    browser: false,
  },
  {
    name: 'vector-crossover',
    script: 'bench/vector.ts',
    args: ['--crossover'],
    accepts: [],
    quick: ['--sizes', '250,1000,4000', '--queries', '50'],
    browser: false,
  },
  {
    name: 'eval',
    script: 'bench/eval/run.ts',
    args: [],
    accepts: ['users', 'split'],
    quick: ['--users', '2'],
    browser: false,
  },
  {
    name: 'sync',
    script: 'bench/sync.ts',
    args: [],
    accepts: ['sizes', 'count', 'changes', 'rounds'],
    quick: ['--count', '1000', '--sizes', '200,2000', '--rounds', '2'],
    browser: false,
  },
  {
    name: 'growth',
    script: 'bench/growth.ts',
    args: [],
    accepts: ['adds', 'updates', 'deletes', 'hot'],
    quick: ['--adds', '2000', '--updates', '200', '--deletes', '200', '--hot', '50'],
    browser: false,
  },
  {
    name: 'mcp-search',
    script: 'bench/mcp-search.ts',
    args: [],
    accepts: ['sizes', 'queries'],
    quick: ['--sizes', '2000', '--queries', '50'],
    browser: false,
  },
  {
    name: 'memory-search',
    script: 'bench/memory-search.ts',
    args: [],
    accepts: ['sizes', 'queries'],
    quick: ['--sizes', '2000', '--queries', '30'],
    browser: true,
  },
  {
    name: 'recall-search',
    script: 'bench/recall-search.ts',
    args: [],
    accepts: ['sizes'],
    quick: ['--sizes', '2000'],
    browser: true,
  },
  {
    name: 'ingest',
    script: 'bench/ingest.ts',
    args: [],
    accepts: ['count', 'batches'],
    quick: ['--count', '200', '--batches', '1,16'],
    browser: true,
  },
  {
    name: 'ingest-minilm',
    script: 'bench/ingest.ts',
    args: ['--model', 'minilm', '--batches', '64'],
    accepts: ['count'],
    quick: ['--count', '128'],
    browser: true,
  },
  {
    name: 'memory-search-minilm',
    script: 'bench/model-search.ts',
    args: ['--model', 'minilm'],
    accepts: ['sizes', 'queries'],
    quick: ['--sizes', '2000', '--queries', '10'],
    browser: true,
  },
  {
    name: 'ingest-e5-small',
    script: 'bench/ingest.ts',
    args: ['--model', 'e5-small', '--batches', '64'],
    accepts: ['count'],
    quick: ['--count', '128'],
    browser: true,
  },
  {
    name: 'memory-search-e5-small',
    script: 'bench/model-search.ts',
    args: ['--model', 'e5-small'],
    accepts: ['sizes', 'queries'],
    quick: ['--sizes', '2000', '--queries', '10'],
    browser: true,
  },
  {
    name: 'cold-open',
    script: 'bench/cold-open.ts',
    args: [],
    accepts: ['sizes'],
    quick: ['--sizes', '1000'],
    browser: true,
  },
  {
    name: 'at-rest',
    script: 'bench/at-rest.ts',
    args: [],
    accepts: ['sizes', 'queries'],
    quick: ['--sizes', '1000', '--queries', '30'],
    browser: true,
  },
  {
    name: 'reembed',
    script: 'bench/reembed.ts',
    args: [],
    accepts: ['configs'],
    quick: ['--configs', '1000:hash,200:minilm'],
    browser: true,
  },
  {
    name: 'convert',
    script: 'bench/convert.ts',
    args: [],
    accepts: ['sizes'],
    quick: ['--sizes', '1000'],
    browser: true,
  },
  {
    name: 'peers',
    script: 'bench/peers.ts',
    args: [],
    accepts: ['sizes', 'queries', 'rounds', 'systems'],
    quick: ['--sizes', '2000', '--queries', '30', '--rounds', '1'],
    browser: true,
  },
];

/** Scripts in bench/ that are not benchmarks. */
const NOT_BENCHMARKS = new Set(['browser.ts', 'corpus.ts', 'run.ts', 'report.ts', 'profile.ts']);

/**
 * The benchmarks to run: the known plans plus any other bench/*.ts that writes a
 * result (a future bench/sync.ts, say), run without arguments.
 */
export function discoverPlans(benchDir = join(ROOT, 'bench')): BenchmarkPlan[] {
  const known = new Set(PLANS.map((p) => p.script));
  const extra = readdirSync(benchDir)
    .filter((f) => f.endsWith('.ts') && !NOT_BENCHMARKS.has(f) && !known.has(`bench/${f}`))
    .filter((f) => readFileSync(join(benchDir, f), 'utf8').includes('writeResult('))
    .sort()
    .map((f) => ({
      name: f.slice(0, -3),
      script: `bench/${f}`,
      args: [],
      accepts: ['sizes'],
      quick: [],
      browser: false,
    }));
  return [...PLANS, ...extra];
}

/**
 * The arguments one benchmark gets: its fixed ones, the runner options it
 * accepts, then its quick sizes when `quick` (those the command line did not
 * set already: the scripts read the first occurrence of an option).
 */
export function argumentsFor(
  plan: BenchmarkPlan,
  quick: boolean,
  read: (name: string) => string | undefined = option,
): string[] {
  const passed: string[] = [];
  const names =
    plan.name === 'vector-crossover'
      ? [['crossover-sizes', 'sizes'] as const]
      : plan.accepts.map((a) => [a, a] as const);
  for (const [from, to] of names) {
    const value = read(from);
    if (value === undefined) continue;
    passed.push(`--${to}`);
    if (value !== 'true') passed.push(value);
  }
  const given = new Set(passed.filter((a) => a.startsWith('--')));
  const quickArgs: string[] = [];
  if (quick) {
    for (let i = 0; i < plan.quick.length; i += 2) {
      if (!given.has(plan.quick[i]!)) quickArgs.push(plan.quick[i]!, plan.quick[i + 1]!);
    }
  }
  return [...plan.args, ...passed, ...quickArgs];
}

function banner(text: string): void {
  const line = '═'.repeat(Math.max(60, text.length + 4));
  console.log(`\n${line}\n  ${text}\n${line}`);
}

function clock(seconds: number): string {
  const m = Math.floor(seconds / 60);
  return m === 0 ? `${seconds.toFixed(1)} s` : `${m} min ${Math.round(seconds % 60)} s`;
}

/** Makes sure hnswlib-node's native addon is built (the vector benchmark compares against it). */
function ensureNativeHnsw(): void {
  const probe = (): boolean =>
    spawnSync(process.execPath, ['-e', "require('hnswlib-node')"], { cwd: ROOT, stdio: 'ignore' }).status === 0;
  if (probe()) return;
  console.log(
    'hnswlib-node: native addon not built; running `npm rebuild hnswlib-node --ignore-scripts=false` (needs a C++ toolchain) …',
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const built = spawnSync(npm, ['rebuild', 'hnswlib-node', '--ignore-scripts=false'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status === 0 && probe()) console.log('hnswlib-node: built.');
  else console.log('hnswlib-node: build failed; bench/vector.ts will skip the native comparison.');
}

let current: ReturnType<typeof spawn> | undefined;

/** Splits a byte stream into lines and hands each complete line (with its newline) to `emit`. */
function lines(emit: (line: string) => void): { push: (chunk: Buffer) => void; end: () => void } {
  let partial = '';
  return {
    push(chunk) {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) emit(`${line}\n`);
    },
    end() {
      if (partial !== '') emit(`${partial}\n`);
      partial = '';
    },
  };
}

/**
 * Runs one benchmark, streaming its output (minus library noise) and keeping
 * all of it in `<logDir>/<name>.log`.
 */
function runOne(plan: BenchmarkPlan, args: string[], timeoutMs: number, logDir: string): Promise<BenchmarkRun> {
  const command = `tsx ${plan.script}${args.length > 0 ? ` ${args.join(' ')}` : ''}`;
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const loadAtStart = load1();
  const log = createWriteStream(join(logDir, `${plan.name}.log`));
  const tail: string[] = [];
  const relay = (to: NodeJS.WriteStream): ReturnType<typeof lines> =>
    lines((line) => {
      log.write(line);
      to.write(line);
      if (line.trim() !== '') tail.push(line.trimEnd());
      if (tail.length > 40) tail.splice(0, tail.length - 40);
    });
  const out = relay(process.stdout);
  const err = relay(process.stderr);
  return new Promise((done) => {
    // Its own process group, so a timeout can stop the benchmark with its browser and server.
    const child = spawn(process.execPath, ['--import', 'tsx', plan.script, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: process.env,
    });
    current = child;
    child.stdout.on('data', out.push);
    child.stderr.on('data', err.push);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      console.error(`\n${plan.name}: no result after ${clock(timeoutMs / 1000)}; stopping it`);
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    }, timeoutMs);
    const finish = (exitCode: number | null, error?: string): void => {
      clearTimeout(timer);
      out.end();
      err.end();
      current = undefined;
      log.end();
      const seconds = (performance.now() - started) / 1000;
      const ok = exitCode === 0 && !timedOut;
      if (error !== undefined) tail.push(error);
      if (timedOut) tail.push(`stopped after the ${clock(timeoutMs / 1000)} timeout`);
      done({
        name: plan.name,
        command,
        status: ok ? 'ok' : 'failed',
        seconds,
        exitCode,
        startedAt,
        finishedAt: new Date().toISOString(),
        loadAtStart,
        loadAtEnd: load1(),
        ...(ok ? {} : { tail: tail.slice(-15).join('\n') }),
      });
    };
    child.on('error', (e) => {
      finish(null, String(e));
    });
    child.on('close', (code) => {
      finish(code);
    });
  });
}

/**
 * A quick run must not replace the full-size results in bench/results (other
 * people read them): the benchmark writes there as always, then its file moves
 * to `quickDir` and the previous file, if any, comes back.
 */
function keepAside(name: string, previous: Buffer | undefined, since: number, quickDir: string): void {
  const path = join(RESULTS_DIR, `${name}.json`);
  if (!existsSync(path) || statSync(path).mtimeMs < since) return;
  copyFileSync(path, join(quickDir, `${name}.json`));
  if (previous === undefined) rmSync(path);
  else writeFileSync(path, previous);
}

/** The record of the previous full-size run, if there is one. */
function previousRun(): RunRecord | undefined {
  try {
    const run = JSON.parse(readFileSync(join(RESULTS_DIR, 'run.json'), 'utf8')) as RunRecord;
    return run.mode === 'full' && Array.isArray(run.benchmarks) ? run : undefined;
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (current?.pid !== undefined) process.kill(-current.pid, 'SIGTERM');
      process.exit(130);
    });
  }
  const quick = flag('quick');
  const only = option('only')
    ?.split(',')
    .map((s) => s.trim());
  const skip = new Set(
    option('skip')
      ?.split(',')
      .map((s) => s.trim()) ?? [],
  );
  const timeoutMs = Number(option('timeout-min') ?? '90') * 60_000;
  const plans = discoverPlans();
  const unknown = [...(only ?? []), ...skip].filter((n) => !plans.some((p) => p.name === n));
  if (unknown.length > 0) {
    console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${plans.map((p) => p.name).join(', ')}`);
    return 2;
  }
  mkdirSync(RESULTS_DIR, { recursive: true });
  // A quick run reports into a scratch directory and leaves bench/results as it was.
  const outDir = quick ? join(tmpdir(), 'engram-bench-quick') : RESULTS_DIR;
  if (quick) {
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
  }
  const startedAt = new Date();
  const started = performance.now();
  const machine = describeMachine();
  console.log(
    `engram benchmarks${quick ? ` (quick: small sizes, a smoke run; results and report go to ${outDir})` : ''} — ${startedAt.toISOString()}`,
  );
  console.log(
    `machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.chromium}, load ${machine.load1}`,
  );
  console.log(`benchmarks: ${plans.map((p) => p.name).join(', ')}`);

  const previous = quick ? undefined : previousRun();
  const record: RunRecord = {
    startedAt: startedAt.toISOString(),
    finishedAt: startedAt.toISOString(),
    mode: quick ? 'quick' : 'full',
    args: process.argv.slice(2),
    totalSeconds: 0,
    machine,
    loadAtEnd: machine.load1,
    benchmarks: [],
  };
  const save = (): void => {
    record.finishedAt = new Date().toISOString();
    record.totalSeconds = Math.round((performance.now() - started) / 100) / 10;
    record.loadAtEnd = load1();
    writeFileSync(join(outDir, 'run.json'), `${JSON.stringify(record, null, 2)}\n`);
  };

  const selected = plans.filter((p) => (only === undefined || only.includes(p.name)) && !skip.has(p.name));
  for (const [i, plan] of selected.entries()) {
    if (plan.name === 'vector') ensureNativeHnsw();
    const args = argumentsFor(plan, quick);
    banner(
      `[${i + 1}/${selected.length}] ${plan.name}: tsx ${plan.script} ${args.join(' ')}  (elapsed ${clock((performance.now() - started) / 1000)})`,
    );
    const before =
      quick && existsSync(join(RESULTS_DIR, `${plan.name}.json`))
        ? readFileSync(join(RESULTS_DIR, `${plan.name}.json`))
        : undefined;
    const since = Date.now() - 1000;
    const result = await runOne(plan, args, timeoutMs, outDir);
    if (quick) keepAside(plan.name, before, since, outDir);
    record.benchmarks.push(result);
    save();
    console.log(
      `\n${result.status === 'ok' ? '✔' : '✘'} ${plan.name} ${result.status === 'ok' ? 'done' : `FAILED (exit ${result.exitCode ?? 'signal'})`} in ${clock(result.seconds)}`,
    );
  }
  // A partial full-size run keeps what the previous run recorded: the benchmarks it left out,
  // and the failures of those it ran again (perhaps at smaller sizes).
  if (previous !== undefined && (only !== undefined || skip.size > 0)) {
    const failures = [
      ...(previous.earlierFailures ?? []),
      ...previous.benchmarks
        .filter((b) => b.status === 'failed' && selected.some((p) => p.name === b.name))
        .map((b) => ({ startedAt: previous.startedAt, finishedAt: previous.finishedAt, ...b })),
    ];
    if (failures.length > 0) record.earlierFailures = failures;
  }
  for (const plan of plans) {
    if (selected.includes(plan)) continue;
    const found =
      only === undefined && skip.size === 0
        ? undefined
        : previous?.benchmarks.find((b) => b.name === plan.name && b.status !== 'skipped');
    const kept =
      found === undefined || previous === undefined
        ? undefined
        : { startedAt: previous.startedAt, finishedAt: previous.finishedAt, ...found };
    if (kept !== undefined)
      console.log(`${plan.name}: not run now; the report keeps its results from the run of ${kept.startedAt}`);
    record.benchmarks.push(
      kept ?? { name: plan.name, command: `tsx ${plan.script}`, status: 'skipped', seconds: 0, exitCode: null },
    );
  }
  save();

  banner(`summary (total ${clock(record.totalSeconds)})`);
  for (const b of record.benchmarks)
    console.log(
      `  ${b.status === 'ok' ? '✔' : b.status === 'skipped' ? '·' : '✘'} ${b.name.padEnd(18)} ${b.status.padEnd(8)} ${b.status === 'skipped' ? '' : clock(b.seconds)}`,
    );

  if (!flag('no-report')) {
    const { path, report } = writeReport(outDir);
    console.log(
      `\nreport: ${path}${report.charts.length > 0 ? ` with ${report.charts.map((c) => c.file).join(', ')}` : ''}`,
    );
    const missed = Object.entries(report.goals).flatMap(([name, rows]) =>
      rows.filter((g) => g.met === false).map((g) => `${name}: ${g.goal}`),
    );
    if (missed.length > 0) console.log(`goals not met:\n  ${missed.join('\n  ')}`);
  }
  const failed = record.benchmarks.filter((b) => b.status === 'failed');
  if (failed.length > 0)
    console.error(
      `\n${failed.length} benchmark(s) failed: ${failed.map((b) => b.name).join(', ')} (logs in ${outDir}/<name>.log)`,
    );
  return failed.length > 0 ? 1 : 0;
}

const invoked = process.argv[1] === undefined ? '' : resolve(process.argv[1]);
if (invoked === fileURLToPath(import.meta.url)) {
  if (!existsSync(join(ROOT, 'node_modules', 'tsx'))) {
    console.error('tsx is missing: npm install');
    process.exit(2);
  }
  process.exitCode = await main();
}
