import { ClosedError, ValidationError, throwIfAborted } from '../errors.js';
import { untilAborted } from '../util/abort.js';
import { assertTexts, validateEmbeddings } from './embedder.js';
import type { EmbedOptions, Embedder } from './embedder.js';

/**
 * Options for {@link CachedEmbedder}.
 * @example
 * new CachedEmbedder(inner, { maxEntries: 50_000 })
 */
export interface CachedEmbedderOptions {
  /**
   * How many vectors the LRU keeps; the least recently used are dropped first.
   * @default 10000
   * @example { maxEntries: 1_000 }
   */
  maxEntries?: number;
}

/**
 * Counters of a {@link CachedEmbedder}.
 * @example
 * const { hits, misses, size } = cached.stats;
 */
export interface CacheStats {
  /** Texts answered from the cache (including duplicates within one call and waits on an in-flight embedding). */
  readonly hits: number;
  /** Texts the inner embedder was asked to embed. */
  readonly misses: number;
  /** Vectors held now. */
  readonly size: number;
}

const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * Wraps any {@link Embedder} with a bounded LRU keyed by each text: a short
 * one (up to 256 characters) by itself, a longer one by its SHA-256
 * (`crypto.subtle`; where that is unavailable, e.g. an insecure origin, by
 * itself too). A text is never sent to the inner embedder
 * twice while its vector is cached: duplicates within one call, and texts that
 * another call is embedding right now, are embedded once. Same `id` and
 * `dimensions` as the inner embedder, so cached and uncached vectors are
 * interchangeable. Callers get their own copy of every vector.
 * `dispose()` disposes the inner embedder too.
 * @example
 * const embedder = new CachedEmbedder(await TransformersEmbedder.create(), { maxEntries: 5_000 });
 * await embedder.embed(['hello', 'hello']); // the model sees 'hello' once
 * await embedder.embed(['hello']);          // answered from the cache
 */
export class CachedEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly #inner: Embedder;
  readonly #maxEntries: number;
  /** key -> vector; Map iteration order is insertion order, so the first key is the least recently used. */
  readonly #cache = new Map<string, Float32Array>();
  /** key -> vector being embedded by some call right now. */
  readonly #inFlight = new Map<string, Promise<Float32Array>>();
  #hits = 0;
  #misses = 0;
  #closed = false;

  constructor(inner: Embedder, options: CachedEmbedderOptions = {}) {
    const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new ValidationError('maxEntries', `must be a positive integer, got ${String(maxEntries)}`);
    }
    this.#inner = inner;
    this.#maxEntries = maxEntries;
    this.id = inner.id;
    this.dimensions = inner.dimensions;
  }

  /**
   * Hit/miss counters and current size.
   * @example
   * expect(cached.stats.misses).toBe(1)
   */
  get stats(): CacheStats {
    return { hits: this.#hits, misses: this.#misses, size: this.#cache.size };
  }

  /**
   * One normalised vector per text; only texts not cached (and not already being embedded) reach the inner embedder, in one call.
   * @example
   * const vectors = await cached.embed(['a', 'b', 'a'], { signal });
   */
  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.#closed) throw new ClosedError('CachedEmbedder');
    const { signal } = options;
    throwIfAborted(signal);
    assertTexts(texts);
    const keys = await Promise.all(texts.map((t) => cacheKey(t)));
    throwIfAborted(signal);
    const textOf = new Map<string, string>();
    keys.forEach((key, i) => textOf.set(key, texts[i]!));

    const found = new Map<string, Float32Array>();
    // Keys still to resolve; a key whose in-flight embedding fails (another caller aborted) comes back for another round.
    let pending = uniqueKeys(keys);
    let embeddedHere = 0;
    while (pending.length > 0) {
      const { waits, missing } = this.#sortPending(pending, found);
      const own = missing.length > 0 ? this.#embedMissing(missing, textOf, signal) : Promise.resolve(undefined);
      const retry: string[] = [];
      const waited = Promise.all(waits.map(([key, flight]) => collectFlight(key, flight, { found, retry }, signal)));
      const [embedded] = await Promise.all([own, waited]);
      if (embedded !== undefined) {
        for (const [key, v] of embedded) found.set(key, v);
        embeddedHere += missing.length;
      }
      pending = retry;
    }

    this.#hits += texts.length - embeddedHere;
    return keys.map((key) => found.get(key)!.slice());
  }

  /**
   * Disposes the inner embedder and drops the cache. Later `embed()` calls reject with `ClosedError`. Idempotent.
   * @example
   * await cached.dispose();
   */
  async dispose(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#cache.clear();
    await this.#inner.dispose();
  }

  /** Sorts `pending` keys: a cached vector goes into `found`; the others wait on another call's embedding, or are missing. */
  #sortPending(
    pending: readonly string[],
    found: Map<string, Float32Array>,
  ): { waits: [string, Promise<Float32Array>][]; missing: string[] } {
    const waits: [string, Promise<Float32Array>][] = [];
    const missing: string[] = [];
    for (const key of pending) {
      const hit = this.#get(key);
      if (hit !== undefined) found.set(key, hit);
      else {
        const flight = this.#inFlight.get(key);
        if (flight !== undefined) waits.push([key, flight]);
        else missing.push(key);
      }
    }
    return { waits, missing };
  }

  /** Embeds the texts behind `missing` keys in one inner call, registering each as in flight meanwhile. */
  async #embedMissing(
    missing: readonly string[],
    textOf: ReadonlyMap<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<Map<string, Float32Array>> {
    const missingTexts = missing.map((key) => textOf.get(key)!);
    const call = this.#inner.embed(missingTexts, signal === undefined ? {} : { signal }).then((vectors) => {
      validateEmbeddings(missingTexts, vectors, this.dimensions);
      return vectors;
    });
    const flights = this.#registerFlights(missing, call);
    try {
      const vectors = await call;
      this.#misses += missing.length;
      const out = new Map<string, Float32Array>();
      missing.forEach((key, i) => {
        const v = vectors[i]!;
        this.#set(key, v);
        out.set(key, v);
      });
      return out;
    } finally {
      missing.forEach((key, i) => {
        if (this.#inFlight.get(key) === flights[i]) this.#inFlight.delete(key);
      });
    }
  }

  /** Registers each `missing` key as in flight: its own vector of `call`'s answer; returns those promises in order. */
  #registerFlights(missing: readonly string[], call: Promise<Float32Array[]>): Promise<Float32Array>[] {
    return missing.map((key, i) => {
      const flight = call.then((vectors) => vectors[i]!);
      // Waiters attach their own handlers; this one only keeps an unwatched failure from being reported as unhandled.
      flight.catch(() => undefined);
      this.#inFlight.set(key, flight);
      return flight;
    });
  }

  #get(key: string): Float32Array | undefined {
    const v = this.#cache.get(key);
    if (v !== undefined) {
      this.#cache.delete(key);
      this.#cache.set(key, v);
    }
    return v;
  }

  #set(key: string, v: Float32Array): void {
    if (this.#closed) return;
    this.#cache.delete(key);
    this.#cache.set(key, v);
    while (this.#cache.size > this.#maxEntries) {
      const oldest = this.#cache.keys().next();
      if (oldest.done === true) break;
      this.#cache.delete(oldest.value);
    }
  }
}

/** Waits for another call's embedding of `key`: its vector goes into `found`, or the key into `retry` when that call failed. */
async function collectFlight(
  key: string,
  flight: Promise<Float32Array>,
  into: { found: Map<string, Float32Array>; retry: string[] },
  signal: AbortSignal | undefined,
): Promise<void> {
  const v = await untilAborted(
    flight.catch(() => undefined),
    signal,
  );
  if (v === undefined) into.retry.push(key);
  else into.found.set(key, v);
}

function uniqueKeys(keys: readonly string[]): string[] {
  return [...new Set(keys)];
}

const encoder = new TextEncoder();

/**
 * Texts up to this many UTF-16 units are their own key: at most 512 bytes beside a vector of
 * 1.5 KB (384-d), and no digest, which is an asynchronous round trip to Web Crypto's thread in
 * every query's embedding (a visible share of a vector search at 10k: bench/peers; the number:
 * bench/results/REPORT.md, "Measurements cited by the code").
 */
const KEY_TEXT_CHARS = 256;

/** The text itself when short (or where Web Crypto is unavailable), else SHA-256 of its UTF-8 as hex. */
async function cacheKey(text: string): Promise<string> {
  const subtle = (globalThis.crypto as Crypto | undefined)?.subtle;
  if (subtle === undefined || text.length <= KEY_TEXT_CHARS) return `t:${text}`;
  const digest = new Uint8Array(await subtle.digest('SHA-256', encoder.encode(text)));
  let hex = 'h:';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}
