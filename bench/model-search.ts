/**
 * bench/model-search: search() end to end at 100k memories in real Chromium
 * with a sentence model (all-MiniLM-L6-v2, int8) embedding every query in its
 * worker (the offline model's search is bench/memory-search.ts): hybrid,
 * keyword-only and vector-only, unscoped and scoped to one user of ten. The
 * store's vectors are mixes of the model's vectors of 512 sentences (see the
 * page); the model's first load is printed.
 * Goal: hybrid and vector p95 <= 60 ms, the query's embedding included.
 * Writes memory-search-minilm.json.
 * Run: npx tsx bench/model-search.ts [--sizes 100000] [--queries 100]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { printTable, writeResult } from './util/report.js';
import { BENCH_MODELS, benchModelOf, resultName } from './util/bench-model.js';
import type { ModelSearchResult } from './pages/results.js';

const model = benchModelOf(option('model') ?? 'minilm');
if (model === 'glove')
  throw new RangeError('bench/model-search is for a sentence model; the offline model is bench/memory-search.ts');
const size = option('sizes') ?? '100000';
const queries = option('queries') ?? '100';
console.log(
  `model-search: ${size} memories, ${queries} queries per scope and mode (Chromium, real IndexedDB, ${BENCH_MODELS[model].label})`,
);
const { results } = await runPage<{ results: ModelSearchResult[] }>(
  'bench/pages/model-search.html',
  { size, queries, model },
  90 * 60_000,
);
const r = results[0]!;
printTable(`the model's first load in the page (${BENCH_MODELS[model].label})`, [
  { 'create() ms': r.loadMs.toFixed(0), 'first embed() of one query, ms': r.firstEmbedMs.toFixed(0) },
]);
printTable(
  'search() end to end, the query embedded by the model, top 10, Chromium',
  (['unscoped', 'scoped'] as const).flatMap((scope) =>
    (['hybrid', 'keyword', 'vector'] as const).map((mode) => ({
      memories: r.memories,
      scope,
      mode,
      'p50 ms': r[scope][mode]?.p50.toFixed(2) ?? '–',
      'p95 ms': r[scope][mode]?.p95.toFixed(2) ?? '–',
    })),
  ),
);
printTable('fill', [
  { memories: r.memories, 'fill s': r.fillSeconds.toFixed(0), 'first search ms': r.firstSearchMs.toFixed(0) },
]);
const goals = (['unscoped', 'scoped'] as const).flatMap((scope) =>
  (['hybrid', 'vector'] as const).flatMap((mode) => {
    const p95 = r[scope][mode]?.p95;
    return p95 === undefined
      ? []
      : [
          {
            goal: `${mode} p95 ms with the query's embedding (${r.memories / 1000}k, ${model}, ${scope})`,
            target: '<= 60',
            measured: p95,
            met: p95 <= 60,
          },
        ];
  }),
);
printTable(
  'goals',
  goals.map((g) => ({ goal: g.goal, target: g.target, measured: g.measured.toFixed(1), met: g.met ? 'yes' : 'NO' })),
);
writeResult(resultName('memory-search', model), { model: BENCH_MODELS[model].id, results, goals });
