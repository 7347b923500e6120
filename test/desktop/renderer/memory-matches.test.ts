// The memories view's matches in Node, with the real MiniLM model (models/, built by `npm run model`):
// a hybrid result is a match as recall decides (isRecalled), not by its score alone, so a question
// never told lists no match even though MiniLM's per-query fusion scores its nearest memory near 1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_EMBEDDING_MODEL,
  MINILM_EMBEDDING_MODEL,
  TransformersEmbedder,
  retrievalProfile,
  type Engram,
} from '../../../lib/index.js';
import { findMatches, isMatch } from '../../../desktop/renderer/memory-matches.js';
import { openTemp } from '../../helpers.js';

const FACTS = [
  'My favourite food is spicy ramen from the place downtown.',
  'I am allergic to cats, so no pets with fur.',
  'The quarterly report is due on the first Friday of next month.',
  'My sister lives in Lisbon and works as an architect.',
  'I go running every morning before work.',
  'The car needs new tyres before winter.',
];

describe('findMatches() with MiniLM', () => {
  let engram: Engram;
  beforeAll(async () => {
    engram = await openTemp({ embedder: () => TransformersEmbedder.create({ model: MINILM_EMBEDDING_MODEL }) });
    for (const text of FACTS) await engram.add(text, { userId: 'u1' });
  });
  afterAll(async () => {
    await engram.close();
  });

  it('findMatches() lists no match in hybrid mode for a question never told, though its nearest memory scores above the threshold', async () => {
    for (const question of ['What is my passport number?', 'Which football team do I support?']) {
      const found = await findMatches(engram, question, { mode: 'hybrid' });
      expect(
        found.matches.map((m) => m.memory),
        question,
      ).toEqual([]);
      // A cut on the score alone (what the view did) would have listed the nearest memory.
      expect(found.weaker[0]!.score, question).toBeGreaterThanOrEqual(found.threshold);
      expect(found.weaker).toHaveLength(FACTS.length);
      expect(found.needsEvidence).toBe(true);
    }
  });

  it('findMatches() lists the memory a told question is about in hybrid mode, first', async () => {
    const food = await findMatches(engram, 'What does she like to eat?', { mode: 'hybrid' });
    expect(food.matches[0]?.memory).toBe(FACTS[0]);
    expect(food.matches.map((m) => m.memory)).not.toContain(FACTS[5]);
    const sister = await findMatches(engram, 'Where does my sister live?', { mode: 'hybrid' });
    expect(sister.matches[0]?.memory).toBe(FACTS[3]);
    expect(food.matches.length + food.weaker.length).toBe(FACTS.length);
  });

  it('findMatches() cuts meaning search at the cosine minSimilarity and keyword search at any match', async () => {
    const profile = retrievalProfile(MINILM_EMBEDDING_MODEL);
    const meaning = await findMatches(engram, 'What does she like to eat?', { mode: 'vector' });
    expect(meaning.threshold).toBe(profile.minSimilarity);
    expect(meaning.matches[0]?.memory).toBe(FACTS[0]);
    for (const r of meaning.matches) expect(r.score).toBeGreaterThanOrEqual(profile.minSimilarity);
    for (const r of meaning.weaker) expect(r.score).toBeLessThan(profile.minSimilarity);
    const keyword = await findMatches(engram, 'sister Lisbon', { mode: 'keyword' });
    expect(keyword.matches.map((m) => m.memory)).toEqual([FACTS[3]]);
    expect(keyword.needsEvidence).toBe(false);
  });
});

describe('isMatch()', () => {
  it('isMatch() in hybrid mode asks for evidence only where the fusion is per query', () => {
    const minilm = retrievalProfile(MINILM_EMBEDDING_MODEL);
    const glove = retrievalProfile(DEFAULT_EMBEDDING_MODEL);
    expect(isMatch({ score: 0.98, similarity: minilm.minSimilarity - 0.01 }, 'hybrid', minilm)).toBe(false);
    expect(isMatch({ score: 0.98, similarity: 0.1, keywordRelevance: 0.5 }, 'hybrid', minilm)).toBe(true);
    expect(isMatch({ score: minilm.minRelevance - 0.01, similarity: 0.9 }, 'hybrid', minilm)).toBe(false);
    expect(isMatch({ score: glove.minRelevance, similarity: 0.01 }, 'hybrid', glove)).toBe(true);
    expect(isMatch({ score: 0.98, similarity: 0.1 }, 'vector', minilm)).toBe(true);
  });
});
