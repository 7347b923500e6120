/**
 * bench/reembed: engram.reembed() on an open store in Chromium (issue 22), while the same engram
 * searches back to back: at 10k and 100k memories to a fast hash model (engram's own work: the
 * walk, the staging transactions, the switch, the new index) and at 2k to MiniLM (the model's
 * cost). Prints the run's total time, texts/s, the switch (the log check and the flip of the recorded
 * model), the new index's rebuild and the rows' rewrite after it, and search p50/p95 before, during staging and over the
 * switch and rebuild. No goal is set: the numbers say whether the switch blocks readers.
 * Run: npx tsx bench/reembed.ts [--configs 10000:hash,2000:minilm,100000:hash]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import type { ReembedBenchResult, ReembedWindow } from './pages/results.js';

const configs = option('configs') ?? '10000:hash,2000:minilm,100000:hash';
console.log(`reembed: ${configs} (Chromium)`);
const out = await runPage<{ results?: ReembedBenchResult[]; error?: string }>('bench/pages/reembed.html', {
  configs,
});
if (out.results === undefined) {
  console.error(`reembed failed: ${out.error ?? 'no result'}`);
  process.exit(1);
}
const results = out.results;
printTable(
  're-embed on the open store (Chromium)',
  results.map((r) => ({
    memories: r.memories,
    'new model': r.model,
    'model load ms': r.modelLoadMs.toFixed(0),
    'reembed() s': (r.totalMs / 1000).toFixed(1),
    'staging s': (r.stagingMs / 1000).toFixed(1),
    'texts/s': r.textsPerSecond.toFixed(0),
    'switch ms': r.switchMs.toFixed(0),
    'new index ms': r.rebuildMs.toFixed(0),
  })),
);
const cell = (w: ReembedWindow): string =>
  w.searches === 0 ? '–' : `${w.p50Ms.toFixed(1)} / ${w.p95Ms.toFixed(1)} / ${w.maxMs.toFixed(0)} (${w.searches})`;
printTable(
  'hybrid search p50 / p95 / max ms (searches) meanwhile, same engram',
  results.map((r) => ({
    memories: r.memories,
    'new model': r.model,
    'before the run': cell(r.before),
    'while staging': cell(r.staging),
    'switch + new index': cell(r.switching),
    'longest search over the switch ms': r.longestOverSwitchMs.toFixed(0),
  })),
);
writeResult('reembed', { results });
