// engram pools the model's token states itself (lib/embed/transformers-runtime.ts): the vectors must be
// those of transformers.js' own pooling bit for bit, or stored vectors and new ones would disagree.
import { describe, expect, it } from 'vitest';
import { mean_pooling, pipeline, Tensor, env } from '@huggingface/transformers';
import { meanPooledUnit } from '../../lib/embed/transformers-runtime.js';
import { TransformersEmbedder } from '../../lib/embed/transformers-embedder.js';
import { PARAPHRASES } from './paraphrases.js';
import { mulberry32 } from '../../bench/util/rng.js';

const bits = (v: Float32Array): number[] => [...new Uint32Array(v.buffer, v.byteOffset, v.length)];

describe('meanPooledUnit: transformers.js mean pooling and L2 normalisation, bit for bit', () => {
  it('gives the same float32 bits as mean_pooling(...).normalize(2, -1) on padded batches', () => {
    const random = mulberry32(7);
    for (const [batch, tokens, dims] of [
      [1, 1, 4],
      [3, 7, 100],
      [16, 23, 384],
      [5, 40, 33],
    ] as const) {
      const states = Float32Array.from({ length: batch * tokens * dims }, () => (random() - 0.5) * 8);
      // Every text keeps a prefix of its tokens (at least one); the rest is padding.
      const mask = new BigInt64Array(batch * tokens);
      for (let i = 0; i < batch; i++) {
        const kept = 1 + Math.floor(random() * tokens);
        for (let j = 0; j < kept; j++) mask[i * tokens + j] = 1n;
      }
      const expected = mean_pooling(
        new Tensor('float32', states, [batch, tokens, dims]),
        new Tensor('int64', mask, [batch, tokens]),
      ).normalize(2, -1);
      const got = meanPooledUnit(states, batch, tokens, dims, mask);
      expect(got).toHaveLength(batch * dims);
      expect(bits(got)).toEqual(bits(expected.data as Float32Array));
    }
  });
});

describe('TransformersEmbedder with its own pooling', () => {
  it('embeds exactly as the feature-extraction pipeline with mean pooling and normalisation (offline model, Node)', async () => {
    const embedder = await TransformersEmbedder.create();
    const texts = [
      ...PARAPHRASES.flat(),
      '',
      '   ',
      'Unknown zzqxv words, mostly!',
      'Numbers like 1990 and 42 count too.',
      'a '.repeat(600),
    ];
    try {
      const ours = await embedder.embed(texts);
      // The pipeline as transformers.js runs it, on the same files (the embedder left env pointing at them).
      env.allowRemoteModels = false;
      const extractor = await pipeline('feature-extraction', embedder.id);
      try {
        // In the embedder's own batches, so that each text is padded alike.
        for (let i = 0; i < texts.length; i += embedder.batchSize) {
          const slice = texts.slice(i, i + embedder.batchSize);
          const theirs = await extractor(slice, { pooling: 'mean', normalize: true });
          const flat = theirs.data as Float32Array;
          slice.forEach((_, j) => {
            expect(bits(ours[i + j]!)).toEqual(
              bits(flat.subarray(j * embedder.dimensions, (j + 1) * embedder.dimensions)),
            );
          });
          theirs.dispose();
        }
      } finally {
        await extractor.dispose();
      }
    } finally {
      await embedder.dispose();
    }
  });
});
