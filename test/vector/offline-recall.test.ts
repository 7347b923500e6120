// HNSW against exact search on real sentence embeddings from the offline model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSentences } from '../../bench/util/sentences.js';
import { TransformersEmbedder } from '../../lib/embed/transformers-embedder.js';
import { ExactIndex } from '../../lib/vector/exact-index.js';
import { HnswIndex } from '../../lib/vector/hnsw-index.js';

let embedder: TransformersEmbedder;
let data: Float32Array[];
let queries: Float32Array[];

beforeAll(async () => {
  embedder = await TransformersEmbedder.create();
  const sentences = [...new Set(generateSentences(6000, 21))];
  data = await embedder.embed(sentences.slice(0, 4000));
  queries = await embedder.embed(sentences.slice(4000, 4200));
}, 120_000);
afterAll(async () => {
  await embedder.dispose();
});

describe('HnswIndex on offline-model sentences', () => {
  it('search() top-10 agrees with ExactIndex at recall@10 >= 0.95', async () => {
    const hnsw = await HnswIndex.create({ dimensions: embedder.dimensions });
    const exact = ExactIndex.create({ dimensions: embedder.dimensions });
    const items = data.map((vector, i) => ({ id: `s${i}`, vector }));
    hnsw.addMany(items);
    exact.addMany(items);
    let found = 0;
    for (const q of queries) {
      const truth = new Set(exact.search(q, 10).map((h) => h.id));
      found += hnsw.search(q, 10).filter((h) => truth.has(h.id)).length;
    }
    const recall = found / (queries.length * 10);
    expect(recall).toBeGreaterThanOrEqual(0.95);
    hnsw.dispose();
  });
});
