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

/** Seeded PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
