/**
 * bench/memory-search: search() end to end in real Chromium (offline model in
 * its worker, real IndexedDB, HNSW in WASM, keyword postings in memory):
 * hybrid, keyword-only and vector-only, unscoped and scoped, with a sweep of
 * the scope's size (10 to 50k memories of one user in a 100k store; 1,000
 * users of 100), the chat corpus scoped to one user of ten, and the index
 * alone: an exact scan of a scope against a filtered HNSW walk (the crossover
 * behind `scopeScanWins`).
 * Goals: every scoped search p95 <= 50 ms and p50 <= 3x the unscoped p50 of
 * its store and mode; scoped vector recall@10 >= 0.95; hybrid and keyword
 * p95 <= 50 ms and hybrid p50 <= 3x vector p50 (unscoped and scoped to 10k).
 * Run: npx tsx bench/memory-search.ts [--parts crossover,sweep,users,chat] [--queries 100]
 *      [--sweep-size 100000] [--users 1000] [--chat-size 100000] [--crossover-sizes 100000]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import type { MemorySearchResult, ScopeCrossoverRow, ScopeSweepRow, SearchTimes } from './pages/results.js';

const MODES = ['hybrid', 'keyword', 'vector'] as const;

/** bench/run's `--sizes` (the quick run's `2000`) sets every store's size. */
const sizes = option('sizes');
const params = {
  parts: option('parts') ?? 'crossover,sweep,users,chat',
  queries: option('queries') ?? '100',
  sweepSize: option('sweep-size') ?? sizes ?? '100000',
  users: option('users') ?? (sizes === undefined ? '1000' : String(Math.max(2, Math.floor(Number(sizes) / 100)))),
  chatSize: option('chat-size') ?? sizes ?? '100000',
  crossoverSizes: option('crossover-sizes') ?? sizes ?? '100000',
};
console.log(`memory-search: ${JSON.stringify(params)} (Chromium, real IndexedDB)`);
const { results, sweep, crossover } = await runPage<{
  results: MemorySearchResult[];
  sweep: ScopeSweepRow[];
  crossover: ScopeCrossoverRow[];
}>('bench/pages/memory-search.html', params, 90 * 60_000);

const ms = (t: SearchTimes | undefined, key: 'p50' | 'p95'): string => (t === undefined ? '–' : t[key].toFixed(2));
const baseline = (row: ScopeSweepRow): ScopeSweepRow | undefined =>
  sweep.find((r) => r.store === row.store && r.scope === 'unscoped');

if (crossover.length > 0) {
  printTable(
    'the index alone: exact scan of a scope (searchAmong) against a filtered HNSW walk, k = 40, Chromium',
    crossover.map((r) => ({
      'index size': r.memories,
      dims: r.dimensions,
      scope: r.scopeSize,
      share: `${(r.share * 100).toFixed(1)}%`,
      'scan p50 ms': r.scan.p50.toFixed(3),
      'scan p95 ms': r.scan.p95.toFixed(3),
      'walk p50 ms': r.walk.p50.toFixed(3),
      'walk p95 ms': r.walk.p95.toFixed(3),
      'walk / scan (p50)': `${(r.walk.p50 / r.scan.p50).toFixed(2)}x`,
      'walk recall@10': r.walkRecallAt10.toFixed(3),
    })),
  );
}
if (sweep.length > 0) {
  printTable(
    'search() end to end by scope size, top 10, Chromium',
    sweep.flatMap((r) =>
      MODES.map((mode) => {
        const base = baseline(r)?.times[mode];
        const t = r.times[mode];
        return {
          store: r.store === 'sweep' ? `sweep ${r.memories / 1000}k` : `users ${r.memories / 1000}k`,
          scope: r.scope,
          'scope size': r.scopeSize,
          mode,
          'p50 ms': ms(t, 'p50'),
          'p95 ms': ms(t, 'p95'),
          'p50 / unscoped p50': t !== undefined && base !== undefined ? `${(t.p50 / base.p50).toFixed(2)}x` : '–',
          'recall@10': mode === 'vector' && r.recallAt10 !== undefined ? r.recallAt10.toFixed(3) : '–',
        };
      }),
    ),
  );
}
if (results.length > 0) {
  printTable(
    'search() end to end, chat corpus, top 10, Chromium',
    results.flatMap((r) =>
      (['unscoped', 'scoped'] as const).flatMap((scope) =>
        MODES.map((mode) => ({
          corpus: r.corpus,
          memories: r.memories,
          scope,
          mode,
          'p50 ms': ms(r[scope][mode], 'p50'),
          'p95 ms': ms(r[scope][mode], 'p95'),
          'p50 / vector p50':
            r[scope][mode] !== undefined && r[scope].vector !== undefined
              ? `${(r[scope][mode].p50 / r[scope].vector.p50).toFixed(2)}x`
              : '–',
          'p50 / unscoped p50':
            scope === 'scoped' && r.scoped[mode] !== undefined && r.unscoped[mode] !== undefined
              ? `${(r.scoped[mode].p50 / r.unscoped[mode].p50).toFixed(2)}x`
              : '–',
        })),
      ),
    ),
  );
}
printTable('fill', [
  ...sweep
    .filter((r) => r.fillSeconds !== undefined)
    .map((r) => ({
      store: r.store,
      memories: r.memories,
      'fill s': r.fillSeconds!.toFixed(0),
      'first search ms': r.firstSearchMs!.toFixed(0),
    })),
  ...results.map((r) => ({
    store: r.corpus,
    memories: r.memories,
    'fill s': r.fillSeconds.toFixed(0),
    'first search ms': r.firstSearchMs.toFixed(0),
  })),
]);

interface Goal {
  goal: string;
  target: string;
  measured: number;
  met: boolean;
}
const goals: Goal[] = [];
const ratioGoal = (goal: string, measured: number): void =>
  void goals.push({ goal, target: '<= 3x', measured, met: measured <= 3 });
const p95Goal = (goal: string, measured: number): void =>
  void goals.push({ goal, target: '<= 50', measured, met: measured <= 50 });
const storeName = (r: ScopeSweepRow): string =>
  r.store === 'sweep' ? `sentences, ${r.memories / 1000}k` : `${r.memories / 100} users of 100`;
for (const r of sweep) {
  const base = baseline(r);
  if (r.scope === 'unscoped' || base === undefined) continue;
  const at = r.store === 'sweep' ? `scope ${r.scopeSize}, ${storeName(r)}` : storeName(r);
  for (const mode of MODES) {
    const t = r.times[mode];
    const b = base.times[mode];
    if (t === undefined || b === undefined) continue;
    p95Goal(`scoped ${mode} p95 ms (${at})`, t.p95);
    ratioGoal(`scoped ${mode} p50 / unscoped p50 (${at})`, t.p50 / b.p50);
  }
  if (r.recallAt10 !== undefined)
    goals.push({
      goal: `scoped vector recall@10 vs exact (${at})`,
      target: '>= 0.95',
      measured: r.recallAt10,
      met: r.recallAt10 >= 0.95,
    });
}
// The goals set before the sweep: hybrid and keyword p95, hybrid against vector, unscoped and scoped to a tenth of the store.
const tenth = (store: ScopeSweepRow): ScopeSweepRow | undefined =>
  sweep.find((r) => r.store === 'sweep' && r.memories === store.memories && r.scopeSize === store.memories / 10);
for (const unscoped of sweep.filter((r) => r.store === 'sweep' && r.scope === 'unscoped')) {
  for (const [scope, r] of [
    ['unscoped', unscoped],
    ['scoped to a tenth', tenth(unscoped)],
  ] as const) {
    if (r === undefined) continue;
    const at = `${storeName(r)}, ${scope}`;
    for (const mode of ['hybrid', 'keyword'] as const)
      if (r.times[mode] !== undefined) p95Goal(`${mode} p95 ms (${at})`, r.times[mode].p95);
    if (r.times.hybrid !== undefined && r.times.vector !== undefined)
      ratioGoal(`hybrid p50 / vector p50 (${at})`, r.times.hybrid.p50 / r.times.vector.p50);
  }
}
for (const r of results) {
  const at = `${r.corpus}, ${r.memories / 1000}k`;
  for (const scope of ['unscoped', 'scoped'] as const) {
    const t = r[scope];
    for (const mode of ['hybrid', 'keyword'] as const)
      if (t[mode] !== undefined) p95Goal(`${mode} p95 ms (${at}, ${scope})`, t[mode].p95);
    if (t.hybrid !== undefined && t.vector !== undefined)
      ratioGoal(`hybrid p50 / vector p50 (${at}, ${scope})`, t.hybrid.p50 / t.vector.p50);
  }
  for (const mode of MODES) {
    const s = r.scoped[mode];
    const u = r.unscoped[mode];
    if (s !== undefined && u !== undefined)
      ratioGoal(`scoped ${mode} p50 / unscoped p50 (${at}, one user of ten)`, s.p50 / u.p50);
  }
}
printTable(
  'goals',
  goals.map((g) => ({
    goal: g.goal,
    target: g.target,
    measured: g.target.endsWith('x')
      ? `${g.measured.toFixed(2)}x`
      : g.measured.toFixed(g.target.includes('0.95') ? 3 : 1),
    met: g.met ? 'yes' : 'NO',
  })),
);
writeResult('memory-search', { results, sweep, crossover, goals });
