/**
 * Synthetic embedding-like vectors: points scattered around random cluster
 * centres, which is closer to real sentence embeddings than uniform noise
 * (uniform high-dimensional noise has no near neighbours worth finding).
 */
import { gaussian, mulberry32 } from './rng.js';

/** Options of {@link clusteredVectors}. */
export interface ClusteredOptions {
  /** How many vectors to generate. */
  count: number;
  /** Length of each vector. @example 384 */
  dimensions: number;
  /** Number of cluster centres. @default Math.max(8, Math.round(Math.sqrt(count))) */
  clusters?: number;
  /**
   * Noise around a centre, relative to the centre's length (both have the same
   * expected norm when spread = 1). Lower means tighter clusters. @default 0.6
   */
  spread?: number;
  /** Seed of the random generator. @default 1 */
  seed?: number;
  /**
   * Seed of the cluster centres alone, so that queries (another `seed`) can be drawn
   * around the same centres as the data. @default 1
   */
  centreSeed?: number;
}

/**
 * Deterministic clustered vectors (not normalised). Data and queries share
 * `centreSeed` and differ in `seed`, so queries land near the data without being copies of it.
 * @example
 * const data = clusteredVectors({ count: 10_000, dimensions: 384, seed: 1 });
 * const queries = clusteredVectors({ count: 100, dimensions: 384, clusters: 100, seed: 2 });
 */
export function clusteredVectors(options: ClusteredOptions): Float32Array[] {
  const { count, dimensions } = options;
  const clusters = options.clusters ?? Math.max(8, Math.round(Math.sqrt(count)));
  const spread = options.spread ?? 0.6;
  const centreNormal = gaussian(mulberry32(options.centreSeed ?? 1));
  const centres: Float32Array[] = [];
  for (let c = 0; c < clusters; c++) {
    const centre = new Float32Array(dimensions);
    for (let i = 0; i < dimensions; i++) centre[i] = centreNormal();
    centres.push(centre);
  }
  const rng = mulberry32(options.seed ?? 1);
  const normal = gaussian(rng);
  const out: Float32Array[] = [];
  for (let n = 0; n < count; n++) {
    const centre = centres[Math.floor(rng() * clusters)]!;
    const v = new Float32Array(dimensions);
    for (let i = 0; i < dimensions; i++) v[i] = centre[i]! + spread * normal();
    out.push(v);
  }
  return out;
}
