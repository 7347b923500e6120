/**
 * Picking an index for a collection size, promoting an ExactIndex to HNSW when
 * it grows, and restoring whichever kind a snapshot holds.
 */
import { ExactIndex } from './exact-index.js';
import { HnswIndex, type HnswIndexOptions } from './hnsw-index.js';
import { assertIntegerIn } from './vector-checks.js';
import { snapshotKind, type DecodeOptions } from './snapshot-format.js';
import type { VectorIndex } from './vector-index.js';

/**
 * Collection size from which HnswIndex is used instead of ExactIndex.
 *
 * Below it an exact query costs about a millisecond even at 384-d, and
 * ExactIndex needs no WASM load and inserts far faster than hnswlib; from
 * it on HNSW wins clearly. Measured by `npx tsx bench/vector.ts --crossover`;
 * the table is in bench/results/REPORT.md (vector-crossover).
 */
export const EXACT_CROSSOVER = 1000;

/**
 * Options of {@link createIndex}.
 * @example
 * await createIndex({ dimensions: 100, expectedSize: 50_000, hnsw: { efSearch: 96 } });
 */
export interface CreateIndexOptions {
  /**
   * Vector length.
   * @example { dimensions: 100 }
   */
  dimensions: number;
  /**
   * How many vectors the index is expected to hold; decides the kind.
   * @example { expectedSize: 25_000 }
   */
  expectedSize: number;
  /**
   * HNSW parameters, used when an HnswIndex is chosen.
   * @default HnswIndex's defaults
   * @example { hnsw: { efSearch: 128 } }
   */
  hnsw?: Omit<HnswIndexOptions, 'dimensions'>;
  /**
   * Size from which HNSW is chosen.
   * @default EXACT_CROSSOVER
   * @example { crossover: 5000 }
   */
  crossover?: number;
}

/**
 * An ExactIndex below the crossover size, an HnswIndex (with room for
 * `expectedSize`) from it on.
 * @example
 * const index = await createIndex({ dimensions: 100, expectedSize: await store.countVectors() });
 */
export async function createIndex(options: CreateIndexOptions): Promise<VectorIndex> {
  const crossover = options.crossover ?? EXACT_CROSSOVER;
  assertIntegerIn(options.expectedSize, 'expectedSize', 0, 2 ** 31);
  assertIntegerIn(crossover, 'crossover', 0, 2 ** 31);
  if (options.expectedSize < crossover) return ExactIndex.create({ dimensions: options.dimensions });
  const capacity = Math.max(options.hnsw?.capacity ?? 1024, nextPowerOfTwo(options.expectedSize));
  return HnswIndex.create({ ...options.hnsw, dimensions: options.dimensions, capacity });
}

/**
 * Options of {@link promote}.
 * @example
 * await promote(index, { crossover: 2000, hnsw: { m: 24 } });
 */
export interface PromoteOptions {
  /**
   * Size from which an ExactIndex is rebuilt as HNSW.
   * @default EXACT_CROSSOVER
   * @example { crossover: 2000 }
   */
  crossover?: number;
  /**
   * HNSW parameters of the new index.
   * @default HnswIndex's defaults
   * @example { hnsw: { m: 32 } }
   */
  hnsw?: Omit<HnswIndexOptions, 'dimensions'>;
}

/**
 * Rebuilds an ExactIndex that has reached the crossover size as an HnswIndex
 * holding the same ids and vectors; returns `index` itself otherwise. The old
 * index is left intact: the caller swaps references and disposes it. Do not
 * write to it while the promise is pending (those writes would be missing).
 * @example
 * const next = await promote(index);
 * if (next !== index) { index.dispose(); index = next; }
 */
export async function promote(index: VectorIndex, options: PromoteOptions = {}): Promise<VectorIndex> {
  const crossover = options.crossover ?? EXACT_CROSSOVER;
  assertIntegerIn(crossover, 'crossover', 0, 2 ** 31);
  if (!(index instanceof ExactIndex) || index.size < crossover) return index;
  const capacity = Math.max(options.hnsw?.capacity ?? 1024, nextPowerOfTwo(index.size * 2));
  const hnsw = await HnswIndex.create({ ...options.hnsw, dimensions: index.dimensions, capacity });
  hnsw.addMany([...index.entries()]);
  return hnsw;
}

/**
 * Starts loading the hnswlib module (compiling its WASM) in the
 * background, so a restore or promotion that follows finds it ready. A failure
 * is left for that use to report.
 * @example
 * if (storedVectors >= EXACT_CROSSOVER) preloadHnsw();
 */
export function preloadHnsw(): void {
  HnswIndex.preload();
}

/**
 * Restores a snapshot of either kind (the kind is read from its header).
 * `options` apply to an HNSW snapshot (an exact one is small and always checked).
 * Throws IndexError when the bytes are corrupt or truncated.
 * @example
 * const index = await restoreIndex(bytesFromStore);
 */
export async function restoreIndex(bytes: Uint8Array, options: DecodeOptions = {}): Promise<VectorIndex> {
  return snapshotKind(bytes) === 'hnsw' ? HnswIndex.restore(bytes, options) : ExactIndex.restore(bytes);
}

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}
