/**
 * bench/memory-search: search() end to end at 100k memories in real Chromium
 * (offline model in its worker, real IndexedDB, HNSW in WASM, keyword postings
 * in memory): hybrid, keyword-only and vector-only, unscoped and scoped to one
 * user of ten, on varied sentences and on repetitive chat-like text.
 * Goals: hybrid and keyword p95 <= 50 ms in every case; hybrid p50 <= 3x vector p50.
 * Run: npx tsx bench/memory-search.ts [--sizes 100000] [--queries 100] [--kinds sentences,chat]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import type { MemorySearchResult } from './pages/results.js';

const sizes = option('sizes') ?? '100000';
const queries = option('queries') ?? '100';
console.log(`memory-search: sizes ${sizes}, ${queries} queries (Chromium, real IndexedDB)`);
const { results } = await runPage<{ results: MemorySearchResult[] }>('bench/pages/memory-search.html', { sizes, queries, kinds: option('kinds') ?? 'sentences,chat' }, 60 * 60_000);

const rows = results.flatMap((r) =>
  (['unscoped', 'scoped'] as const).flatMap((scope) =>
    (['hybrid', 'keyword', 'vector'] as const).map((mode) => ({
      corpus: r.corpus,
      memories: r.memories,
      scope,
      mode,
      'p50 ms': r[scope][mode]?.p50.toFixed(2) ?? '–',
      'p95 ms': r[scope][mode]?.p95.toFixed(2) ?? '–',
      'p50 / vector p50': r[scope][mode] !== undefined && r[scope].vector !== undefined ? `${(r[scope][mode].p50 / r[scope].vector.p50).toFixed(2)}x` : '–',
    })),
  ),
);
printTable('search() end to end, top 10, Chromium', rows);
printTable(
  'fill',
  results.map((r) => ({ corpus: r.corpus, memories: r.memories, 'fill s': r.fillSeconds.toFixed(0), 'first search ms': r.firstSearchMs.toFixed(0) })),
);
const goals = results.flatMap((r) => {
  const at = `${r.corpus}, ${r.memories / 1000}k`;
  return (['unscoped', 'scoped'] as const).flatMap((scope) => {
    const t = r[scope];
    const out = [];
    for (const mode of ['hybrid', 'keyword'] as const) {
      const p95 = t[mode]?.p95;
      if (p95 !== undefined) out.push({ goal: `${mode} p95 ms (${at}, ${scope})`, target: '<= 50', measured: p95, met: p95 <= 50 });
    }
    if (t.hybrid !== undefined && t.vector !== undefined) {
      const ratio = t.hybrid.p50 / t.vector.p50;
      out.push({ goal: `hybrid p50 / vector p50 (${at}, ${scope})`, target: '<= 3x', measured: ratio, met: ratio <= 3 });
    }
    return out;
  });
});
printTable('goals', goals.map((g) => ({ goal: g.goal, target: g.target, measured: g.target.endsWith('x') ? `${g.measured.toFixed(2)}x` : g.measured.toFixed(1), met: g.met ? 'yes' : 'NO' })));
writeResult('memory-search', { results, goals });
