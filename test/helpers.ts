import { Engram, type EngramOptions } from '../lib/index.js';

let counter = 0;

/** A fresh store with a unique name; the caller closes it. */
export async function openTemp(options: Partial<EngramOptions> = {}): Promise<Engram> {
  counter += 1;
  return Engram.open({ name: `test-${Date.now()}-${counter}-${Math.random().toString(36).slice(2)}`, ...options });
}

/** A manual clock for tests: starts at `start` and moves only when told. */
export function manualClock(start = Date.UTC(2026, 0, 1)): {
  now: () => number;
  advance: (ms: number) => void;
  set: (ms: number) => void;
} {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms), set: (ms) => (t = ms) };
}

/** Seeded PRNG (mulberry32), shared with the benchmarks. */
export { mulberry32 as rng } from '../bench/util/rng.js';

/**
 * Polls `condition` every `everyMs` until it holds or `withinMs` have passed (a bounded loop
 * measured in time, not iterations, so that a loaded machine gets the same patience as a quiet
 * one); resolves to the condition's last value, which the caller asserts.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  withinMs = 20_000,
  everyMs = 20,
): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
