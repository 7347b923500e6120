/**
 * Seeded random numbers for benchmarks and tests. Every generator here is
 * deterministic for a given seed, so two runs see exactly the same data.
 */

/** A function returning uniformly distributed numbers in [0, 1). */
export type Rng = () => number;

/**
 * mulberry32: a tiny, fast 32-bit seeded PRNG (good enough for synthetic data, not for crypto).
 * @example
 * const rng = mulberry32(42);
 * const x = rng(); // same value on every run
 */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Standard normal samples (mean 0, variance 1) drawn from `rng` with the Box–Muller transform.
 * @example
 * const normal = gaussian(mulberry32(1));
 * const z = normal();
 */
export function gaussian(rng: Rng): Rng {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    let u = rng();
    while (u <= Number.EPSILON) u = rng();
    const v = rng();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/**
 * A uniformly random integer in [0, n).
 * @example
 * const rng = mulberry32(7);
 * const i = randomInt(rng, 10); // 0..9
 */
export function randomInt(rng: Rng, n: number): number {
  return Math.floor(rng() * n);
}

/**
 * Picks one element of a non-empty array.
 * @example
 * const colour = pick(mulberry32(3), ['red', 'green']);
 */
export function pick<T>(rng: Rng, items: readonly T[]): T {
  const item = items[randomInt(rng, items.length)];
  if (item === undefined) throw new RangeError('pick() needs a non-empty array');
  return item;
}
