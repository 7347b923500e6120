/**
 * bench/ingest: add() throughput with embeddings (offline model in a worker,
 * real IndexedDB, Chromium) against the raw embedder on the same number of texts.
 * Goal: add() at least 0.8x the raw embedder's throughput.
 * Run: npx tsx bench/ingest.ts [--count 3000] [--batches 1,16,64]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import type { IngestResult } from './pages/results.js';


const count = option('count') ?? '3000';
const batches = option('batches') ?? '1,16,64';
console.log(`ingest: ${count} texts, batches ${batches} (Chromium, offline model in a worker)`);
const { results } = await runPage<{ results: IngestResult[] }>('bench/pages/ingest.html', { count, batches });
printTable(
  'add() vs raw embedder throughput',
  results.map((r) => ({ batch: r.batch, texts: r.texts, 'raw texts/s': r.rawPerSecond.toFixed(0), 'add() texts/s': r.addPerSecond.toFixed(0), ratio: `${r.ratio.toFixed(2)}x` })),
);
const main = results.reduce((a, b) => (b.batch > a.batch ? b : a));
const goals = [{ goal: `add() / raw embedder (batch ${main.batch})`, target: '>= 0.8x', measured: main.ratio, met: main.ratio >= 0.8 }];
printTable('goals', goals.map((g) => ({ goal: g.goal, target: g.target, measured: `${g.measured.toFixed(2)}x`, met: g.met ? 'yes' : 'NO' })));
writeResult('ingest', { results, goals });
