// Node: the offline model (built by `node scripts/ensure-model.mjs`) loaded by
// the real transformers.js code on onnxruntime-node, in-thread.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, ClosedError, ModelLoadError, ValidationError } from '../../lib/errors.js';
import { TransformersEmbedder } from '../../lib/embed/transformers-embedder.js';
import type { ModelLoadProgress } from '../../lib/embed/transformers-embedder.js';
import { PARAPHRASES, cosine } from './paraphrases.js';
import { referenceEmbed } from './glove-reference.js';

/** Reads a file of the repository (Node's fs by a computed name: the test tsconfig carries no Node types). */
async function readRepoFile(path: string): Promise<Uint8Array> {
  const fsName = 'node:fs/promises';
  const fs = (await import(/* @vite-ignore */ fsName)) as { readFile(p: URL): Promise<Uint8Array> };
  return fs.readFile(new URL(`../../${path}`, import.meta.url));
}

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

function norm(v: Float32Array): number {
  return Math.sqrt(cosine(v, v));
}

describe('TransformersEmbedder (node, offline model)', () => {
  let embedder: TransformersEmbedder;
  const progress: ModelLoadProgress[] = [];

  beforeAll(async () => {
    embedder = await TransformersEmbedder.create({ onProgress: (p) => progress.push(p) });
  });

  afterAll(async () => {
    await embedder.dispose();
  });

  it('create() loads the offline model in-thread with 100 dimensions', () => {
    expect(embedder.id).toBe('engram-glove-100d');
    expect(embedder.dimensions).toBe(100);
    expect(embedder.inWorker).toBe(false);
    expect(embedder.batchSize).toBe(32);
    expect(progress.some((p) => p.status === 'ready')).toBe(true);
  });

  it('embed() returns one normalised vector per text', async () => {
    const texts = ['Remember to buy milk.', 'The meeting is at noon.', 'Paris is the capital of France.'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(100);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(cosine(vectors[0]!, vectors[1]!)).toBeLessThan(0.99);
  });

  it('embed() matches a direct lookup in the model table within 1e-5', async () => {
    const texts = [...PARAPHRASES.flat(), '', 'Unknown zzqxv words, mostly!', 'Numbers like 1990 and 42 count too.'];
    const tokenizer: unknown = JSON.parse(
      new TextDecoder().decode(await readRepoFile('models/engram-glove-100d/tokenizer.json')),
    );
    const onnx = await readRepoFile('models/engram-glove-100d/onnx/model.onnx');
    const expected = referenceEmbed(tokenizer, onnx, texts);
    const got = await embedder.embed(texts);
    for (let i = 0; i < texts.length; i++) {
      for (let d = 0; d < 100; d++) expect(Math.abs(got[i]![d]! - expected[i]![d]!), texts[i]).toBeLessThan(1e-5);
    }
  });

  it('embed() scores paraphrases clearly above unrelated sentences', async () => {
    const a = await embedder.embed(PARAPHRASES.map((p) => p[0]));
    const b = await embedder.embed(PARAPHRASES.map((p) => p[1]));
    const paraphrase: number[] = [];
    const unrelated: number[] = [];
    for (let i = 0; i < a.length; i++) {
      const own = cosine(a[i]!, b[i]!);
      const others = b.flatMap((v, j) => (j === i ? [] : [cosine(a[i]!, v)]));
      // Each pair on its own: its paraphrase well above the average unrelated sentence.
      expect(own, PARAPHRASES[i]![0]).toBeGreaterThan(mean(others) + 0.25);
      paraphrase.push(own);
      unrelated.push(...others);
    }
    expect(mean(paraphrase)).toBeGreaterThan(0.6);
    expect(mean(unrelated)).toBeLessThan(0.3);
    expect(mean(paraphrase) - mean(unrelated)).toBeGreaterThan(0.4);
  });

  it('embed() gives the same vectors in one batch as one text at a time', async () => {
    const texts = PARAPHRASES.flat();
    const batched = await embedder.embed(texts);
    for (let i = 0; i < texts.length; i++) {
      const [single] = await embedder.embed([texts[i]!]);
      for (let d = 0; d < 100; d++) expect(single![d]).toBeCloseTo(batched[i]![d]!, 5);
    }
  });

  it('embed() splits long inputs into batches without changing the result', async () => {
    const small = await TransformersEmbedder.create({ batchSize: 3 });
    try {
      expect(small.batchSize).toBe(3);
      const texts = PARAPHRASES.flat();
      const a = await small.embed(texts);
      const b = await embedder.embed(texts);
      expect(a).toHaveLength(texts.length);
      for (let i = 0; i < texts.length; i++) expect(cosine(a[i]!, b[i]!)).toBeCloseTo(1, 5);
    } finally {
      await small.dispose();
    }
  });

  it('embed() ignores case and punctuation, and gives texts without known words a valid vector', async () => {
    const [plain, shouted, empty, unknown, spaces] = await embedder.embed([
      'the cat sat on the mat',
      'THE CAT SAT ON THE MAT!!!',
      '',
      'qwzxv blorptang',
      '   ',
    ]);
    expect(cosine(plain!, shouted!)).toBeCloseTo(1, 5);
    for (const v of [empty!, unknown!, spaces!]) {
      expect(v.every((x) => Number.isFinite(x))).toBe(true);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  it('embed() returns an empty array for no texts', async () => {
    await expect(embedder.embed([])).resolves.toEqual([]);
  });

  it('embed() rejects non-string texts with ValidationError', async () => {
    await expect(embedder.embed(['ok', 42 as unknown as string])).rejects.toThrow(ValidationError);
  });

  it('embed() rejects with AbortError when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embed(['anything'], { signal: controller.signal })).rejects.toThrow(AbortError);
  });

  it('embed() stops between batches with AbortError when aborted mid-way', async () => {
    const one = await TransformersEmbedder.create({ batchSize: 1 });
    try {
      const texts = Array.from({ length: 2000 }, (_, i) => `memory number ${i} about the weather`);
      const controller = new AbortController();
      const pending = one.embed(texts, { signal: controller.signal });
      setTimeout(() => {
        controller.abort();
      }, 0);
      await expect(pending).rejects.toThrow(AbortError);
      // Still usable afterwards.
      const [v] = await one.embed(['still works']);
      expect(v).toHaveLength(100);
    } finally {
      await one.dispose();
    }
  });

  it('create() rejects with ModelLoadError, with a cause, when the model is missing', async () => {
    const attempt = TransformersEmbedder.create({
      model: 'no-such-model',
      localModelPath: '/nonexistent/engram-models/',
    });
    await expect(attempt).rejects.toThrow(ModelLoadError);
    const error: unknown = await attempt.catch((e: unknown) => e);
    expect((error as ModelLoadError).cause).toBeDefined();
    expect((error as ModelLoadError).message).toContain('no-such-model');
  });

  it('create() rejects bad options with ValidationError', async () => {
    await expect(TransformersEmbedder.create({ batchSize: 0 })).rejects.toThrow(ValidationError);
    await expect(TransformersEmbedder.create({ model: '' })).rejects.toThrow(ValidationError);
    await expect(TransformersEmbedder.create({ worker: true })).rejects.toThrow(ValidationError);
  });

  it('create() rejects with AbortError when aborted before loading', async () => {
    await expect(TransformersEmbedder.create({ signal: AbortSignal.abort() })).rejects.toThrow(AbortError);
  });

  it('dispose() is idempotent and later embed() calls reject with ClosedError', async () => {
    const temp = await TransformersEmbedder.create();
    await temp.dispose();
    await temp.dispose();
    await expect(temp.embed(['after'])).rejects.toThrow(ClosedError);
  });
});
