/**
 * The report's charts, one function per benchmark: result figures in, chart spec out.
 */
import { colour, type ChartSpec, type LegendEntry, type Series } from './svg.js';
import type {
  EfFigures,
  RecallSearchResult,
  ScopeCrossoverRow,
  ScopeSweepRow,
  StageCores,
  VectorDataset,
} from '../pages/results.js';

export type { EfFigures, VectorDataset };

/** One size of bench/recall-search.ts (results written before the scoped columns existed lack them). */
export type RecallSearchSize = Omit<RecallSearchResult, 'scopedP50' | 'scopedP95'> &
  Partial<Pick<RecallSearchResult, 'scopedP50' | 'scopedP95'>>;

/** One batch size of bench/ingest.ts. */
export interface IngestRow {
  texts: number;
  batch: number;
  rawPerSecond: number;
  writePerSecond?: number;
  indexPerSecond?: number;
  addPerSecond: number;
  precomputedPerSecond?: number;
  ratio: number;
  slowestStageRatio?: number;
  precomputedStageRatio?: number;
  cpu?: StageCores;
  /** The model's first load (create(), first embed()), where measured. */
  loadMs?: number;
  firstEmbedMs?: number;
}

/** One size of bench/cold-open.ts. */
export interface ColdOpenRow {
  memories: number;
  fillSeconds: number;
  snapshotMs: number[];
  freshOpenMs?: number[];
  rebuildMs: number[];
  ratio: number;
  memory?: { heapBytes: number; wasmBytes: number; rawVectorBytes: number };
  memoryAfterFill?: { heapBytes: number; wasmBytes: number; rawVectorBytes: number };
}

/** One point of `bench/vector.ts --crossover`. */
export interface CrossoverRow {
  dims: number;
  n: number;
  exactP50Ms: number;
  hnswP50Ms: number;
  exactBuildMs?: number;
  hnswBuildMs?: number;
}

/** The middle value (upper median for even counts, as bench/cold-open.ts prints it). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/**
 * recall@10 against p50 query time: one line per dataset through HNSW (wasm) at
 * each efSearch, hnswlib-node (native) at the same ef as triangles, the exact scan as a square.
 */
export function vectorRecallChart(datasets: readonly VectorDataset[], subtitle: string): ChartSpec {
  const series: Series[] = [];
  const legend: LegendEntry[] = [];
  datasets.forEach((d, i) => {
    const c = colour(i);
    series.push({
      name: `${d.dataset} HNSW`,
      color: c,
      marker: 'circle',
      points: d.hnsw.byEf.map((e) => ({ x: e.p50Ms, y: e.recall, label: String(e.ef) })),
    });
    if (d.native !== undefined)
      series.push({
        name: `${d.dataset} hnswlib-node`,
        color: c,
        marker: 'triangle',
        line: false,
        points: d.native.byEf.map((e) => ({ x: e.p50Ms, y: e.recall })),
      });
    series.push({
      name: `${d.dataset} exact`,
      color: c,
      marker: 'square',
      line: false,
      hollow: true,
      points: [{ x: d.exact.p50Ms, y: 1 }],
    });
    legend.push({ label: d.dataset, color: c, line: true });
  });
  const grey = '#4b5563';
  legend.push(
    { label: 'HNSW, hnswlib in WASM; numbers: efSearch', color: grey, marker: 'circle' },
    { label: 'hnswlib-node, native, same ef', color: grey, marker: 'triangle' },
    { label: 'exact scan (recall 1)', color: grey, marker: 'square', hollow: true },
  );
  const recalls = datasets
    .flatMap((d) => [...d.hnsw.byEf, ...(d.native?.byEf ?? [])].map((e) => e.recall))
    .filter(Number.isFinite);
  const lowest = Math.min(0.99, ...recalls);
  const bottom = Math.max(0, Math.floor((lowest - 0.005) * 100) / 100);
  return {
    title: 'Vector search: recall@10 against p50 query time',
    subtitle,
    xLabel: 'p50 query time, ms',
    yLabel: 'recall@10',
    xLog: true,
    yDomain: [bottom, 1 + (1 - bottom) * 0.05],
    series,
    legend,
    height: 560,
  };
}

/** Exact scan and HNSW query p50 by collection size, per dimension count. */
export function crossoverChart(rows: readonly CrossoverRow[], subtitle: string): ChartSpec {
  const dims = [...new Set(rows.map((r) => r.dims))].sort((a, b) => a - b);
  const series: Series[] = [];
  dims.forEach((d, i) => {
    const mine = rows.filter((r) => r.dims === d).sort((a, b) => a.n - b.n);
    series.push({
      name: `exact scan, ${d}-d`,
      color: colour(i),
      marker: 'square',
      dashed: true,
      points: mine.map((r) => ({ x: r.n, y: r.exactP50Ms })),
    });
    series.push({
      name: `HNSW, ${d}-d`,
      color: colour(i),
      marker: 'circle',
      points: mine.map((r) => ({ x: r.n, y: r.hnswP50Ms })),
    });
  });
  return {
    title: 'Exact scan against HNSW: query p50 by collection size',
    subtitle,
    xLabel: 'vectors in the index',
    yLabel: 'p50 query time, ms',
    xLog: true,
    yLog: true,
    series,
  };
}

/** Keyword index against the full scan: p50 (and index p95) by number of messages. */
export function recallSearchChart(rows: readonly RecallSearchSize[], subtitle: string): ChartSpec {
  const sorted = [...rows].sort((a, b) => a.messages - b.messages);
  return {
    title: 'recall text search: keyword index against full scan',
    subtitle,
    xLabel: 'messages stored',
    yLabel: 'query time, ms',
    xLog: true,
    yLog: true,
    series: [
      {
        name: 'index p50',
        color: colour(0),
        marker: 'circle',
        points: sorted.map((r) => ({ x: r.messages, y: r.indexP50 })),
      },
      {
        name: 'index p95',
        color: colour(0),
        marker: 'circle',
        dashed: true,
        points: sorted.map((r) => ({ x: r.messages, y: r.indexP95 })),
      },
      {
        name: 'full scan p50',
        color: colour(1),
        marker: 'square',
        points: sorted.map((r) => ({ x: r.messages, y: r.scanP50, label: `${r.speedup.toFixed(0)}x index p50` })),
      },
    ],
  };
}

/** Open-to-first-search time from the snapshot and with a rebuild, by store size. */
export function coldOpenChart(rows: readonly ColdOpenRow[], subtitle: string): ChartSpec {
  const sorted = [...rows].sort((a, b) => a.memories - b.memories);
  return {
    title: 'Cold open: Engram.open() to first search',
    subtitle,
    xLabel: 'memories stored',
    yLabel: 'time to first result, ms (median)',
    xLog: true,
    yLog: true,
    series: [
      {
        name: 'from index snapshot',
        color: colour(0),
        marker: 'circle',
        points: sorted.map((r) => ({ x: r.memories, y: median(r.snapshotMs) })),
      },
      {
        name: 'rebuild from vectors',
        color: colour(1),
        marker: 'square',
        points: sorted.map((r) => ({ x: r.memories, y: median(r.rebuildMs), label: `${r.ratio.toFixed(0)}x` })),
      },
    ],
  };
}

/** add() and raw embedder throughput by batch size. */
export function ingestChart(rows: readonly IngestRow[], subtitle: string): ChartSpec {
  const sorted = [...rows].sort((a, b) => a.batch - b.batch);
  const top = Math.max(1, ...sorted.flatMap((r) => [r.rawPerSecond, r.addPerSecond]).filter(Number.isFinite));
  return {
    title: 'Ingest: add() against the raw embedder',
    subtitle,
    xLabel: 'batch size (texts per call)',
    yLabel: 'texts per second',
    xLog: true,
    yDomain: [0, top * 1.12],
    series: [
      {
        name: 'raw embedder',
        color: colour(1),
        marker: 'square',
        dashed: true,
        points: sorted.map((r) => ({ x: r.batch, y: r.rawPerSecond })),
      },
      {
        name: 'add() (embed + store + index)',
        color: colour(0),
        marker: 'circle',
        points: sorted.map((r) => ({ x: r.batch, y: r.addPerSecond, label: `${r.ratio.toFixed(2)}x` })),
      },
    ],
  };
}

/**
 * search() latency against the scope's size (bench/memory-search): per mode, p50
 * (solid) and p95 (dashed) through the sweep store's scopes, the unscoped p50 of
 * that store as a flat dotted reference, and 1,000 users of 100 as hollow markers.
 */
export function scopeSweepChart(rows: readonly ScopeSweepRow[], subtitle: string): ChartSpec {
  const modes = ['hybrid', 'keyword', 'vector'] as const;
  const sweep = rows
    .filter((r) => r.store === 'sweep' && r.scope !== 'unscoped')
    .sort((a, b) => a.scopeSize - b.scopeSize);
  const base = rows.find((r) => r.store === 'sweep' && r.scope === 'unscoped');
  const users = rows.find((r) => r.store === 'users' && r.scope !== 'unscoped');
  const xs = sweep.map((r) => r.scopeSize);
  const span: [number, number] = [Math.min(...xs, users?.scopeSize ?? Infinity), Math.max(...xs)];
  const series: Series[] = [];
  const legend: LegendEntry[] = [];
  modes.forEach((mode, i) => {
    const c = colour(i);
    series.push({
      name: `${mode} p50`,
      color: c,
      marker: 'circle',
      points: sweep.flatMap((r) => (r.times[mode] === undefined ? [] : [{ x: r.scopeSize, y: r.times[mode].p50 }])),
    });
    series.push({
      name: `${mode} p95`,
      color: c,
      marker: 'circle',
      dashed: true,
      hollow: true,
      points: sweep.flatMap((r) => (r.times[mode] === undefined ? [] : [{ x: r.scopeSize, y: r.times[mode].p95 }])),
    });
    const flat = base?.times[mode];
    if (flat !== undefined)
      series.push({
        name: `${mode} unscoped p50`,
        color: c,
        marker: 'diamond',
        dashed: true,
        points: span.map((x) => ({ x, y: flat.p50 })),
      });
    const u = users?.times[mode];
    if (u !== undefined && users !== undefined)
      series.push({
        name: `${mode}, 1,000 users`,
        color: c,
        marker: 'square',
        line: false,
        hollow: true,
        points: [{ x: users.scopeSize, y: u.p50 }],
      });
    legend.push({ label: mode, color: c, line: true });
  });
  const grey = '#4b5563';
  legend.push(
    { label: 'p50 by scope size (one user of the sweep store)', color: grey, marker: 'circle', line: true },
    { label: 'p95', color: grey, marker: 'circle', line: true, dashed: true, hollow: true },
    { label: 'unscoped p50 of the same store', color: grey, marker: 'diamond', line: true, dashed: true },
    { label: 'p50, one user of 1,000 (100 memories each)', color: grey, marker: 'square', hollow: true },
  );
  return {
    title: 'Scoped search: search() latency against the scope size',
    subtitle,
    xLabel: 'memories in the scope',
    yLabel: 'query time, ms',
    xLog: true,
    yLog: true,
    series,
    legend,
    height: 520,
  };
}

/** The index alone: exact scan of a scope against a filtered HNSW walk, p50 by scope size. */
export function scopeCrossoverChart(rows: readonly ScopeCrossoverRow[], subtitle: string): ChartSpec {
  const sizes = [...new Set(rows.map((r) => r.memories))].sort((a, b) => a - b);
  const series: Series[] = [];
  sizes.forEach((n, i) => {
    const mine = rows.filter((r) => r.memories === n).sort((a, b) => a.scopeSize - b.scopeSize);
    const dims = mine[0]?.dimensions ?? 0;
    series.push({
      name: `scan of the scope, ${n / 1000}k × ${dims}-d`,
      color: colour(i),
      marker: 'square',
      dashed: true,
      points: mine.map((r) => ({ x: r.scopeSize, y: r.scan.p50 })),
    });
    series.push({
      name: `filtered HNSW walk, ${n / 1000}k × ${dims}-d`,
      color: colour(i),
      marker: 'circle',
      points: mine.map((r) => ({ x: r.scopeSize, y: r.walk.p50 })),
    });
  });
  return {
    title: 'A scope: exact scan against filtered HNSW walk (p50)',
    subtitle,
    xLabel: 'memories in the scope',
    yLabel: 'p50 query time, ms',
    xLog: true,
    yLog: true,
    series,
  };
}
