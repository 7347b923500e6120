/**
 * The 2D projection of memory vectors for the map: PCA (ml-pca) onto the two
 * directions of largest variance, scaled into the unit square. Deterministic
 * (the same store draws the same map) and fast: 5k × 100-d takes milliseconds.
 */
import { PCA } from 'ml-pca';

/** A point in [0, 1]². */
export interface Point2 {
  x: number;
  y: number;
}

function scaleToUnit(values: readonly number[]): number[] {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const span = max - min;
  return values.map((v) => (span > 1e-12 ? (v - min) / span : 0.5));
}

/**
 * Projects vectors to 2D. Fewer than 3 vectors, or vectors with no spread,
 * land in the middle; PCA needs at least two distinct points.
 * @example
 * const points = project2d(vectors) // [{ x: 0.12, y: 0.9 }, …]
 */
export function project2d(vectors: readonly Float32Array[]): Point2[] {
  if (vectors.length < 3) return vectors.map((_, i) => ({ x: vectors.length === 1 ? 0.5 : i, y: 0.5 }));
  const rows = vectors.map((v) => Array.from(v));
  const pca = new PCA(rows, { center: true, scale: false });
  const projected = pca.predict(rows, { nComponents: 2 }).to2DArray();
  const xs = scaleToUnit(projected.map((r) => r[0] ?? 0));
  const ys = scaleToUnit(projected.map((r) => r[1] ?? 0));
  return xs.map((x, i) => ({ x, y: ys[i] ?? 0.5 }));
}
