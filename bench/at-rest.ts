/**
 * bench/at-rest: what encryption at rest costs (issue 26). A plain and an encrypted store (a
 * WebCrypto key) in one Chromium page, fed the same memories (384-d vectors looked up by text),
 * every step alternating which store goes first. Goals, as ratios of one run: add() at batch 64 at
 * least 0.8x the plain store's throughput, hybrid search p95 within 1.1x, open from the snapshot to
 * the first answered search within 1.25x.
 * Run: npx tsx bench/at-rest.ts [--sizes 10000,100000] [--queries 200] [--opens 5]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import type { AtRestResult } from './pages/results.js';

const sizes = option('sizes') ?? '10000';
const queries = option('queries') ?? '200';
const opens = option('opens') ?? '5';
console.log(`at-rest: sizes ${sizes}, ${queries} queries, ${opens} opens (Chromium)`);
const out = await runPage<{ results?: AtRestResult[]; error?: string }>('bench/pages/at-rest.html', {
  sizes,
  queries,
  opens,
});
if (out.results === undefined) {
  console.error(`at-rest failed: ${out.error ?? 'no result'}`);
  process.exit(1);
}
const results = out.results;
printTable(
  'plain vs encrypted store (Chromium, side by side)',
  results.flatMap((r) =>
    (['plain', 'encrypted'] as const).map((kind) => ({
      memories: r.memories,
      store: kind,
      'add() batch 64, memories/s': r[kind].addPerSecond.toFixed(0),
      'search p50 ms': r[kind].searchP50Ms.toFixed(2),
      'search p95 ms': r[kind].searchP95Ms.toFixed(2),
      'open() ms (median)': r[kind].openOnlyMs.toFixed(0),
      'open to first search ms (median)': r[kind].openMs.toFixed(0),
    })),
  ),
);
const goals = results.flatMap((r) => {
  const add = r.encrypted.addPerSecond / r.plain.addPerSecond;
  const search = r.encrypted.searchP95Ms / r.plain.searchP95Ms;
  const open = r.encrypted.openMs / r.plain.openMs;
  const at = `at ${r.memories / 1000}k`;
  return [
    { goal: `add() batch 64 throughput, encrypted / plain ${at}`, target: '>= 0.8x', measured: add, met: add >= 0.8 },
    { goal: `search p95, encrypted / plain ${at}`, target: '<= 1.1x', measured: search, met: search <= 1.1 },
    { goal: `open from snapshot, encrypted / plain ${at}`, target: '<= 1.25x', measured: open, met: open <= 1.25 },
  ];
});
printTable(
  'goals',
  goals.map((g) => ({
    goal: g.goal,
    target: g.target,
    measured: `${g.measured.toFixed(2)}x`,
    met: g.met ? 'yes' : 'no',
  })),
);
writeResult('at-rest', { results, goals });
