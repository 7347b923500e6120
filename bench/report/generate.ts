/**
 * Builds bench/results/REPORT.md and its SVG charts from the benchmarks'
 * bench/results/<name>.json files and the run record of bench/run.ts.
 * `buildReport` is pure (tested); `writeReport` reads and writes the files.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  coldOpenChart,
  crossoverChart,
  ingestChart,
  median,
  recallSearchChart,
  scopeCrossoverChart,
  scopeSweepChart,
  vectorRecallChart,
  type ColdOpenRow,
  type CrossoverRow,
  type IngestRow,
  type RecallSearchSize,
  type VectorDataset,
} from './charts.js';
import { formatMeasured, goalsOf, goalsTable, markdownTable, metMark, tally, type GoalRow } from './goals.js';
import { describeMachine, type BenchmarkRun, type Machine, type RunRecord } from './machine.js';
import { renderChart, type ChartSpec } from './svg.js';
import type { MemorySearchResult, ModelSearchResult, ScopeCrossoverRow, ScopeSweepRow } from '../pages/results.js';
import { cpuBound } from '../util/cpu-bound.js';
import { peersSection } from './peers-section.js';

/** The results directory. */
export const RESULTS_DIR = resolve(import.meta.dirname, '..', 'results');

/** The order of sections; result files with other names follow, then sync. */
export const KNOWN = [
  'vector',
  'vector-crossover',
  'memory-search',
  'memory-search-minilm',
  'memory-search-e5-small',
  'recall-search',
  'ingest',
  'ingest-minilm',
  'ingest-e5-small',
  'cold-open',
  'mcp-search',
  'peers',
  'eval',
] as const;

/** Everything the report is made from. */
export interface ReportInput {
  /** Parsed bench/results/<name>.json by name (run.json excluded). */
  results: Record<string, unknown>;
  run?: RunRecord;
  /** Used when there is no run record. */
  machine: Machine;
  generatedAt: Date;
}

/** A generated chart: file name (next to REPORT.md) and SVG text. */
export interface ChartFile {
  file: string;
  title: string;
  svg: string;
}

/** The generated report. */
export interface Report {
  markdown: string;
  charts: ChartFile[];
  goals: Record<string, GoalRow[]>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number';

/** Milliseconds with sensible precision: 0.588, 12.3, 6943. */
export function ms(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  const a = Math.abs(value);
  return value.toFixed(a < 1 ? 3 : a < 10 ? 2 : a < 100 ? 1 : 0);
}

/** A number with `digits` decimals, '–' when missing. */
export function num(value: number | undefined, digits = 0): string {
  return value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
}

/** 42 s, 16 min 3 s, 1 h 02 min. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '–';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m} min ${Math.round(seconds - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

function utc(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function resultsOf(json: unknown): unknown[] | undefined {
  return isRecord(json) && Array.isArray(json['results']) ? json['results'] : undefined;
}

function isVectorDataset(v: unknown): v is VectorDataset {
  return (
    isRecord(v) &&
    typeof v['dataset'] === 'string' &&
    isRecord(v['exact']) &&
    isNum(v['exact']['p50Ms']) &&
    isRecord(v['hnsw']) &&
    Array.isArray(v['hnsw']['byEf'])
  );
}

function all<T>(rows: unknown[] | undefined, guard: (v: unknown) => v is T): T[] | undefined {
  return rows !== undefined && rows.length > 0 && rows.every(guard) ? rows : undefined;
}

const isRecallSize = (v: unknown): v is RecallSearchSize =>
  isRecord(v) && isNum(v['messages']) && isNum(v['indexP50']) && isNum(v['scanP50']);
const isIngest = (v: unknown): v is IngestRow =>
  isRecord(v) && isNum(v['batch']) && isNum(v['rawPerSecond']) && isNum(v['addPerSecond']);
const isColdOpen = (v: unknown): v is ColdOpenRow =>
  isRecord(v) && isNum(v['memories']) && Array.isArray(v['snapshotMs']) && Array.isArray(v['rebuildMs']);
const isCrossover = (v: unknown): v is CrossoverRow =>
  isRecord(v) && isNum(v['dims']) && isNum(v['n']) && isNum(v['exactP50Ms']) && isNum(v['hnswP50Ms']);

/** A table of whatever flat records a result file holds (for shapes this report does not know). */
export function genericTable(rows: readonly unknown[]): string {
  const records = rows.filter(isRecord);
  if (records.length === 0) return '_No figures in the result file._';
  const columns = [
    ...new Set(
      records.flatMap((r) => Object.keys(r).filter((k) => ['number', 'string', 'boolean'].includes(typeof r[k]))),
    ),
  ];
  const show = (v: unknown): string =>
    isNum(v)
      ? Number.isInteger(v)
        ? String(v)
        : String(Number(v.toPrecision(4)))
      : typeof v === 'string' || typeof v === 'boolean'
        ? String(v)
        : '';
  return markdownTable(
    columns,
    records.map((r) => columns.map((c) => show(r[c]))),
  );
}

interface Section {
  body: string[];
  charts: { file: string; spec: ChartSpec }[];
}

function vectorSection(json: unknown, machineLine: string): Section {
  const datasets = all(resultsOf(json), isVectorDataset);
  if (datasets === undefined)
    return {
      body: ['_The result file has a shape this report does not know:_', '', genericTable(resultsOf(json) ?? [])],
      charts: [],
    };
  const options = isRecord(json) && isRecord(json['options']) ? json['options'] : {};
  const first = datasets[0]!;
  const k = isNum(options['k']) ? options['k'] : 10;
  const params = `k = ${k}, M = ${first.m}, efConstruction = ${first.efConstruction}, ${first.queries} queries per dataset`;
  const body: string[] = [
    `HnswIndex (HNSW in WebAssembly: hnswlib built with SIMD by scripts/build-hnswlib.mjs) against ExactIndex (the exact scan, which is also the ground truth) and hnswlib-node (the same C++ library, native), in Node. ${params}. ` +
      'Datasets: clustered synthetic vectors (`clustered-…`) and sentence embeddings from the offline model (`sentences-…`). ' +
      'Query times include handing the query vector to the library. Goals are judged at efSearch ' +
      `${isNum(options['defaultEfSearch']) ? options['defaultEfSearch'] : 64} (HnswIndex's default).`,
    '',
    '#### recall@10 and query time',
    '',
  ];
  const rows: (string | number)[][] = [];
  for (const d of datasets) {
    rows.push([d.dataset, 'exact scan', '', '1', ms(d.exact.p50Ms), ms(d.exact.p95Ms), '1x', '']);
    for (const e of d.hnsw.byEf) {
      const nat = d.native?.byEf.find((x) => x.ef === e.ef);
      rows.push([
        d.dataset,
        'HNSW (wasm)',
        e.ef,
        num(e.recall, 4),
        ms(e.p50Ms),
        ms(e.p95Ms),
        `${num(d.exact.p50Ms / e.p50Ms, 1)}x`,
        nat === undefined ? '' : `${num(e.p50Ms / nat.p50Ms, 2)}x`,
      ]);
    }
    for (const e of d.native?.byEf ?? [])
      rows.push([
        d.dataset,
        'hnswlib-node (native)',
        e.ef,
        num(e.recall, 4),
        ms(e.p50Ms),
        ms(e.p95Ms),
        `${num(d.exact.p50Ms / e.p50Ms, 1)}x`,
        '1x',
      ]);
  }
  body.push(
    markdownTable(
      [
        'dataset',
        'index',
        'efSearch',
        'recall@10',
        'p50 ms',
        'p95 ms',
        'exact p50 / this p50',
        'this p50 / native p50',
      ],
      rows,
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    '#### Build and snapshot',
    '',
  );
  const build: (string | number)[][] = [];
  for (const d of datasets) {
    const kinds: [string, { buildMs: number; snapshotBytes: number; saveMs: number; loadMs: number } | undefined][] = [
      ['exact scan', d.exact],
      ['HNSW (wasm)', d.hnsw],
      ['hnswlib-node (native)', d.native],
    ];
    for (const [label, f] of kinds) {
      if (f === undefined) continue;
      build.push([
        d.dataset,
        label,
        num(f.buildMs / 1000, 1),
        num(d.n / (f.buildMs / 1000), 0),
        num(f.snapshotBytes / 1e6, 1),
        ms(f.saveMs),
        ms(f.loadMs),
        `${num(f.buildMs / f.loadMs, 1)}x`,
      ]);
    }
  }
  body.push(
    markdownTable(
      ['dataset', 'index', 'build s', 'inserts/s', 'snapshot MB', 'save ms', 'load ms', 'build / load'],
      build,
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  if (datasets.some((d) => d.hnsw.restoredSearchIdentical === false))
    body.push('', '**A restored HNSW snapshot answered differently from the index it was saved from.**');
  return {
    body,
    charts: [{ file: 'vector-recall.svg', spec: vectorRecallChart(datasets, `${params}. ${machineLine}`) }],
  };
}

function crossoverSection(json: unknown, machineLine: string): Section {
  const figures = isRecord(json) && Array.isArray(json['figures']) ? all(json['figures'], isCrossover) : undefined;
  if (figures === undefined) return { body: ['_The result file has a shape this report does not know._'], charts: [] };
  const queries = isRecord(json) && isNum(json['queries']) ? json['queries'] : undefined;
  const body = [
    `Where HNSW starts to beat the exact scan: query p50 (k = 10) of ExactIndex and HnswIndex with its default parameters, by collection size${queries === undefined ? '' : `, ${queries} queries each`}. ` +
      'Informs the automatic choice of index (`lib/vector/choose-index.ts`). No goal.',
    '',
    markdownTable(
      ['dims', 'vectors', 'exact p50 ms', 'HNSW p50 ms', 'exact / HNSW', 'exact build ms', 'HNSW build ms'],
      figures.map((r) => [
        r.dims,
        r.n,
        ms(r.exactP50Ms),
        ms(r.hnswP50Ms),
        `${num(r.exactP50Ms / r.hnswP50Ms, 2)}x`,
        num(r.exactBuildMs, 0),
        num(r.hnswBuildMs, 0),
      ]),
      ['r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  ];
  const found =
    isRecord(json) && isRecord(json['firstSizeWhereHnswIsFaster']) ? json['firstSizeWhereHnswIsFaster'] : undefined;
  if (found !== undefined) {
    const parts = Object.entries(found).map(
      ([d, n]) => `${d}-d: ${isNum(n) ? `${n} vectors` : 'not within the sizes measured'}`,
    );
    body.push('', `First size where HNSW answers faster than the scan: ${parts.join('; ')}.`);
  }
  return {
    body,
    charts: [{ file: 'vector-crossover.svg', spec: crossoverChart(figures, `k = 10, efSearch = 64. ${machineLine}`) }],
  };
}

const isMemorySearch = (v: unknown): v is MemorySearchResult =>
  isRecord(v) &&
  typeof v['corpus'] === 'string' &&
  isNum(v['memories']) &&
  isRecord(v['unscoped']) &&
  isRecord(v['scoped']);

const isSweepRow = (v: unknown): v is ScopeSweepRow =>
  isRecord(v) && typeof v['store'] === 'string' && isNum(v['scopeSize']) && isRecord(v['times']);
const isScopeCrossover = (v: unknown): v is ScopeCrossoverRow =>
  isRecord(v) && isNum(v['scopeSize']) && isRecord(v['scan']) && isRecord(v['walk']);

function memorySearchSection(json: unknown, machineLine: string): Section {
  const rows = all(resultsOf(json), isMemorySearch);
  const sweep = all(isRecord(json) && Array.isArray(json['sweep']) ? json['sweep'] : undefined, isSweepRow);
  const crossover = all(
    isRecord(json) && Array.isArray(json['crossover']) ? json['crossover'] : undefined,
    isScopeCrossover,
  );
  if (rows === undefined && sweep === undefined) return { body: [genericTable(resultsOf(json) ?? [])], charts: [] };
  const modes = ['hybrid', 'keyword', 'vector'] as const;
  const body: string[] = [
    '`search()` end to end (the query embedded by the offline model in its worker, vector candidates from the index, keyword candidates from the in-memory postings, fusion, the top 10 rows read from IndexedDB) ' +
      'in Chromium, per mode, unscoped and scoped to one user. Stores filled through `add()` (dedupe off); "first search" loads the keyword index and catches both indexes up with the fill.',
  ];
  const charts: Section['charts'] = [];
  if (sweep !== undefined) {
    const base = (r: ScopeSweepRow): ScopeSweepRow | undefined =>
      sweep.find((b) => b.store === r.store && b.memories === r.memories && b.scope === 'unscoped');
    body.push(
      '',
      '**Scope sweep.** `sweep`: one store of varied generated sentences whose users hold 10, 100, 1k, 4k, 10k and 50k memories (the rest in users of 1000, their batches interleaved); `users`: 1,000 users of 100 memories each, every query scoped to another user. ' +
        "A scope is searched from the index's memory: an exact scan of its members (`searchAmong`) or a filtered HNSW walk, as `scopeScanWins` decides (the crossover table below). " +
        '"recall@10": vector mode against an exact scan of the scope\'s vectors (a hit counts when its similarity reaches the exact 10th).',
      '',
      markdownTable(
        ['store', 'memories', 'scope', 'scope size', 'mode', 'p50 ms', 'p95 ms', 'p50 / unscoped p50', 'recall@10'],
        sweep.flatMap((r) =>
          modes.map((mode) => {
            const t = r.times[mode];
            const b = base(r)?.times[mode];
            return [
              r.store,
              r.memories,
              r.scope,
              r.scopeSize,
              mode,
              ms(t?.p50),
              ms(t?.p95),
              t !== undefined && b !== undefined ? `${num(t.p50 / b.p50, 2)}x` : '–',
              mode === 'vector' && r.recallAt10 !== undefined ? num(r.recallAt10, 3) : '–',
            ];
          }),
        ),
        ['l', 'r', 'l', 'r', 'l', 'r', 'r', 'r', 'r'],
      ),
      '',
      markdownTable(
        ['store', 'memories', 'fill s', 'first search ms'],
        sweep
          .filter((r) => r.fillSeconds !== undefined)
          .map((r) => [r.store, r.memories, num(r.fillSeconds, 0), ms(r.firstSearchMs)]),
        ['l', 'r', 'r', 'r'],
      ),
    );
    charts.push({
      file: 'memory-search-scopes.svg',
      spec: scopeSweepChart(sweep, `search() top 10, Chromium, offline model. ${machineLine}`),
    });
  }
  if (crossover !== undefined) {
    body.push(
      '',
      '**Exact scan of a scope or filtered HNSW walk** (the index alone: `HnswIndex` of clustered 384-d vectors, scopes are random subsets, k = 40 as memory-search asks, efSearch 64, the two timed alternately per query). ' +
        'The walk visits about ef·size/scope nodes before it holds ef allowed ones; the scan scores each member once. `scopeScanWins` (lib/vector/choose-index.ts) scans while scope² ≤ `WALK_VISIT_COST` · ef · size, ' +
        '`WALK_VISIT_COST` read from this table as (walk / scan) · scope² / (ef · size) where the two meet.',
      '',
      markdownTable(
        [
          'index size',
          'dims',
          'scope',
          'share',
          'scan p50 ms',
          'scan p95 ms',
          'walk p50 ms',
          'walk p95 ms',
          'walk / scan (p50)',
          '(walk / scan) · scope² / (64 · size)',
          'walk recall@10',
        ],
        crossover.map((r) => [
          r.memories,
          r.dimensions,
          r.scopeSize,
          `${num(r.share * 100, 1)}%`,
          ms(r.scan.p50),
          ms(r.scan.p95),
          ms(r.walk.p50),
          ms(r.walk.p95),
          `${num(r.walk.p50 / r.scan.p50, 2)}x`,
          num(((r.walk.p50 / r.scan.p50) * r.scopeSize * r.scopeSize) / (64 * r.memories), 1),
          num(r.walkRecallAt10, 3),
        ]),
        ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
    charts.push({
      file: 'memory-search-crossover.svg',
      spec: scopeCrossoverChart(crossover, `HnswIndex alone, k = 40, efSearch 64, Chromium. ${machineLine}`),
    });
  }
  if (rows !== undefined) {
    const lines = rows.flatMap((r) =>
      (['unscoped', 'scoped'] as const).flatMap((scope) =>
        modes.map((mode) => {
          const t = r[scope][mode];
          const v = r[scope].vector;
          const u = r.unscoped[mode];
          return [
            r.corpus,
            r.memories,
            scope,
            mode,
            ms(t?.p50),
            ms(t?.p95),
            t !== undefined && v !== undefined ? `${num(t.p50 / v.p50, 2)}x` : '–',
            scope === 'scoped' && t !== undefined && u !== undefined ? `${num(t.p50 / u.p50, 2)}x` : '–',
          ];
        }),
      ),
    );
    body.push(
      '',
      "**Chat corpus** (repetitive chat-like text: the offline model's 3000 most frequent non-stopwords, Zipf-distributed, and per-thread topic words from its rarer words; the hard case for postings), scoped to one user of ten.",
      '',
      markdownTable(
        ['corpus', 'memories', 'scope', 'mode', 'p50 ms', 'p95 ms', 'p50 / vector p50', 'p50 / unscoped p50'],
        lines,
        ['l', 'r', 'l', 'l', 'r', 'r', 'r', 'r'],
      ),
      '',
      markdownTable(
        ['corpus', 'memories', 'queries', 'fill s', 'first search ms'],
        rows.map((r) => [r.corpus, r.memories, r.queries, num(r.fillSeconds, 0), ms(r.firstSearchMs)]),
        ['l', 'r', 'r', 'r', 'r'],
      ),
    );
  }
  return { body, charts };
}

/** How a result file names its embedding model: the offline model unless it says otherwise. */
function modelLabel(json: unknown): string {
  const id = isRecord(json) && typeof json['model'] === 'string' ? json['model'] : undefined;
  return id === undefined || id === 'engram-glove-100d' ? 'the offline model' : `${id} (int8)`;
}

/** The model's first load, when the result file has it. */
function loadTable(rows: readonly { loadMs?: number; firstEmbedMs?: number }[], firstEmbed: string): string[] {
  const first = rows.find((r) => r.loadMs !== undefined);
  if (first === undefined) return [];
  return [
    '',
    "The model's first load in the page: `TransformersEmbedder.create()` (worker, ONNX Runtime, the model's files), then its first `embed()`.",
    '',
    markdownTable(
      ['create() ms', `first embed() of ${firstEmbed}, ms`],
      [[num(first.loadMs, 0), num(first.firstEmbedMs, 0)]],
      ['r', 'r'],
    ),
  ];
}

const isModelSearch = (v: unknown): v is ModelSearchResult =>
  isRecord(v) &&
  typeof v['model'] === 'string' &&
  isNum(v['memories']) &&
  isRecord(v['unscoped']) &&
  isRecord(v['scoped']);

function modelSearchSection(json: unknown): Section {
  const rows = all(resultsOf(json), isModelSearch);
  if (rows === undefined) return { body: [genericTable(resultsOf(json) ?? [])], charts: [] };
  const modes = ['hybrid', 'keyword', 'vector'] as const;
  return {
    body: [
      `\`search()\` end to end with ${modelLabel(json)} embedding every query in its worker (vector candidates from HNSW, keyword candidates from the in-memory postings, fusion, the top 10 rows read from IndexedDB), ` +
        'over one store of varied generated sentences in Chromium, per mode, unscoped and scoped to one user of ten, filled through `add()` in batches of 1000 (dedupe off). ' +
        "The stored vectors are not the model's own: each is a mix of two of the model's vectors of 512 generated sentences plus a little noise (the model would take tens of minutes to embed 100k texts on this machine); " +
        'every query is embedded by the model itself, each (scope, mode) with queries of its own, so no query vector comes from the embedding cache.',
      '',
      markdownTable(
        ['memories', 'scope', 'mode', 'p50 ms', 'p95 ms'],
        rows.flatMap((r) =>
          (['unscoped', 'scoped'] as const).flatMap((scope) =>
            modes.map((mode) => [r.memories, scope, mode, ms(r[scope][mode]?.p50), ms(r[scope][mode]?.p95)]),
          ),
        ),
        ['r', 'l', 'l', 'r', 'r'],
      ),
      '',
      markdownTable(
        ['memories', 'queries per scope and mode', 'fill s', 'first search ms'],
        rows.map((r) => [r.memories, r.queries, num(r.fillSeconds, 0), ms(r.firstSearchMs)]),
        ['r', 'r', 'r', 'r'],
      ),
      ...loadTable(rows, 'one query'),
    ],
    charts: [],
  };
}

function recallSearchSection(json: unknown, machineLine: string): Section {
  const rows = all(resultsOf(json), isRecallSize);
  if (rows === undefined) return { body: [genericTable(resultsOf(json) ?? [])], charts: [] };
  const body = [
    '`recall.textSearch()` (keyword postings, BM25, top 10) over N messages stored in real IndexedDB in Chromium, against a full scan that reads every message and ranks it with the same BM25. ' +
      '"Scoped" adds a user filter that every message passes. "top-10 overlap" is the share of the scan\'s top 10 that the index also returned.',
    '',
    markdownTable(
      [
        'messages',
        'queries',
        'index p50 ms',
        'index p95 ms',
        'scoped p50 ms',
        'scoped p95 ms',
        'scan p50 ms',
        'scan p95 ms',
        'scan / index (p50)',
        'top-10 overlap',
        'store s',
      ],
      rows.map((r) => [
        r.messages,
        r.queries,
        ms(r.indexP50),
        ms(r.indexP95),
        ms(r.scopedP50),
        ms(r.scopedP95),
        ms(r.scanP50),
        ms(r.scanP95),
        `${num(r.speedup, 1)}x`,
        num(r.agreement, 3),
        num(r.buildSeconds, 0),
      ]),
      ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  ];
  return {
    body,
    charts: [
      {
        file: 'recall-search.svg',
        spec: recallSearchChart(rows, `BM25 top 10, Chromium, real IndexedDB. ${machineLine}`),
      },
    ],
  };
}

function ingestSection(json: unknown, machineLine: string): Section {
  const rows = all(resultsOf(json), isIngest);
  if (rows === undefined) return { body: [genericTable(resultsOf(json) ?? [])], charts: [] };
  const model = modelLabel(json);
  const body = [
    `\`add()\` throughput (embedding in the worker with ${model}, duplicate check, one IndexedDB transaction per batch with vectors, change log and postings (and history for updates), index update) ` +
      'against each of its stages alone on the same number of texts, in one run in Chromium: the raw embedder, the IndexedDB write of the same rows through the write path, ' +
      'and the vector index insert of the same vectors. Batch 1 uses at most 500 texts. ' +
      "The last two columns: add() with an embedder that answers from vectors computed before the timing, that is add()'s own cost without the model's CPU time. " +
      'The stages run in rounds, in turn, each on its share of the texts, so that the swings of the machine weigh on each alike; ' +
      'what add() leaves for a pause in the writing (merges into HNSW, a snapshot) is done between rounds, untimed.',
    '',
    markdownTable(
      [
        'batch',
        'texts',
        'embedder alone texts/s',
        'IndexedDB write alone rows/s',
        'index insert alone vectors/s',
        'add() texts/s',
        'add() / embedder',
        'add() / slowest stage',
        'add(), vectors precomputed, texts/s',
        'that / slowest stage',
      ],
      rows.map((r) => [
        r.batch,
        r.texts,
        num(r.rawPerSecond, 0),
        num(r.writePerSecond, 0),
        num(r.indexPerSecond, 0),
        num(r.addPerSecond, 0),
        `${num(r.ratio, 2)}x`,
        r.slowestStageRatio === undefined ? '–' : `${num(r.slowestStageRatio, 2)}x`,
        num(r.precomputedPerSecond, 0),
        r.precomputedStageRatio === undefined ? '–' : `${num(r.precomputedStageRatio, 2)}x`,
      ]),
      ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  ];
  const withCpu = rows.filter((r) => r.cpu !== undefined);
  if (withCpu.length > 0) {
    body.push(
      '',
      `Cores the machine kept busy during each stage, of its ${withCpu[0]!.cpu!.cores}, every process counted (the browser's IndexedDB backend works outside the page). ` +
        "Together the stages need at least the sum of their CPU time spread over every core, however well they overlap: that bound is add()'s best throughput, and its ratio to the slowest stage caps add() / slowest stage.",
      '',
      markdownTable(
        [
          'batch',
          'embedder alone',
          'IndexedDB write alone',
          'index insert alone',
          'add()',
          'stages CPU-bound texts/s',
          'ceiling of add() / slowest stage',
        ],
        withCpu.map((r) => {
          const bound = cpuBound(r);
          return [
            r.batch,
            num(r.cpu!.embedder, 2),
            num(r.cpu!.write, 2),
            num(r.cpu!.index, 2),
            num(r.cpu!.add, 2),
            bound === undefined ? '–' : num(bound.perSecond, 0),
            bound === undefined ? '–' : `${num(bound.ceiling, 2)}x`,
          ];
        }),
        ['r', 'r', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
  }
  body.push(...loadTable(rows, 'one batch'));
  const charts =
    rows.length > 1
      ? [
          {
            file: `${model === 'the offline model' ? 'ingest' : model.startsWith('Xenova/e5-small-v2') ? 'ingest-e5-small' : 'ingest-minilm'}.svg`,
            spec: ingestChart(rows, `${model} in a worker, Chromium. ${machineLine}`),
          },
        ]
      : [];
  return { body, charts };
}

function coldOpenSection(json: unknown, machineLine: string): Section {
  const rows = all(resultsOf(json), isColdOpen);
  if (rows === undefined) return { body: [genericTable(resultsOf(json) ?? [])], charts: [] };
  const body = [
    'Time from `Engram.open()` to the first answered vector search on a store of N memories (384-d vectors, Chromium, real IndexedDB, HNSW in WebAssembly): ' +
      'opening from the saved index snapshot against a forced rebuild from the stored vectors (snapshot deleted before each rebuild run). ' +
      '"fresh page" opens are timed in a newly loaded document each (a new JS heap, hnswlib\'s WASM compiled again), as an app start opens the store; "filling page" opens in the page that filled the store and still holds its gigabyte of benchmark data. ' +
      'Memory is measured in a fresh page that only opens the store from its snapshot and searches: the V8 heap engram adds (DevTools Runtime.getHeapUsage after a collection, against the same page just before open(); ' +
      "performance.memory is not used because it counts WASM memory's buffer again once it has grown) plus WASM memory; " +
      '"filling page" is the same sum in the page that filled the store, which also holds the benchmark\'s own table of every vector and WASM memory\'s high-water mark from the fill (WASM memory never shrinks).',
    '',
    markdownTable(
      [
        'memories',
        'snapshot open ms, fresh page (median)',
        'runs',
        'snapshot open ms, filling page (median)',
        'runs',
        'rebuild ms (median)',
        'runs',
        'rebuild / snapshot',
        'fill s',
        'JS heap MiB',
        'WASM MiB',
        '(heap + WASM) / raw vectors',
        'filling page: heap + WASM MiB',
      ],
      rows.map((r) => [
        r.memories,
        r.freshOpenMs === undefined ? '–' : num(median(r.freshOpenMs), 0),
        r.freshOpenMs?.length ?? 0,
        num(median(r.snapshotMs), 0),
        r.snapshotMs.length,
        num(median(r.rebuildMs), 0),
        r.rebuildMs.length,
        `${num(r.ratio, 1)}x`,
        num(r.fillSeconds, 0),
        r.memory === undefined ? '–' : num(r.memory.heapBytes / 2 ** 20, 0),
        r.memory === undefined ? '–' : num(r.memory.wasmBytes / 2 ** 20, 0),
        r.memory === undefined
          ? '–'
          : `${num((r.memory.heapBytes + r.memory.wasmBytes) / r.memory.rawVectorBytes, 2)}x`,
        r.memoryAfterFill === undefined
          ? '–'
          : num((r.memoryAfterFill.heapBytes + r.memoryAfterFill.wasmBytes) / 2 ** 20, 0),
      ]),
      ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  ];
  return {
    body,
    charts: [{ file: 'cold-open.svg', spec: coldOpenChart(rows, `384-d, Chromium, real IndexedDB. ${machineLine}`) }],
  };
}

function evalSection(json: unknown): Section {
  const stores = isRecord(json) && Array.isArray(json['stores']) ? json['stores'] : [];
  const adversarial = isRecord(json) && Array.isArray(json['adversarial']) ? json['adversarial'] : [];
  return {
    body: [
      'Three sets of long multi-session conversations, each with a tuning and a held-out half, measured for each embedding model present ' +
        '(`glove`: the offline default, `engram-glove-100d`; `minilm`: all-MiniLM-L6-v2, `Xenova/all-MiniLM-L6-v2`). Every turn is stored with `add()` as a memory of its ' +
        "conversation's scope in a real Engram (Node, fake-indexeddb); a question is answered when one of its evidence turns is in the top k of `search()`. " +
        '`bm25-baseline` is a plain BM25 written independently in `bench/eval/bm25.ts` (no stemming, no stopwords).',
      '',
      '- `locomo`: **LoCoMo** (A. Maharana, D.-H. Lee, S. Tulyakov, M. Bansal, F. Barbieri, Y. Fang, "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024; ' +
        '[github.com/snap-research/locomo](https://github.com/snap-research/locomo), `data/locomo10.zip`, CC BY-NC 4.0, used for evaluation only and never committed or shipped: ' +
        '`npm run eval -- --locomo DIR`). Ten real-length conversations between two people over up to 35 dated sessions; each turn stored as `Speaker: text` (`bench/eval/locomo.ts`). ' +
        'Tuning half: conversations 26, 30, 41, 42, 43; held-out half: 44, 47, 48, 49, 50, on which no choice was made. The figures count categories 1–4; ' +
        'category 5 (adversarial: the question puts to one speaker what the other said, the right answer is that it was not mentioned) is printed apart.',
      '- `paraphrase` (`bench/eval/dataset.ts`, generated): a user tells an assistant personal facts among small talk over 20 sessions and is asked about them in other words; keyword search weak.',
      "- `conversation` (`bench/eval/conversation-dataset.ts`, generated, LoCoMo-style): two friends tell each other about events over 28 dated sessions; questions reuse the event's words; keyword search strong.",
      '',
      "Each model's query forms, fusion weights and recall threshold (`lib/search/retrieval-profile.ts`) were chosen on the tuning halves only (`npx tsx bench/eval/tune.ts --locomo DIR`); " +
        'goals are judged on the held-out halves.',
      '',
      genericTable(resultsOf(json) ?? []),
      '',
      ...(adversarial.length === 0
        ? []
        : ['LoCoMo category 5 (adversarial; not in the figures above):', '', genericTable(adversarial), '']),
      'Stores (a turn merged by add() as a duplicate counts as its standing memory; a wrong merge joins two turns of different meaning; LoCoMo: different words):',
      '',
      genericTable(stores),
    ],
    charts: [],
  };
}

const TITLES: Record<string, string> = {
  vector: 'Vector index (`bench/vector.ts`)',
  'vector-crossover': 'Exact scan or HNSW (`bench/vector.ts --crossover`)',
  'memory-search': 'Memory search end to end (`bench/memory-search.ts`)',
  'memory-search-minilm': 'Memory search end to end with MiniLM (`bench/model-search.ts`)',
  'recall-search': 'Recall text search (`bench/recall-search.ts`)',
  ingest: 'Ingest (`bench/ingest.ts`)',
  'ingest-minilm': 'Ingest with MiniLM (`bench/ingest.ts --model minilm`)',
  'memory-search-e5-small': 'Memory search end to end with e5-small (`bench/model-search.ts --model e5-small`)',
  'ingest-e5-small': 'Ingest with e5-small (`bench/ingest.ts --model e5-small`)',
  'cold-open': 'Cold open (`bench/cold-open.ts`)',
  'mcp-search':
    'MCP tool call through the desktop app (`bench/mcp-search.ts`: SDK client over loopback HTTP, main process, IPC as a structured clone, renderer engram over fake-indexeddb)',
  peers: 'engram and its peers side by side (`bench/peers.ts`)',
  eval: 'Retrieval quality (`npm run eval`, `bench/eval/run.ts`)',
  sync: 'Sync with Qdrant (`bench/sync.ts`, Qdrant-compatible test server on loopback)',
};

const SECTIONS: Record<string, (json: unknown, machineLine: string) => Section> = {
  vector: vectorSection,
  'vector-crossover': crossoverSection,
  'memory-search': memorySearchSection,
  'memory-search-minilm': modelSearchSection,
  'recall-search': recallSearchSection,
  ingest: ingestSection,
  'ingest-minilm': ingestSection,
  'memory-search-e5-small': modelSearchSection,
  'ingest-e5-small': ingestSection,
  'cold-open': coldOpenSection,
  peers: (json: unknown) => ({ body: peersSection(json), charts: [] }),
  eval: evalSection,
};

function resultTime(json: unknown): Date | undefined {
  const at = isRecord(json) ? json['at'] : undefined;
  const d = typeof at === 'string' ? new Date(at) : undefined;
  return d !== undefined && !Number.isNaN(d.getTime()) ? d : undefined;
}

/** How a benchmark fared in this run, in words, and whether its figures are from this run. */
export function statusOf(name: string, json: unknown, run: RunRecord | undefined): { text: string; current: boolean } {
  const at = resultTime(json);
  const entry: BenchmarkRun | undefined = run?.benchmarks.find((b) => b.name === name);
  const earlier = at === undefined ? 'no result file' : `figures from an earlier run (${utc(at)})`;
  if (entry === undefined) {
    const fromThisRun = at !== undefined && run !== undefined && at.getTime() >= new Date(run.startedAt).getTime();
    if (json === undefined) return { text: 'not run', current: false };
    return run === undefined || !fromThisRun
      ? { text: `not part of this run; ${earlier}`, current: false }
      : { text: 'ran', current: true };
  }
  if (entry.status === 'skipped')
    return { text: json === undefined ? 'skipped' : `skipped; ${earlier}`, current: false };
  // The result file belongs to this benchmark run when it was written while the benchmark ran.
  const start = new Date(entry.startedAt ?? run!.startedAt).getTime() - 1000;
  const end = entry.finishedAt === undefined ? Infinity : new Date(entry.finishedAt).getTime() + 1000;
  const current = at !== undefined && at.getTime() >= start && at.getTime() <= end;
  const later = at !== undefined && at.getTime() > end;
  const when =
    entry.startedAt !== undefined && run !== undefined && entry.startedAt < run.startedAt
      ? ` on ${utc(new Date(entry.startedAt))}`
      : '';
  if (entry.status === 'ok') {
    if (later)
      return {
        text: `✔ ran${when} in ${duration(entry.seconds)}, but its result file was rewritten afterwards by another process (${utc(at)}); the figures below are those`,
        current: false,
      };
    return { text: `✔ ran${when} in ${duration(entry.seconds)}`, current };
  }
  const code = entry.exitCode === null ? 'killed' : `exit ${entry.exitCode}`;
  return {
    text: `✘ failed${when} after ${duration(entry.seconds)} (${code}); ${current ? 'figures below are from this run' : earlier}`,
    current,
  };
}

/** The load column of the summary: 1-minute load average as the benchmark started → ended. */
function loadOf(entry: BenchmarkRun | undefined): string {
  return entry?.loadAtStart === undefined || entry.loadAtEnd === undefined
    ? '–'
    : `${entry.loadAtStart.toFixed(1)} → ${entry.loadAtEnd.toFixed(1)}`;
}

/** Builds the report text and charts (no file access). */
export function buildReport(input: ReportInput): Report {
  const { results, run } = input;
  const machine = run?.machine ?? input.machine;
  const machineLine = `${machine.cores} cores, Node ${machine.node}`;
  const rank = (n: string): number =>
    n === 'sync' ? 1000 : (KNOWN as readonly string[]).includes(n) ? (KNOWN as readonly string[]).indexOf(n) : 100;
  const names = [...new Set([...Object.keys(results), ...(run?.benchmarks ?? []).map((b) => b.name)])].sort(
    (a, b) => rank(a) - rank(b) || a.localeCompare(b),
  );

  const goals: Record<string, GoalRow[]> = {};
  const charts: ChartFile[] = [];
  const sections: string[] = [];
  const summary: (string | number)[][] = [];

  for (const name of names) {
    const json = results[name];
    const status = statusOf(name, json, run);
    const earlier = (run?.earlierFailures ?? []).filter((f) => f.name === name);
    if (earlier.length > 0)
      status.text += `; an earlier attempt (\`${earlier[earlier.length - 1]!.command}\`) failed, see below`;
    const rows = json === undefined ? [] : goalsOf(json);
    goals[name] = rows;
    const { met, total } = tally(rows);
    summary.push([
      `[${name}](#${anchor(name)})`,
      status.text,
      loadOf(run?.benchmarks.find((b) => b.name === name)),
      json === undefined
        ? '–'
        : total === 0
          ? 'no goal at these sizes'
          : `${met} of ${total} ${met === total ? '✔' : '✘'}`,
    ]);
    const out: string[] = [
      `## ${name}`,
      '',
      `_${TITLES[name] ?? `\`bench/${name}.ts\``}: ${status.text}${json !== undefined && status.current ? `; result file written ${utc(resultTime(json) ?? input.generatedAt)}` : ''}._`,
      '',
    ];
    const entry = run?.benchmarks.find((b) => b.name === name);
    if (entry !== undefined) out.push(`Command: \`${entry.command}\``, '');
    if (entry?.status === 'failed' && entry.tail !== undefined && entry.tail.trim() !== '')
      out.push('Last lines of its output:', '', '```text', entry.tail.trimEnd(), '```', '');
    for (const f of earlier) {
      out.push(
        `**An earlier attempt failed:** \`${f.command}\`${f.startedAt === undefined ? '' : ` on ${utc(new Date(f.startedAt))}`}, after ${duration(f.seconds)} (${f.exitCode === null ? 'killed' : `exit ${f.exitCode}`}). ` +
          `The figures below come from the later run${entry === undefined ? '' : ` (\`${entry.command}\`)`}: whatever only the failed attempt would have measured is missing. Its last lines:`,
        '',
      );
      if (f.tail !== undefined && f.tail.trim() !== '') out.push('```text', f.tail.trimEnd(), '```', '');
    }
    if (json !== undefined) {
      const section = (SECTIONS[name] ?? ((j: unknown) => ({ body: [genericTable(resultsOf(j) ?? [])], charts: [] })))(
        json,
        machineLine,
      );
      out.push(...section.body, '', '#### Goals', '', goalsTable(rows), '');
      for (const c of section.charts) {
        charts.push({ file: c.file, title: c.spec.title, svg: renderChart(c.spec) });
        out.push(`![${c.spec.title}](${c.file})`, '');
      }
    }
    sections.push(out.join('\n'));
  }

  if (!('sync' in results)) {
    summary.push(['[sync](#sync)', 'not run: no bench/results/sync.json', '–', '–']);
    sections.push(
      [
        '## sync',
        '',
        'Not run: `bench/results/sync.json` is missing, so no figure is reported. `npx tsx bench/sync.ts` (or `npm run bench -- --only sync`) measures batched against ' +
          'one-point-per-request pushes and incremental syncs of stores of two sizes against the Qdrant-compatible test server on loopback.',
        '',
      ].join('\n'),
    );
  }

  const head: string[] = ['# Benchmark report', ''];
  const earliest = (run?.benchmarks ?? [])
    .map((b) => b.startedAt)
    .filter((t): t is string => t !== undefined && t < (run?.startedAt ?? ''))
    .sort()[0];
  const when =
    run === undefined
      ? `Generated ${utc(input.generatedAt)} from the result files in \`bench/results/\`.`
      : `${earliest === undefined ? 'Run' : `Figures from runs between ${utc(new Date(earliest))} and ${utc(new Date(run.finishedAt))}; the last run`} started ${utc(new Date(run.startedAt))}, finished ${utc(new Date(run.finishedAt))} (${duration(run.totalSeconds)}); report generated ${utc(input.generatedAt)}.`;
  head.push(
    `${when} Produced by \`npm run bench\` (\`bench/run.ts\`); \`npx tsx bench/report.ts\` regenerates this file from the JSON results alone.`,
    '',
  );
  if (run?.mode === 'quick')
    head.push(
      "> **Quick smoke run** (`--quick`, small sizes): these figures only show that the benchmarks work; they are not the project's measurements and most goals, set at 10k/100k, are not evaluated.",
      '',
    );
  if (run !== undefined && run.args.length > 0) head.push(`Runner arguments: \`${run.args.join(' ')}\``, '');
  head.push(
    '## Machine',
    '',
    markdownTable(
      ['', ''],
      [
        ['CPU', `${machine.cpuModel}, ${machine.cores} cores`],
        ['Memory', `${machine.memoryGiB} GiB`],
        ['OS', machine.os],
        ['Node', machine.node],
        ['Chromium', machine.chromium],
        [
          'Load average (1 min)',
          run === undefined ? String(machine.load1) : `${machine.load1} at start, ${run.loadAtEnd} at end`,
        ],
      ],
    ),
    '',
    '## Summary',
    '',
    markdownTable(['benchmark', 'this run', 'load (1 min) start → end', 'goals met'], summary),
    '',
    `Load: the 1-minute load average as each benchmark started and ended (a trailing average, so the start value still counts the minute before). A benchmark adds about 1–2 itself (its process, and Chromium for the browser ones); much more than that on these ${machine.cores} cores means other work shared the CPU and its times are pessimistic.`,
    '',
  );
  const allGoals = names.flatMap((n) =>
    (goals[n] ?? []).map((g) => [n, g.goal, g.target, formatMeasured(g.measured, g.unit), metMark(g.met)]),
  );
  if (allGoals.length > 0)
    head.push(
      'All goals (details and figures in each section):',
      '',
      markdownTable(['benchmark', 'goal', 'target', 'measured', 'met'], allGoals, ['l', 'l', 'l', 'r', 'l']),
      '',
    );
  return { markdown: `${[...head, ...sections].join('\n').trimEnd()}\n`, charts, goals };
}

/** GitHub's heading anchor for a plain lower-case heading. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replaceAll(' ', '-');
}

/** Reads every result file in `dir` (run.json apart) by its benchmark name. */
export function readResults(dir = RESULTS_DIR): { results: Record<string, unknown>; run?: RunRecord } {
  const results: Record<string, unknown> = {};
  let run: RunRecord | undefined;
  if (!existsSync(dir)) return { results };
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    } catch (e) {
      console.warn(`report: skipping ${file}: ${String(e)}`);
      continue;
    }
    if (file === 'run.json') run = json as RunRecord;
    else results[file.slice(0, -'.json'.length)] = json;
  }
  return run === undefined ? { results } : { results, run };
}

/** Writes REPORT.md and the charts into `dir`; returns the report's path. */
export function writeReport(dir = RESULTS_DIR): { path: string; report: Report } {
  const { results, run } = readResults(dir);
  const report = buildReport({
    results,
    ...(run === undefined ? {} : { run }),
    machine: run?.machine ?? describeMachine(),
    generatedAt: new Date(),
  });
  for (const c of report.charts) writeFileSync(join(dir, c.file), c.svg);
  const path = join(dir, 'REPORT.md');
  writeFileSync(path, report.markdown);
  return { path, report };
}
