/**
 * Small statistics and timing helpers for benchmarks.
 */

/**
 * The p-th percentile (0–100) of `values`, by linear interpolation between
 * closest ranks. Returns NaN for an empty list. Does not modify `values`.
 * @example
 * percentile([1, 2, 3, 4], 50); // 2.5
 * percentile(latencies, 95);
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

/**
 * Arithmetic mean; NaN for an empty list.
 * @example
 * mean([1, 2, 3]); // 2
 */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/**
 * Runs `fn` once and returns its result with the elapsed wall time in milliseconds.
 * @example
 * const { result: index, ms } = timed(() => buildIndex(data));
 */
export function timed<T>(fn: () => T): { result: T; ms: number } {
  const start = performance.now();
  const result = fn();
  return { result, ms: performance.now() - start };
}

/**
 * Async twin of {@link timed}.
 * @example
 * const { result, ms } = await timedAsync(() => HnswIndex.restore(bytes));
 */
export async function timedAsync<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = performance.now();
  const result = await fn();
  return { result, ms: performance.now() - start };
}

/**
 * Times `fn` on every input and returns the per-call latencies in milliseconds.
 * @example
 * const latencies = latenciesOf(queries, (q) => index.search(q, 10));
 * console.log(percentile(latencies, 50));
 */
export function latenciesOf<T>(inputs: readonly T[], fn: (input: T, i: number) => unknown): number[] {
  const out: number[] = [];
  inputs.forEach((input, i) => {
    const start = performance.now();
    fn(input, i);
    out.push(performance.now() - start);
  });
  return out;
}

/**
 * recall@k of `found` against `truth`: the share of the true top-k ids that were
 * found, averaged over queries (each list is one query's ids, best first).
 * @example
 * recallAtK([['a', 'b']], [['a', 'c']], 2); // 0.5
 */
export function recallAtK(
  truth: readonly (readonly string[])[],
  found: readonly (readonly string[])[],
  k: number,
): number {
  let hits = 0;
  let total = 0;
  truth.forEach((expected, q) => {
    const want = new Set(expected.slice(0, k));
    total += want.size;
    for (const id of (found[q] ?? []).slice(0, k)) if (want.has(id)) hits += 1;
  });
  return total === 0 ? 1 : hits / total;
}
