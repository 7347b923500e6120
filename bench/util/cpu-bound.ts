/**
 * What add() could reach if the machine's cores were its only limit: its
 * stages (embedder, IndexedDB write, index insert) each measured alone with
 * the cores the machine kept busy meanwhile, every process counted (the
 * browser's IndexedDB backend works outside the page). Together they need at
 * least the sum of their CPU time spread over every core; when that exceeds
 * the slowest stage's own time, add() cannot keep up with the slowest stage
 * however well the stages overlap.
 */

import type { StageCores } from '../pages/results.js';

/** One batch size of bench/ingest, as far as this needs it. */
export interface StagesWithCpu {
  texts: number;
  rawPerSecond: number;
  writePerSecond?: number | undefined;
  indexPerSecond?: number | undefined;
  cpu?: StageCores | undefined;
}

/** The CPU bound of add(): its least wall time in seconds, as texts/s, and as a ceiling of add() / slowest stage (≤ 1). */
export interface CpuBound {
  seconds: number;
  perSecond: number;
  ceiling: number;
}

/**
 * The CPU bound of add() for `r`, or undefined without CPU figures.
 * @example
 * cpuBound({ texts: 3000, rawPerSecond: 3000, writePerSecond: 1000, indexPerSecond: 10000, cpu: { cores: 2, embedder: 1.1, write: 1.7, index: 1, add: 1.6 } })
 * // { seconds: 3.25, perSecond: 923, ceiling: 0.92 } (rounded)
 */
export function cpuBound(r: StagesWithCpu): CpuBound | undefined {
  const { cpu, writePerSecond, indexPerSecond } = r;
  if (cpu === undefined || writePerSecond === undefined || indexPerSecond === undefined || cpu.cores <= 0)
    return undefined;
  const stages = [
    { seconds: r.texts / r.rawPerSecond, cores: cpu.embedder },
    { seconds: r.texts / writePerSecond, cores: cpu.write },
    { seconds: r.texts / indexPerSecond, cores: cpu.index },
  ];
  const coreSeconds = stages.reduce((sum, s) => sum + s.seconds * s.cores, 0);
  const slowest = Math.max(...stages.map((s) => s.seconds));
  const seconds = Math.max(slowest, coreSeconds / cpu.cores);
  return { seconds, perSecond: r.texts / seconds, ceiling: slowest / seconds };
}
