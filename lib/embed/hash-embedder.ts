import { ClosedError, ValidationError, throwIfAborted } from '../errors.js';
import { assertTexts } from './embedder.js';
import type { EmbedOptions, Embedder } from './embedder.js';

/**
 * Options for {@link HashEmbedder}.
 * @example
 * new HashEmbedder({ dimensions: 64 })
 */
export interface HashEmbedderOptions {
  /**
   * Length of every vector.
   * @default 256
   * @example { dimensions: 64 }
   */
  dimensions?: number;
}

const DEFAULT_DIMENSIONS = 256;
const WORD = /[\p{L}\p{N}]+/gu;

/** 32-bit FNV-1a over the UTF-16 code units of `text`, then a murmur3 finaliser for better low bits. */
function hash32(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A deterministic, dependency-free {@link Embedder}: feature hashing of the
 * lowercased word tokens (letters and digits) into `dimensions` buckets with a
 * hashed sign, then L2-normalised. Texts that share words get similar
 * vectors; it knows nothing about synonyms. Fast, the same on every platform
 * and run, so tests and benchmarks use it wherever the model itself is not
 * under test. A text without any word maps to one fixed unit vector.
 * @example
 * const embedder = new HashEmbedder({ dimensions: 64 });
 * embedder.id; // 'hash-64'
 * const [v] = await embedder.embed(['Remember the milk']);
 */
export class HashEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  #closed = false;

  constructor(options: HashEmbedderOptions = {}) {
    const dimensions = options.dimensions ?? DEFAULT_DIMENSIONS;
    if (!Number.isInteger(dimensions) || dimensions < 1) {
      throw new ValidationError('dimensions', `must be a positive integer, got ${String(dimensions)}`);
    }
    this.dimensions = dimensions;
    this.id = `hash-${dimensions}`;
  }

  /**
   * One normalised vector per text, computed synchronously from the text alone.
   * @example
   * const [a, b] = await new HashEmbedder().embed(['red apple', 'apple red']); // identical vectors
   */
  embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    // Throwing inside the executor rejects the promise, so every failure arrives asynchronously.
    return new Promise((resolve) => {
      if (this.#closed) throw new ClosedError('HashEmbedder');
      throwIfAborted(options.signal);
      assertTexts(texts);
      resolve(texts.map((t) => this.#embedOne(t)));
    });
  }

  /**
   * Marks the embedder closed; later `embed()` calls reject with `ClosedError`. Idempotent.
   * @example
   * await embedder.dispose();
   */
  dispose(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  #embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [''];
    for (const w of words) {
      const h = hash32(w, 0);
      const sign = hash32(w, 0x9e3779b9) & 1 ? 1 : -1;
      const i = h % this.dimensions;
      v[i] = v[i]! + sign;
    }
    let sum = 0;
    for (const x of v) sum += x * x;
    if (sum === 0) {
      // Every word cancelled out (e.g. "a b" landing in one bucket with opposite signs): fall back to the empty-text vector.
      v[hash32('', 0) % this.dimensions] = 1;
      return v;
    }
    const scale = 1 / Math.sqrt(sum);
    for (let i = 0; i < v.length; i++) v[i] = v[i]! * scale;
    return v;
  }
}
