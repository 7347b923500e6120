/**
 * bench/ingest: add() throughput with embeddings (offline model in a worker,
 * real IndexedDB, Chromium) against each of its stages alone on the same number
 * of texts, in one run: the raw embedder, the IndexedDB write of the same rows,
 * the vector index insert of the same vectors; and add() with the vectors
 * computed beforehand (add()'s own cost without the model's). The stages run in
 * rounds, in turn, so that the machine's swings weigh on each alike.
 * Goals: add() at least 0.8x its slowest stage alone; at least 1,000 memories/s.
 * With `--model minilm`: the same with all-MiniLM-L6-v2 (int8) in the worker, its
 * first load printed; goal add() at least 0.8x the embedder alone (ingest-minilm.json).
 * Run: npx tsx bench/ingest.ts [--count 3000] [--batches 1,16,64] [--model glove|minilm|e5-small]
 */
import { runPage } from './browser.js';
import { option } from './util/args.js';
import { cpuBound } from './util/cpu-bound.js';
import { printTable, writeResult } from './util/report.js';
import type { IngestResult } from './pages/results.js';
import { BENCH_MODELS, benchModelOf, resultName } from './util/bench-model.js';

const model = benchModelOf(option('model'));
const { label } = BENCH_MODELS[model];
const count = option('count') ?? (model === 'glove' ? '3000' : '1500');
const batches = option('batches') ?? '1,16,64';
console.log(`ingest: ${count} texts, batches ${batches} (Chromium, ${label} in a worker)`);
const { results } = await runPage<{ results: IngestResult[] }>(
  'bench/pages/ingest.html',
  { count, batches, model },
  60 * 60_000,
);
printTable(
  `the model's first load in the page (${label})`,
  results.map((r) => ({
    batch: r.batch,
    'create() ms': r.loadMs?.toFixed(0) ?? '–',
    'first embed() of one batch, ms': r.firstEmbedMs?.toFixed(0) ?? '–',
  })),
);
printTable(
  `add() against each of its stages alone (texts/s; the stages in ${results[0]?.rounds ?? 1} rounds, in turn)`,
  results.map((r) => ({
    batch: r.batch,
    texts: r.texts,
    'embedder alone': r.rawPerSecond.toFixed(0),
    'IndexedDB write alone': r.writePerSecond?.toFixed(0) ?? '–',
    'index insert alone': r.indexPerSecond?.toFixed(0) ?? '–',
    'add()': r.addPerSecond.toFixed(0),
    'add() / embedder': `${r.ratio.toFixed(2)}x`,
    'add() / slowest stage': r.slowestStageRatio === undefined ? '–' : `${r.slowestStageRatio.toFixed(2)}x`,
    'add(), vectors precomputed': r.precomputedPerSecond?.toFixed(0) ?? '–',
    'that / slowest stage': r.precomputedStageRatio === undefined ? '–' : `${r.precomputedStageRatio.toFixed(2)}x`,
  })),
);
const withCpu = results.filter((r) => r.cpu !== undefined);
if (withCpu.length > 0) {
  printTable(
    `cores the machine kept busy during each stage (of ${withCpu[0]!.cpu!.cores}), and add() if only CPU time limited it`,
    withCpu.map((r) => {
      const bound = cpuBound(r);
      return {
        batch: r.batch,
        'embedder alone': r.cpu!.embedder.toFixed(2),
        'IndexedDB write alone': r.cpu!.write.toFixed(2),
        'index insert alone': r.cpu!.index.toFixed(2),
        'add()': r.cpu!.add.toFixed(2),
        'stages CPU-bound, texts/s': bound === undefined ? '–' : bound.perSecond.toFixed(0),
        'ceiling of add() / slowest stage': bound === undefined ? '–' : `${bound.ceiling.toFixed(2)}x`,
      };
    }),
  );
}
const main = results.reduce((a, b) => (b.batch > a.batch ? b : a));
const slowest = main.slowestStageRatio ?? main.ratio;
const goals =
  model === 'glove'
    ? [
        {
          goal: `add() / its slowest stage alone (batch ${main.batch})`,
          target: '>= 0.8x',
          measured: slowest,
          met: slowest >= 0.8,
        },
        {
          goal: `add() memories/s (batch ${main.batch}, offline model)`,
          target: '>= 1000',
          measured: main.addPerSecond,
          met: main.addPerSecond >= 1000,
        },
      ]
    : [
        {
          goal: `add() / the embedder alone (batch ${main.batch}, ${model})`,
          target: '>= 0.8x',
          measured: main.ratio,
          met: main.ratio >= 0.8,
        },
        {
          goal: `add() / its slowest stage alone (batch ${main.batch}, ${model})`,
          target: '>= 0.8x',
          measured: slowest,
          met: slowest >= 0.8,
        },
      ];
printTable(
  'goals',
  goals.map((g) => ({
    goal: g.goal,
    target: g.target,
    measured: g.target.endsWith('x') ? `${g.measured.toFixed(2)}x` : g.measured.toFixed(0),
    met: g.met ? 'yes' : 'NO',
  })),
);
writeResult(resultName('ingest', model), { model: BENCH_MODELS[model].id, results, goals });
