/**
 * lib/embed: turning text into vectors.
 *
 * Owns the {@link Embedder} seam and its implementations: `TransformersEmbedder`
 * (transformers.js; in a Web Worker in browsers; default model is the offline
 * GloVe lookup built by `scripts/build-offline-model.mjs`), `HashEmbedder` (its
 * exact, dependency-free twin for tests), and `CachedEmbedder` (content-hash LRU
 * around any embedder).
 *
 * Must not import Dexie, hnswlib, lib/store, lib/index, lib/engine or anything
 * above them: embedders know texts and vectors, nothing about where they are
 * kept. Only `transformers-runtime.ts` imports `@huggingface/transformers`
 * (lazily, inside `loadExtractor()`) and only `ort-wasm-paths.ts` references
 * `onnxruntime-web` (lazily, for the browser); everything else here is plain
 * TypeScript, so importing this folder has no side effects.
 */

import { EmbeddingError, ValidationError } from '../errors.js';

/**
 * Options for one {@link Embedder.embed} call.
 * @example
 * const controller = new AbortController();
 * await embedder.embed(texts, { signal: controller.signal });
 */
export interface EmbedOptions {
  /**
   * Cancels the call between batches; it then rejects with `AbortError`.
   * @default undefined
   * @example { signal: AbortSignal.timeout(5_000) }
   */
  signal?: AbortSignal;
}

/**
 * Turns texts into unit-length vectors. The engine records `id` and
 * `dimensions` with every stored vector and refuses to mix embedders.
 * @example
 * const embedder = await TransformersEmbedder.create();
 * const [a, b] = await embedder.embed(['the cat sat', 'a kitten rested']);
 * await embedder.dispose();
 */
export interface Embedder {
  /** Stable id recorded in the store, e.g. 'engram-glove-100d' or 'Xenova/all-MiniLM-L6-v2'. */
  readonly id: string;
  readonly dimensions: number;
  /** One normalised Float32Array per text, same order. */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}

/** How far a vector's length may stray from 1 before it counts as "not normalised". */
const NORM_TOLERANCE = 1e-2;

/**
 * Checks an embedder's output before anything stores it: one `Float32Array`
 * per text, each of length `dimensions`, every component finite, each of unit
 * length (within 1e-2). Throws {@link EmbeddingError} naming the first problem.
 * @example
 * const vectors = await embedder.embed(texts);
 * validateEmbeddings(texts, vectors, embedder.dimensions); // throws EmbeddingError if malformed
 */
export function validateEmbeddings(
  texts: readonly string[],
  vectors: unknown,
  dimensions: number,
): asserts vectors is Float32Array[] {
  if (!Array.isArray(vectors)) {
    throw new EmbeddingError(`expected an array of vectors, got ${typeof vectors}`);
  }
  if (vectors.length !== texts.length) {
    throw new EmbeddingError(`expected ${texts.length} vectors (one per text), got ${vectors.length}`);
  }
  for (let i = 0; i < vectors.length; i++) checkVector(vectors[i], i, dimensions);
}

/** Throws EmbeddingError unless vector `i` is a Float32Array of `dimensions` finite components and unit length. */
function checkVector(v: unknown, i: number, dimensions: number): void {
  if (!(v instanceof Float32Array)) {
    throw new EmbeddingError(`vector ${i} is not a Float32Array`);
  }
  if (v.length !== dimensions) {
    throw new EmbeddingError(`vector ${i} has ${v.length} dimensions, expected ${dimensions}`);
  }
  let sum = 0;
  for (let d = 0; d < v.length; d++) {
    const x = v[d]!;
    if (!Number.isFinite(x)) {
      throw new EmbeddingError(`vector ${i} has a non-finite value (${x}) at ${d}`);
    }
    sum += x * x;
  }
  const norm = Math.sqrt(sum);
  if (Math.abs(norm - 1) > NORM_TOLERANCE) {
    throw new EmbeddingError(`vector ${i} is not normalised (length ${norm.toFixed(4)})`);
  }
}

/**
 * Checks the input of {@link Embedder.embed}: throws `ValidationError` naming
 * the field unless `texts` is an array of strings.
 * @example
 * assertTexts(['a', 'b']); // ok
 * assertTexts(['a', 3]);   // ValidationError: texts[1]: must be a string, got number
 */
export function assertTexts(texts: unknown): asserts texts is readonly string[] {
  if (!Array.isArray(texts)) throw new ValidationError('texts', 'must be an array of strings');
  for (let i = 0; i < texts.length; i++) {
    const t: unknown = texts[i];
    if (typeof t !== 'string') throw new ValidationError(`texts[${i}]`, `must be a string, got ${typeof t}`);
  }
}
