/**
 * bench/cold-open: time from Engram.open() to the first answered search on
 * stores of 10k and 100k memories (Chromium, real IndexedDB, HNSW in WASM),
 * from the index snapshot against a forced rebuild from the stored vectors.
 * Goal: at least 10x faster with the snapshot.
 * Run: npx tsx bench/cold-open.ts [--sizes 10000,100000]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import type { ColdOpenResult } from './pages/results.js';


const sizes = option('sizes') ?? '10000,100000';
console.log(`cold-open: sizes ${sizes} (Chromium)`);
const { results } = await runPage<{ results: ColdOpenResult[] }>('bench/pages/cold-open.html', { sizes });
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
printTable(
  'open() to first search',
  results.map((r) => ({
    memories: r.memories,
    'snapshot ms (median)': median(r.snapshotMs).toFixed(0),
    'rebuild ms (median)': median(r.rebuildMs).toFixed(0),
    'rebuild / snapshot': `${r.ratio.toFixed(1)}x`,
    'fill s': r.fillSeconds.toFixed(0),
  })),
);
const goals = results.map((r) => ({ goal: `snapshot vs rebuild at ${r.memories / 1000}k`, target: '>= 10x', measured: r.ratio, met: r.ratio >= 10 }));
printTable('goals', goals.map((g) => ({ goal: g.goal, target: g.target, measured: `${g.measured.toFixed(1)}x`, met: g.met ? 'yes' : 'NO' })));
writeResult('cold-open', { results, goals });
