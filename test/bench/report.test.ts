import { describe, expect, it } from 'vitest';
import { argumentsFor, PLANS } from '../../bench/run.js';
import { buildReport, duration, ms, statusOf } from '../../bench/report/generate.js';
import type { Machine, RunRecord } from '../../bench/report/machine.js';
import { checkXml, countPoints } from './xml.js';

const machine: Machine = {
  cpuModel: 'Test CPU',
  cores: 2,
  memoryGiB: 8,
  os: 'linux',
  node: 'v20.0.0',
  chromium: 'Chromium 1.0',
  load1: 0.5,
};

const efs = (base: number): { ef: number; recall: number; p50Ms: number; p95Ms: number }[] =>
  [16, 32, 64, 128].map((ef, i) => ({ ef, recall: 0.9 + i * 0.03, p50Ms: base * (i + 1), p95Ms: base * (i + 2) }));

function dataset(name: string, n: number, native = true): Record<string, unknown> {
  const figures = { buildMs: 1000, snapshotBytes: 1e6, saveMs: 10, loadMs: 5 };
  return {
    dataset: name,
    n,
    dims: 384,
    queries: 200,
    m: 16,
    efConstruction: 100,
    exact: { ...figures, p50Ms: 20, p95Ms: 30 },
    hnsw: { ...figures, byEf: efs(0.5), restoredSearchIdentical: true },
    ...(native ? { native: { ...figures, byEf: efs(0.25) } } : {}),
  };
}

const vector = {
  name: 'vector',
  at: '2030-01-01T10:05:00.000Z',
  options: { k: 10, defaultEfSearch: 64 },
  results: [dataset('clustered-10k×384', 10_000), dataset('clustered-100k×384', 100_000, false)],
  goals: {
    'clustered-10k×384': {
      ef: 64,
      recallAt10: { value: 0.96, goal: '>= 0.95', met: true },
      speedupVsExact: { value: 13.3, goal: 'reported (goal set at 100k)', met: null },
    },
    'clustered-100k×384': { ef: 64, speedupVsExact: { value: 13.3, goal: '>= 20', met: false } },
  },
};

const recallSearch = {
  name: 'recall-search',
  at: '2020-01-01T00:00:00.000Z',
  results: [10_000, 100_000].map((messages, i) => ({
    messages,
    queries: 200,
    indexP50: 10 + i,
    indexP95: 100,
    scanP50: 300 * (i + 1),
    scanP95: 400,
    speedup: (300 * (i + 1)) / (10 + i),
    agreement: 1,
    buildSeconds: 30,
    scopedP50: 9,
    scopedP95: 90,
  })),
  goals: [{ goal: 'index vs scan at 100k', target: '>= 10x', measured: 54.5, met: true }],
};

const run: RunRecord = {
  startedAt: '2030-01-01T10:00:00.000Z',
  finishedAt: '2030-01-01T10:30:00.000Z',
  mode: 'full',
  args: [],
  totalSeconds: 1800,
  machine,
  loadAtEnd: 0.7,
  benchmarks: [
    {
      name: 'vector',
      command: 'tsx bench/vector.ts',
      status: 'ok',
      seconds: 600,
      exitCode: 0,
      startedAt: '2030-01-01T10:00:00.000Z',
      finishedAt: '2030-01-01T10:10:00.000Z',
      loadAtStart: 0.5,
      loadAtEnd: 2.5,
    },
    {
      name: 'recall-search',
      command: 'tsx bench/recall-search.ts',
      status: 'failed',
      seconds: 12,
      exitCode: 1,
      tail: 'Error: page crashed',
    },
  ],
};

describe('buildReport', () => {
  const report = buildReport({
    results: { vector, 'recall-search': recallSearch },
    run,
    machine,
    generatedAt: new Date('2030-01-01T10:31:00Z'),
  });

  it('states the machine, every benchmark with its status, and that the sync benchmark did not run', () => {
    const md = report.markdown;
    expect(md).toContain('| CPU | Test CPU, 2 cores |');
    expect(md).toContain('| Chromium | Chromium 1.0 |');
    expect(md).toMatch(/\| \[vector\]\(#vector\) \| ✔ ran in 10 min 0 s \| 0\.5 → 2\.5 \| 1 of 2 ✘ \|/);
    expect(md).toMatch(
      /recall-search.*✘ failed after 12 s \(exit 1\); figures from an earlier run \(2020-01-01 00:00 UTC\)/,
    );
    expect(md).toContain('Error: page crashed');
    expect(md).toContain('## sync');
    expect(md).toMatch(/not run: no bench\/results\/sync.json/);
    expect(md).not.toMatch(/sync.*\d+ ms/);
  });

  it('reports a sync result file in its own section, with its goals, instead of "not run"', () => {
    const sync = {
      name: 'sync',
      at: '2030-01-01T10:20:00.000Z',
      results: [{ part: 'push', push: 'batched', memories: 10_000, requests: 79 }],
      goals: [
        {
          goal: 'push 10000: batched vs one point per request, upload phase',
          target: '>= 10x',
          measured: 42.5,
          met: true,
        },
      ],
    };
    const md = buildReport({ results: { sync }, machine, generatedAt: new Date('2030-01-01T10:31:00Z') }).markdown;
    expect(md).toContain('Sync with Qdrant (`bench/sync.ts`');
    expect(md).toContain('| push 10000: batched vs one point per request, upload phase | ≥ 10x | 42.5x | ✔ |');
    expect(md).not.toContain('not run: no bench/results/sync.json');
  });

  it('prints add() with precomputed vectors beside add() in the ingest section, and a dash for older results without it', () => {
    const row = {
      texts: 3000,
      batch: 64,
      rawPerSecond: 6772,
      writePerSecond: 2100,
      indexPerSecond: 14728,
      addPerSecond: 1491,
      ratio: 0.22,
      slowestStageRatio: 0.71,
    };
    const ingest = {
      name: 'ingest',
      at: '2030-01-01T10:20:00.000Z',
      results: [
        { ...row, batch: 16 },
        { ...row, rounds: 6, precomputedPerSecond: 1859, precomputedStageRatio: 0.885 },
      ],
      goals: [{ goal: 'add() / its slowest stage alone (batch 64)', target: '>= 0.8x', measured: 0.71, met: false }],
    };
    const md = buildReport({ results: { ingest }, machine, generatedAt: new Date('2030-01-01T10:31:00Z') }).markdown;
    expect(md).toContain('| add(), vectors precomputed, texts/s | that / slowest stage |');
    expect(md).toContain('| 64 | 3000 | 6772 | 2100 | 14728 | 1491 | 0.22x | 0.71x | 1859 | 0.89x |');
    expect(md).toContain('| 16 | 3000 | 6772 | 2100 | 14728 | 1491 | 0.22x | 0.71x | – | – |');
  });

  it('names the model of an ingest-minilm result and prints its first load', () => {
    const row = {
      texts: 768,
      batch: 64,
      rawPerSecond: 120,
      addPerSecond: 110,
      ratio: 0.92,
      loadMs: 2100,
      firstEmbedMs: 900,
    };
    const json = {
      name: 'ingest-minilm',
      model: 'Xenova/all-MiniLM-L6-v2',
      at: '2030-01-01T10:20:00.000Z',
      results: [row],
      goals: [{ goal: 'add() / the embedder alone (batch 64, minilm)', target: '>= 0.8x', measured: 0.92, met: true }],
    };
    const md = buildReport({
      results: { 'ingest-minilm': json },
      machine,
      generatedAt: new Date('2030-01-01T10:31:00Z'),
    }).markdown;
    expect(md).toContain('Ingest with MiniLM (`bench/ingest.ts --model minilm`)');
    expect(md).toContain('embedding in the worker with Xenova/all-MiniLM-L6-v2 (int8)');
    expect(md).toContain('| create() ms | first embed() of one batch, ms |');
    expect(md).toContain('| 2100 | 900 |');
    expect(md).toContain('| add() / the embedder alone (batch 64, minilm) | ≥ 0.8x | 0.92x | ✔ |');
  });

  it('prints the memory-search-minilm section from bench/model-search, with the model and its first load', () => {
    const times = {
      hybrid: { p50: 16.1, p95: 40.2 },
      keyword: { p50: 3.9, p95: 12.1 },
      vector: { p50: 17.9, p95: 38 },
    };
    const json = {
      name: 'memory-search-minilm',
      model: 'Xenova/all-MiniLM-L6-v2',
      at: '2030-01-01T10:20:00.000Z',
      results: [
        {
          model: 'Xenova/all-MiniLM-L6-v2',
          memories: 100000,
          queries: 109,
          fillSeconds: 279,
          firstSearchMs: 1400,
          loadMs: 2500,
          firstEmbedMs: 60,
          unscoped: times,
          scoped: times,
        },
      ],
    };
    const md = buildReport({
      results: { 'memory-search-minilm': json },
      machine,
      generatedAt: new Date('2030-01-01T10:31:00Z'),
    }).markdown;
    expect(md).toContain('Memory search end to end with MiniLM (`bench/model-search.ts`)');
    expect(md).toContain('with Xenova/all-MiniLM-L6-v2 (int8) embedding every query in its worker');
    expect(md).toContain('| 100000 | unscoped | hybrid | 16.1 | 40.2 |');
    expect(md).toContain('| 2500 | 60 |');
  });

  it('prints each goal beside its measured ratio, met or not', () => {
    const md = report.markdown;
    expect(md).toContain('| clustered-10k×384: HNSW recall@10 (efSearch 64) | ≥ 0.95 | 0.96 | ✔ |');
    expect(md).toContain('| clustered-100k×384: HNSW vs exact scan, p50 (efSearch 64) | ≥ 20x | 13.3x | ✘ |');
    expect(md).toContain('– (goal set at 100k)');
    expect(report.goals['recall-search']).toHaveLength(1);
  });

  it('charts recall@10 against p50 with HNSW lines, native and exact points, linked from the Markdown', () => {
    const chart = report.charts.find((c) => c.file === 'vector-recall.svg');
    expect(chart).toBeDefined();
    expect(checkXml(chart!.svg)).toEqual([]);
    // 10k: 4 HNSW + 4 native + 1 exact; 100k: 4 HNSW + 1 exact (no native)
    expect(countPoints(chart!.svg)).toBe(14);
    expect(chart!.svg.match(/<polyline/g)).toHaveLength(2);
    expect(report.markdown).toContain('](vector-recall.svg)');
    const recall = report.charts.find((c) => c.file === 'recall-search.svg');
    expect(countPoints(recall!.svg)).toBe(6);
    expect(report.markdown).toContain('](recall-search.svg)');
  });

  it('prints the figures', () => {
    expect(report.markdown).toMatch(
      /\| clustered-10k×384 \| HNSW \(wasm\) \| 16 \| 0\.9000 \| 0\.500 \| 1\.00 \| 40\.0x \| 2\.00x \|/,
    );
    expect(report.markdown).toMatch(/\| 100000 \| 200 \| 11\.0 \|/);
  });

  it('keeps saying that an earlier, larger attempt failed', () => {
    const failed = {
      name: 'recall-search',
      command: 'tsx bench/recall-search.ts',
      status: 'failed' as const,
      seconds: 1800,
      exitCode: 1,
      tail: 'TimeoutError',
      startedAt: '2029-12-31T09:00:00.000Z',
    };
    const md = buildReport({
      results: { 'recall-search': recallSearch },
      run: { ...run, earlierFailures: [failed] },
      machine,
      generatedAt: new Date(),
    }).markdown;
    expect(md).toMatch(/an earlier attempt \(`tsx bench\/recall-search.ts`\) failed/);
    expect(md).toContain(
      '**An earlier attempt failed:** `tsx bench/recall-search.ts` on 2029-12-31 09:00 UTC, after 30 min 0 s (exit 1)',
    );
    expect(md).toContain('TimeoutError');
  });

  it('flags a quick run', () => {
    const quick = buildReport({
      results: {},
      run: { ...run, mode: 'quick', benchmarks: [] },
      machine,
      generatedAt: new Date(),
    });
    expect(quick.markdown).toContain('Quick smoke run');
    expect(quick.charts).toEqual([]);
  });
});

describe('statusOf', () => {
  it('tells results of this run from older ones', () => {
    expect(statusOf('vector', vector, run)).toEqual({ text: '✔ ran in 10 min 0 s', current: true });
    expect(statusOf('ingest', undefined, run).text).toBe('not run');
    expect(statusOf('recall-search', recallSearch, undefined).current).toBe(false);
  });

  it('says so when another process rewrote a result file after the benchmark ran', () => {
    const status = statusOf('vector', { ...vector, at: '2030-01-01T10:20:00.000Z' }, run);
    expect(status.current).toBe(false);
    expect(status.text).toMatch(/rewritten afterwards by another process/);
  });

  it('keeps the date of a benchmark carried over from an earlier run', () => {
    const later = { ...run, startedAt: '2030-01-02T10:00:00.000Z' };
    expect(statusOf('vector', vector, later)).toEqual({
      text: '✔ ran on 2030-01-01 10:00 UTC in 10 min 0 s',
      current: true,
    });
  });
});

describe('formatting', () => {
  it('prints times', () => {
    expect(ms(0.5884)).toBe('0.588');
    expect(ms(12.04)).toBe('12.0');
    expect(ms(6943.2)).toBe('6943');
    expect(ms(undefined)).toBe('–');
    expect(duration(42)).toBe('42 s');
    expect(duration(963)).toBe('16 min 3 s');
    expect(duration(3720)).toBe('1 h 02 min');
  });
});

describe('runner arguments', () => {
  const plan = (name: string) => PLANS.find((p) => p.name === name)!;
  it('passes sizes through and uses small sizes for --quick unless given', () => {
    const read = (values: Record<string, string>) => (name: string) => values[name];
    expect(argumentsFor(plan('recall-search'), false, read({}))).toEqual([]);
    expect(argumentsFor(plan('recall-search'), true, read({}))).toEqual(['--sizes', '2000']);
    expect(argumentsFor(plan('recall-search'), true, read({ sizes: '5000' }))).toEqual(['--sizes', '5000']);
    expect(argumentsFor(plan('ingest'), false, read({ sizes: '5000', count: '100' }))).toEqual(['--count', '100']);
    expect(argumentsFor(plan('vector'), false, read({ 'skip-native': 'true' }))).toEqual(['--skip-native']);
    expect(
      argumentsFor(plan('vector-crossover'), false, read({ sizes: '5000', 'crossover-sizes': '100,200' })),
    ).toEqual(['--crossover', '--sizes', '100,200']);
  });
});
