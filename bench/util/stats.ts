/**
 * Small statistics for benchmarks.
 */

/**
 * The p-th percentile (0–100) of `values`, by linear interpolation between closest ranks.
 * @example
 * percentile([5, 1, 3], 50) // 3
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}
