/**
 * bench/recall-search: recall text search p50 over 10k and 100k messages in
 * real Chromium, against a full scan of the same data in the same run.
 * Goals: at 100k at least 10x faster than the scan; time at 100k at most 3x the
 * time at 10k; p95 within 50 ms and at most 5x p50, unscoped and scoped.
 * Run: npx tsx bench/recall-search.ts [--sizes 10000,100000]
 */
import { runPage } from './browser.js';
import { printTable, writeResult } from './util/report.js';
import type { RecallSearchResult } from './pages/results.js';

const arg = process.argv.indexOf('--sizes');
const sizes = arg > 0 ? (process.argv[arg + 1] ?? '10000,100000') : '10000,100000';
console.log(`recall-search: sizes ${sizes} (Chromium, real IndexedDB)`);
const { results } = await runPage<{ results: RecallSearchResult[] }>('bench/pages/recall-search.html', { sizes });

printTable(
  'recall text search (BM25, top 10), Chromium',
  results.map((r) => ({
    messages: r.messages,
    'index p50 ms': r.indexP50.toFixed(2),
    'index p95 ms': r.indexP95.toFixed(2),
    'scan p50 ms': r.scanP50.toFixed(1),
    'speedup x': r.speedup.toFixed(1),
    'top10 agreement': r.agreement.toFixed(3),
    'scoped p50 ms': r.scopedP50.toFixed(2),
    'scoped p95 ms': r.scopedP95.toFixed(2),
    'store s': r.buildSeconds.toFixed(1),
  })),
);
const small = results.find((r) => r.messages === 10_000);
const large = results.find((r) => r.messages === 100_000);
const goals = [];
if (large !== undefined)
  goals.push({ goal: 'index vs scan at 100k', target: '>= 10x', measured: large.speedup, met: large.speedup >= 10 });
if (small !== undefined && large !== undefined) {
  const growth = large.indexP50 / small.indexP50;
  goals.push({ goal: 'p50 at 100k / p50 at 10k', target: '<= 3x', measured: growth, met: growth <= 3 });
}
for (const r of results.filter((x) => x.messages === 100_000)) {
  goals.push({ goal: 'p95 ms at 100k', target: '<= 50', measured: r.indexP95, met: r.indexP95 <= 50 });
  goals.push({
    goal: 'p95 / p50 at 100k',
    target: '<= 5x',
    measured: r.indexP95 / r.indexP50,
    met: r.indexP95 / r.indexP50 <= 5,
  });
  goals.push({ goal: 'scoped p95 ms at 100k', target: '<= 50', measured: r.scopedP95, met: r.scopedP95 <= 50 });
  goals.push({
    goal: 'scoped p95 / p50 at 100k',
    target: '<= 5x',
    measured: r.scopedP95 / r.scopedP50,
    met: r.scopedP95 / r.scopedP50 <= 5,
  });
}
printTable(
  'goals',
  goals.map((g) => ({
    goal: g.goal,
    target: g.target,
    measured: g.target.endsWith('x') ? `${g.measured.toFixed(2)}x` : g.measured.toFixed(1),
    met: g.met ? 'yes' : 'NO',
  })),
);
writeResult('recall-search', { results, goals });
