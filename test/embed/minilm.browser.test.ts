// Real Chromium: all-MiniLM-L6-v2 in engram's Web Worker on ONNX Runtime Web,
// the model folder (assembled by `npm run model`, scripts/build-maven-model.mjs)
// served by Vite from this repository at /models/Xenova/all-MiniLM-L6-v2/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINILM_EMBEDDING_MODEL, TransformersEmbedder } from '../../lib/embed/transformers-embedder.js';
import { PARAPHRASES, cosine } from './paraphrases.js';
import { MINILM_REFERENCE, cosinesToReference } from './reference-vectors.js';

describe('TransformersEmbedder (browser worker, MiniLM)', () => {
  let q8: TransformersEmbedder;

  beforeAll(async () => {
    q8 = await TransformersEmbedder.create({
      model: MINILM_EMBEDDING_MODEL,
      localModelPath: '/models/',
      batchSize: 64,
    });
  });

  afterAll(async () => {
    await q8.dispose();
  });

  it('create() loads Xenova/all-MiniLM-L6-v2 from /models/ in a Web Worker', () => {
    expect(q8.id).toBe('Xenova/all-MiniLM-L6-v2');
    expect(q8.dimensions).toBe(384);
    expect(q8.inWorker).toBe(true);
  });

  it("embed() ranks each sentence's paraphrase above every unrelated sentence", async () => {
    const a = await q8.embed(PARAPHRASES.map((p) => p[0]));
    const b = await q8.embed(PARAPHRASES.map((p) => p[1]));
    for (let i = 0; i < a.length; i++) {
      const own = cosine(a[i]!, b[i]!);
      for (let j = 0; j < b.length; j++)
        if (j !== i)
          expect(own, `${PARAPHRASES[i]![0]} vs ${PARAPHRASES[j]![1]}`).toBeGreaterThan(cosine(a[i]!, b[j]!));
    }
  });

  it("embed() with the float32 weights gives sentence-transformers' vectors in the worker (cosine >= 0.9999 each)", async () => {
    expect(MINILM_REFERENCE.some((r) => r.tokens === 256)).toBe(true);
    const fp32 = await TransformersEmbedder.create({
      model: MINILM_EMBEDDING_MODEL,
      localModelPath: '/models/',
      dtype: 'fp32',
      batchSize: 64,
    });
    try {
      expect(fp32.inWorker).toBe(true);
      for (const { text, batched, alone } of await cosinesToReference(fp32, MINILM_REFERENCE)) {
        expect(batched, text).toBeGreaterThanOrEqual(0.9999);
        expect(alone, text).toBeGreaterThanOrEqual(0.9999);
      }
    } finally {
      await fp32.dispose();
    }
  }, 180_000);

  it('embed() with the int8 weights (the default) stays within cosine 0.97 of sentence-transformers, below the 0.999 goal', async () => {
    // See test/embed/minilm.test.ts: int8 activations and weights, 0.972-0.994 measured.
    for (const { text, batched, alone } of await cosinesToReference(q8, MINILM_REFERENCE)) {
      expect(batched, text).toBeGreaterThanOrEqual(0.97);
      expect(alone, text).toBeGreaterThanOrEqual(0.97);
    }
  });
});
