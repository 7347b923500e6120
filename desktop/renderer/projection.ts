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

function extent(values: readonly number[]): { min: number; span: number } {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { min, span: max - min };
}

/**
 * Projects vectors to 2D. Both axes share one scale (distances on the map keep
 * their proportions) and the picture is centred in the unit square. Fewer than
 * 3 vectors are placed without PCA; vectors with no spread land in the middle.
 * @example
 * const points = project2d(vectors) // [{ x: 0.12, y: 0.9 }, …]
 */
export function project2d(vectors: readonly Float32Array[]): Point2[] {
  if (vectors.length < 3) return vectors.map((_, i) => ({ x: vectors.length === 1 ? 0.5 : i, y: 0.5 }));
  const rows = vectors.map((v) => Array.from(v));
  const pca = new PCA(rows, { center: true, scale: false });
  const projected = pca.predict(rows, { nComponents: 2 }).to2DArray();
  const xs = projected.map((r) => r[0] ?? 0);
  const ys = projected.map((r) => r[1] ?? 0);
  const ex = extent(xs);
  const ey = extent(ys);
  const span = Math.max(ex.span, ey.span);
  if (!(span > 1e-12)) return xs.map(() => ({ x: 0.5, y: 0.5 }));
  const padX = (1 - ex.span / span) / 2;
  const padY = (1 - ey.span / span) / 2;
  return xs.map((x, i) => ({ x: padX + (x - ex.min) / span, y: padY + ((ys[i] ?? 0) - ey.min) / span }));
}
