/**
 * The pure part of bench/peers: the system order of each round, the figures
 * of one system from its rounds, the table with a ratio to engram in every
 * row, and the rows where a peer still beats engram. Node side, no I/O.
 */
import { percentile, recallAtK } from './stats.js';
import type { PeerPhaseResult } from '../pages/results.js';
import type { Row } from './report.js';

/** The system every ratio is taken against. */
export const BASELINE = 'engram';

/**
 * engram again, its store filled another way (add() of small batches as an app
 * adds, one add() of the corpus, an import): not peers, but the same store,
 * whose searches after the reopen must be as fast whatever filled it.
 */
export const ENGRAM_FILLS = new Set(['engram-small', 'engram-resumed', 'engram-bulk', 'engram-import']);

/**
 * References, not peers: engram's own rows written with IndexedDB alone (bench/pages/peers/idb-floor.ts), the
 * least a store of its layout takes to be durable. Shown with a ratio like every system; never a win or a goal.
 */
export const REFERENCES = new Set(['idb-floor', 'idb-floor-vectors', 'idb-floor-blocks']);

const msDigits = (v: number): number => (v < 10 ? 2 : v < 100 ? 1 : 0);

/** The fill the others are compared with: add() of small batches, as an app adds (each a small write for the engine). */
export const FILL_BASELINE = 'engram-small';

/** How much slower (p50) a search after a bulk fill and a reopen may be than after the app-like fill. */
export const FILL_P50_LIMIT = 1.1;

/**
 * The fills compared with {@link FILL_BASELINE}: engram's own (add() of 1000 per call, a bulk write each), a
 * second session after the app-like fill (its compaction deletes the first session's log late), the bulk paths.
 */
const BULK_FILLS = ['engram', 'engram-resumed', 'engram-bulk', 'engram-import'];

/**
 * engram's search after the reopen by fill: vector and hybrid p50/p95 of each
 * fill measured, and its p50 over the app-like fill's; empty without that fill.
 */
export function fillTable(figures: readonly PeerFigures[]): Row[] {
  const base = figures.find((f) => f.system === FILL_BASELINE);
  if (base === undefined) return [];
  const ratio = (a: number | undefined, b: number | undefined): string => {
    const r = ratioTo(a, b);
    return r === undefined ? '–' : `${r.toFixed(2)}x`;
  };
  const ms = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(msDigits(v)));
  return [base, ...BULK_FILLS.flatMap((s) => figures.filter((f) => f.system === s))].map((f) => ({
    fill: f.system,
    'vector p50 ms': ms(f.vectorP50),
    'vector p95 ms': ms(f.vectorP95),
    'hybrid p50 ms': ms(f.hybridP50),
    'hybrid p95 ms': ms(f.hybridP95),
    'vector again p50 ms': ms(f.vectorAgainP50),
    'hybrid again p50 ms': ms(f.hybridAgainP50),
    'vector p50 / small': ratio(base.vectorP50, f.vectorP50),
    'hybrid p50 / small': ratio(base.hybridP50, f.hybridP50),
    'vector again p50 / small': ratio(base.vectorAgainP50, f.vectorAgainP50),
    'hybrid again p50 / small': ratio(base.hybridAgainP50, f.hybridAgainP50),
  }));
}

/** `items` rotated left by `round` places: round r starts with the r-th system, so no system always runs first (or last). */
export function rotated<T>(items: readonly T[], round: number): T[] {
  if (items.length === 0) return [];
  const shift = ((round % items.length) + items.length) % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/** One round of one system: what its ingest page and its open page posted. */
export interface PeerRound {
  ingest: PeerPhaseResult;
  open: PeerPhaseResult;
}

/** One system's figures at one size, over its rounds. */
export interface PeerFigures {
  system: string;
  config: string;
  rounds: number;
  queries: number;
  ingestSeconds: number;
  vectorP50: number;
  vectorP95: number;
  recall: number;
  hybridP50?: number;
  hybridP95?: number;
  /** The vector queries' second pass, after the hybrid ones (PeerPhaseResult.vectorAgainMs); absent in older result files. */
  vectorAgainP50?: number;
  /** The hybrid queries' second pass (PeerPhaseResult.hybridAgainMs). */
  hybridAgainP50?: number;
  openMs: number;
  firstHybridMs?: number;
  /** JS heap + ArrayBuffers + WebAssembly memories the open system holds, MiB. */
  memoryMiB: number;
  heapMiB: number;
  buffersMiB: number;
  wasmMiB: number;
}

const median = (xs: readonly number[]): number => percentile(xs, 50);
const MiB = 2 ** 20;

/**
 * The figures of `system` from its rounds: medians of the per-round times
 * and memory; latency percentiles over every query of every round; recall@10
 * of its vector hits against `truth` (each query's exact top-10 document
 * indexes), over every round.
 */
export function peerFigures(
  system: string,
  rounds: readonly PeerRound[],
  truth: readonly (readonly number[])[],
  k = 10,
): PeerFigures {
  if (rounds.length === 0) throw new RangeError(`${system}: no rounds`);
  const all = (pick: (r: PeerRound) => readonly number[] | undefined): number[] =>
    rounds.flatMap((r) => [...(pick(r) ?? [])]);
  const each = (pick: (r: PeerRound) => number | undefined): number[] =>
    rounds.map(pick).filter((x): x is number => x !== undefined);
  const asIds = (lists: readonly (readonly number[])[]): string[][] => lists.map((l) => l.map(String));
  const found = rounds.flatMap((r) => r.open.vectorHits ?? []);
  const expected = rounds.flatMap((r) => truth.slice(0, r.open.vectorHits?.length ?? 0));
  const vector = all((r) => r.open.vectorMs);
  const hybrid = all((r) => r.open.hybridMs);
  const again = all((r) => r.open.vectorAgainMs);
  const hybridAgain = all((r) => r.open.hybridAgainMs);
  const firstHybrid = each((r) => r.open.firstHybridMs);
  const heap = median(each((r) => r.open.memory?.heapBytes)) / MiB;
  const buffers = median(each((r) => r.open.memory?.buffersBytes)) / MiB;
  const wasm = median(each((r) => r.open.memory?.wasmBytes ?? 0)) / MiB;
  return {
    system,
    config: rounds[0]!.ingest.config,
    rounds: rounds.length,
    queries: rounds[0]!.open.vectorMs?.length ?? 0,
    ingestSeconds: median(each((r) => r.ingest.ingestMs)) / 1000,
    vectorP50: percentile(vector, 50),
    vectorP95: percentile(vector, 95),
    recall: recallAtK(asIds(expected), asIds(found), k),
    ...(hybrid.length > 0 ? { hybridP50: percentile(hybrid, 50), hybridP95: percentile(hybrid, 95) } : {}),
    ...(again.length > 0 ? { vectorAgainP50: percentile(again, 50) } : {}),
    ...(hybridAgain.length > 0 ? { hybridAgainP50: percentile(hybridAgain, 50) } : {}),
    openMs: median(each((r) => r.open.openMs)),
    ...(firstHybrid.length > 0 ? { firstHybridMs: median(firstHybrid) } : {}),
    memoryMiB: heap + buffers + wasm,
    heapMiB: heap,
    buffersMiB: buffers,
    wasmMiB: wasm,
  };
}

/** A row of the peers table: how to read it from the figures, and which way is better. */
export interface PeerMetric {
  label: string;
  read: (f: PeerFigures) => number | undefined;
  better: 'lower' | 'higher';
  digits: (value: number) => number;
}

/** The rows, in the order the report prints them. */
export const PEER_METRICS: readonly PeerMetric[] = [
  {
    label: 'insert N to a durable state, s',
    read: (f) => f.ingestSeconds,
    better: 'lower',
    digits: (v) => (v < 10 ? 2 : 1),
  },
  { label: 'vector top-10 p50, ms', read: (f) => f.vectorP50, better: 'lower', digits: msDigits },
  { label: 'vector top-10 p95, ms', read: (f) => f.vectorP95, better: 'lower', digits: msDigits },
  { label: 'recall@10 against exact', read: (f) => f.recall, better: 'higher', digits: () => 3 },
  { label: 'hybrid top-10 p50, ms', read: (f) => f.hybridP50, better: 'lower', digits: msDigits },
  { label: 'hybrid top-10 p95, ms', read: (f) => f.hybridP95, better: 'lower', digits: msDigits },
  { label: 'new process: open to first answer, ms', read: (f) => f.openMs, better: 'lower', digits: msDigits },
  { label: 'first hybrid query after open, ms', read: (f) => f.firstHybridMs, better: 'lower', digits: msDigits },
  {
    label: 'JS heap + ArrayBuffers + WASM held, MiB',
    read: (f) => f.memoryMiB,
    better: 'lower',
    digits: (v) => (v < 10 ? 1 : 0),
  },
];

/** `peer` over `engram` (a ratio above 1: the peer's figure is larger), or undefined when either is missing or engram's is 0. */
export function ratioTo(engram: number | undefined, peer: number | undefined): number | undefined {
  if (engram === undefined || peer === undefined || !Number.isFinite(engram) || !Number.isFinite(peer) || engram === 0)
    return undefined;
  return peer / engram;
}

/**
 * The table: a row per metric, a column per system (engram first), each
 * peer's cell with its ratio to engram's figure, e.g. `19.0 (6.67x)`; `–`
 * where the system has no such figure (no hybrid search).
 */
export function peerTable(figures: readonly PeerFigures[], n: number): Row[] {
  const engram = figures.find((f) => f.system === BASELINE);
  const ordered = [...(engram === undefined ? [] : [engram]), ...figures.filter((f) => f.system !== BASELINE)];
  return PEER_METRICS.map((m) => {
    const row: Row = { [`N = ${n.toLocaleString('en-US')}`]: m.label };
    const base = engram === undefined ? undefined : m.read(engram);
    for (const f of ordered) {
      const value = m.read(f);
      if (value === undefined || !Number.isFinite(value)) {
        row[f.system] = '–';
        continue;
      }
      const text = value.toFixed(m.digits(value));
      const ratio = f.system === BASELINE ? undefined : ratioTo(base, value);
      row[f.system] = ratio === undefined ? text : `${text} (${ratio.toFixed(2)}x)`;
    }
    return row;
  });
}

/** A row where a peer beats engram: by how much (`factor` > 1: how many times better the peer is). */
export interface PeerWin {
  system: string;
  metric: string;
  engram: number;
  peer: number;
  factor: number;
}

/** Every row where a peer's figure is better than engram's (lower time or memory, higher recall); engram's other fills and the references are not peers. */
export function peerWins(figures: readonly PeerFigures[]): PeerWin[] {
  const engram = figures.find((f) => f.system === BASELINE);
  if (engram === undefined) return [];
  const wins: PeerWin[] = [];
  for (const f of figures) {
    if (f.system === BASELINE || ENGRAM_FILLS.has(f.system) || REFERENCES.has(f.system)) continue;
    for (const m of PEER_METRICS) {
      const base = m.read(engram);
      const value = m.read(f);
      const ratio = ratioTo(base, value);
      if (ratio === undefined || base === undefined || value === undefined) continue;
      const factor = m.better === 'lower' ? 1 / ratio : ratio;
      if (factor > 1) wins.push({ system: f.system, metric: m.label, engram: base, peer: value, factor });
    }
  }
  return wins;
}

/** A goal as bench/report reads it from a result file. */
export interface PeerGoal {
  goal: string;
  target: string;
  measured: number;
  met: boolean;
}

/** Peers whose rows are the same work as engram's (a store of texts and vectors, durable); the bare index has goals of its own. */
const SAME_WORK = new Set(['orama', 'pglite', 'entitydb']);
/**
 * Whether the ratio `value` is at most `limit`, but for the float error of the timings: the browser's
 * timer gives whole tenths of a millisecond as sums of floats (a p50 of 2.2 ms reads
 * 2.2000000000000455), so a ratio printed 1.10 against a limit of 1.1 read as not met.
 */
function atMost(value: number, limit: number): boolean {
  return value <= limit + 1e-9;
}

/** Rows that are not the same work for a peer: EntityDB keeps nothing in memory (it reads every row per query). */
const NOT_SAME_WORK = new Set(['entitydb|JS heap + ArrayBuffers + WASM held, MiB']);

/**
 * The p50s of `mode` a fill's goal compares: the second pass of the queries where both fills have one.
 * The first passes run in IndexedDB's warm-up after the reopen (its first few hundred reads 2-3x slower,
 * by how much varies from run to run): bench/results/REPORT.md, peers, session 45. The fill table prints both.
 */
function fillP50s(
  mode: 'vector' | 'hybrid',
  small: PeerFigures,
  f: PeerFigures,
): [string, number | undefined, number | undefined] {
  const [first, again] =
    mode === 'vector' ? (['vectorP50', 'vectorAgainP50'] as const) : (['hybridP50', 'hybridAgainP50'] as const);
  return small[again] !== undefined && f[again] !== undefined
    ? [`${mode} (second pass)`, small[again], f[again]]
    : [mode, small[first], f[first]];
}

/**
 * The goals of issue 27 at size `n`: engram's recall@10 at least 0.95; on
 * every time and memory row where a peer does the same work, engram's figure
 * at most the peer's (engram / peer <= 1x); ingest at least
 * 0.8x the bare hnswlib-wasm index's throughput; vector p50 within 1 ms of it;
 * after a bulk fill (engram's add() of 1000 per call, engram-bulk, engram-import)
 * or a second session (engram-resumed) and a reopen, vector and hybrid p50 (their second passes: {@link fillP50s})
 * within {@link FILL_P50_LIMIT} of the app-like fill's (engram-small).
 */
export function peerGoals(figures: readonly PeerFigures[], n: number): PeerGoal[] {
  const engram = figures.find((f) => f.system === BASELINE);
  if (engram === undefined) return [];
  const at = `at ${n / 1000}k`;
  const goals: PeerGoal[] = [
    { goal: `engram recall@10 ${at}`, target: '>= 0.95', measured: engram.recall, met: engram.recall >= 0.95 },
  ];
  for (const f of figures) {
    if (!SAME_WORK.has(f.system)) continue;
    for (const m of PEER_METRICS) {
      // Recall has its own bound (a scan's is 1 by definition): the rows compared are speed and memory.
      if (m.better === 'higher' || NOT_SAME_WORK.has(`${f.system}|${m.label}`)) continue;
      const ratio = ratioTo(m.read(f), m.read(engram));
      if (ratio === undefined) continue;
      goals.push({
        goal: `engram / ${f.system}: ${m.label.replace(/, (ms|s|MiB)$/, '')} ${at}`,
        target: '<= 1x',
        measured: ratio,
        met: atMost(ratio, 1),
      });
    }
  }
  const small = figures.find((f) => f.system === FILL_BASELINE);
  for (const f of figures) {
    if (small === undefined || !BULK_FILLS.includes(f.system)) continue;
    for (const [mode, base, p50] of [fillP50s('vector', small, f), fillP50s('hybrid', small, f)]) {
      const ratio = ratioTo(base, p50);
      if (ratio === undefined) continue;
      goals.push({
        goal: `${f.system} / ${FILL_BASELINE} (add() of 100 per call): ${mode} p50 after the reopen ${at}`,
        target: `<= ${FILL_P50_LIMIT}x`,
        measured: ratio,
        met: atMost(ratio, FILL_P50_LIMIT),
      });
    }
  }
  const bare = figures.find((f) => f.system === 'hnswlib-wasm');
  if (bare !== undefined) {
    const throughput = bare.ingestSeconds / engram.ingestSeconds;
    goals.push({
      goal: `engram insert throughput / bare hnswlib-wasm index ${at}`,
      target: '>= 0.8x',
      measured: throughput,
      met: throughput >= 0.8,
    });
    const over = engram.vectorP50 - bare.vectorP50;
    goals.push({
      goal: `engram vector p50 over the bare hnswlib-wasm index ${at}, ms`,
      target: '<= 1',
      measured: over,
      met: over <= 1,
    });
  }
  return goals;
}
