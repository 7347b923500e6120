import { Engram, type EngramOptions } from '../lib/index.js';

let counter = 0;

/** A fresh store with a unique name; the caller closes it. */
export async function openTemp(options: Partial<EngramOptions> = {}): Promise<Engram> {
  counter += 1;
  return Engram.open({ name: `test-${Date.now()}-${counter}-${Math.random().toString(36).slice(2)}`, ...options });
}

/** A manual clock for tests: starts at `start` and moves only when told. */
export function manualClock(start = Date.UTC(2026, 0, 1)): { now: () => number; advance: (ms: number) => void; set: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms), set: (ms) => (t = ms) };
}

/** Seeded PRNG (mulberry32), shared with the benchmarks. */
export { mulberry32 as rng } from '../bench/util/rng.js';
