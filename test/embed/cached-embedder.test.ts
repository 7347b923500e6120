import { describe, expect, it } from 'vitest';
import { AbortError, ClosedError, EmbeddingError, ValidationError } from '../../lib/errors.js';
import { CachedEmbedder } from '../../lib/embed/cached-embedder.js';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { validateEmbeddings } from '../../lib/embed/embedder.js';
import type { EmbedOptions, Embedder } from '../../lib/embed/embedder.js';

/** A real embedder (HashEmbedder) that records every text it is asked to embed, optionally held until released. */
class RecordingEmbedder implements Embedder {
  readonly inner = new HashEmbedder({ dimensions: 16 });
  readonly id = this.inner.id;
  readonly dimensions = this.inner.dimensions;
  readonly calls: string[][] = [];
  disposed = false;
  gate: Promise<void> | undefined;

  async embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]> {
    this.calls.push([...texts]);
    if (this.gate !== undefined) await this.gate;
    if (options?.signal?.aborted === true) throw new AbortError();
    return this.inner.embed(texts);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.inner.dispose();
  }

  get embeddedTexts(): string[] {
    return this.calls.flat();
  }
}

/** An embedder that returns the wrong number of vectors. */
class BrokenEmbedder implements Embedder {
  readonly id = 'broken';
  readonly dimensions = 4;
  embed(): Promise<Float32Array[]> {
    return Promise.resolve([]);
  }
  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

function deferred(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

describe('CachedEmbedder', () => {
  it('constructor() keeps the inner id and dimensions', () => {
    const cached = new CachedEmbedder(new HashEmbedder({ dimensions: 32 }));
    expect(cached.id).toBe('hash-32');
    expect(cached.dimensions).toBe(32);
  });

  it('constructor() rejects a non-positive maxEntries with ValidationError', () => {
    expect(() => new CachedEmbedder(new HashEmbedder(), { maxEntries: 0 })).toThrow(ValidationError);
  });

  it('embed() returns the same vectors as the inner embedder, in order', async () => {
    const texts = ['alpha beta', 'gamma', 'delta epsilon zeta', 'alpha beta'];
    const cached = new CachedEmbedder(new HashEmbedder({ dimensions: 16 }));
    const expected = await new HashEmbedder({ dimensions: 16 }).embed(texts);
    const got = await cached.embed(texts);
    expect(got).toEqual(expected);
    validateEmbeddings(texts, got, 16);
  });

  it('embed() never embeds the same text twice', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner);
    await cached.embed(['one', 'two']);
    await cached.embed(['two', 'three', 'one']);
    await cached.embed(['three']);
    expect(inner.embeddedTexts.sort()).toEqual(['one', 'three', 'two']);
    expect(inner.calls).toEqual([['one', 'two'], ['three']]);
    expect(cached.stats).toEqual({ hits: 3, misses: 3, size: 3 });
  });

  it('embed() keys a short text by itself and a long one by its digest: each is embedded once, and texts that differ past the short length stay apart', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner);
    const long = 'harbour '.repeat(40);
    const texts = ['x'.repeat(256), 'x'.repeat(257), long, `${long}!`];
    const first = await cached.embed(texts);
    const again = await cached.embed(texts);
    expect(again).toEqual(first);
    expect(inner.embeddedTexts).toEqual(texts);
    expect(cached.stats).toMatchObject({ misses: 4, size: 4 });
  });

  it('embed() embeds duplicates within one call once', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner);
    const vectors = await cached.embed(['same', 'other', 'same', 'same']);
    expect(inner.calls).toEqual([['same', 'other']]);
    expect(vectors[0]).toEqual(vectors[2]);
    expect(vectors[0]).toEqual(vectors[3]);
    // Each position gets its own copy: changing one does not touch the others or the cache.
    vectors[0]![0] = 42;
    expect(vectors[2]![0]).not.toBe(42);
    const [again] = await cached.embed(['same']);
    expect(again![0]).not.toBe(42);
  });

  it('embed() shares an in-flight embedding with a concurrent call for the same text', async () => {
    const inner = new RecordingEmbedder();
    const gate = deferred();
    inner.gate = gate.promise;
    const cached = new CachedEmbedder(inner);
    const first = cached.embed(['shared', 'only-first']);
    const second = cached.embed(['shared', 'only-second']);
    gate.release();
    const [a, b] = await Promise.all([first, second]);
    expect(a[0]).toEqual(b[0]);
    expect(inner.embeddedTexts.filter((t) => t === 'shared')).toHaveLength(1);
    expect(inner.embeddedTexts.sort()).toEqual(['only-first', 'only-second', 'shared']);
  });

  it('embed() re-embeds a shared text itself when the call embedding it is aborted', async () => {
    const inner = new RecordingEmbedder();
    const gate = deferred();
    inner.gate = gate.promise;
    const cached = new CachedEmbedder(inner);
    const controller = new AbortController();
    const first = cached.embed(['shared'], { signal: controller.signal });
    const second = cached.embed(['shared']);
    controller.abort();
    gate.release();
    await expect(first).rejects.toThrow(AbortError);
    const [v] = await second;
    expect(v).toEqual((await new HashEmbedder({ dimensions: 16 }).embed(['shared']))[0]);
  });

  it('embed() evicts the least recently used entry beyond maxEntries', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner, { maxEntries: 2 });
    await cached.embed(['a']);
    await cached.embed(['b']);
    await cached.embed(['a']); // a is now the most recently used
    await cached.embed(['c']); // evicts b
    expect(cached.stats.size).toBe(2);
    inner.calls.length = 0;
    await cached.embed(['a', 'c']);
    expect(inner.calls).toEqual([]);
    await cached.embed(['b']);
    expect(inner.calls).toEqual([['b']]);
  });

  it('embed() rejects with AbortError when the signal has fired, without calling the inner embedder', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner);
    await expect(cached.embed(['x'], { signal: AbortSignal.abort() })).rejects.toThrow(AbortError);
    expect(inner.calls).toEqual([]);
  });

  it('embed() rejects malformed inner output with EmbeddingError and caches nothing', async () => {
    const cached = new CachedEmbedder(new BrokenEmbedder());
    await expect(cached.embed(['x'])).rejects.toThrow(EmbeddingError);
    expect(cached.stats.size).toBe(0);
  });

  it('dispose() disposes the inner embedder; later embed() calls reject with ClosedError', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner);
    await cached.embed(['x']);
    await cached.dispose();
    await cached.dispose();
    expect(inner.disposed).toBe(true);
    expect(cached.stats.size).toBe(0);
    await expect(cached.embed(['x'])).rejects.toThrow(ClosedError);
  });
});
