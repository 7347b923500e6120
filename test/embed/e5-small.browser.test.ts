// Real Chromium: e5-small-v2 (int8) in engram's Web Worker on ONNX Runtime Web,
// the model folder (assembled by `npm run model`, scripts/build-maven-model.mjs)
// served by Vite from this repository at /models/Xenova/e5-small-v2/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E5_SMALL_EMBEDDING_MODEL, TransformersEmbedder } from '../../lib/embed/transformers-embedder.js';
import { E5_SMALL_REFERENCE, cosinesToReference } from './reference-vectors.js';

describe('TransformersEmbedder (browser worker, e5-small-v2)', () => {
  let q8: TransformersEmbedder;

  beforeAll(async () => {
    q8 = await TransformersEmbedder.create({
      model: E5_SMALL_EMBEDDING_MODEL,
      localModelPath: '/models/',
      batchSize: 64,
    });
  }, 180_000);

  afterAll(async () => {
    await q8.dispose();
  });

  it('create() loads Xenova/e5-small-v2 from /models/ in a Web Worker', () => {
    expect(q8.id).toBe('Xenova/e5-small-v2');
    expect(q8.dimensions).toBe(384);
    expect(q8.inWorker).toBe(true);
  });

  it('embed() with the int8 weights stays within cosine 0.985 of the float32 reference, also past 512 tokens (Node: 0.9907-0.9989)', async () => {
    expect(E5_SMALL_REFERENCE.some((r) => r.tokens === 512)).toBe(true);
    for (const { text, batched, alone } of await cosinesToReference(q8, E5_SMALL_REFERENCE)) {
      expect(batched, text).toBeGreaterThanOrEqual(0.985);
      expect(alone, text).toBeGreaterThanOrEqual(0.985);
    }
  }, 300_000);
});
