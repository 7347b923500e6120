import { describe, expect, it } from 'vitest';
import { KEYWORD_WEIGHT, fuse, hybridRelevance, keywordRelevance, vectorRelevance } from '../../lib/search/fusion.js';

describe('relevance', () => {
  it('vectorRelevance() clamps cosine similarity to [0, 1]', () => {
    expect(vectorRelevance(-0.3)).toBe(0);
    expect(vectorRelevance(0.42)).toBe(0.42);
    expect(vectorRelevance(1.0000001)).toBe(1);
  });

  it('keywordRelevance() is the BM25 score over its bound, 0 without a bound', () => {
    expect(keywordRelevance(3, 6)).toBe(0.5);
    expect(keywordRelevance(7, 6)).toBe(1);
    expect(keywordRelevance(3, 0)).toBe(0);
  });

  it('hybridRelevance() is never below the similarity and grows with keyword relevance', () => {
    for (const s of [0, 0.2, 0.5, 0.9]) {
      expect(hybridRelevance(s, undefined)).toBeCloseTo(s, 12);
      expect(hybridRelevance(s, 0.5)).toBeGreaterThan(s);
      expect(hybridRelevance(s, 1)).toBeGreaterThan(hybridRelevance(s, 0.5));
      expect(hybridRelevance(s, 1)).toBeLessThanOrEqual(1);
    }
    expect(hybridRelevance(undefined, 1)).toBeCloseTo(KEYWORD_WEIGHT, 12);
    expect(hybridRelevance(0.5, 1, 0.3)).toBeCloseTo(1 - 0.5 * 0.7, 12);
  });
});

describe('fuse()', () => {
  it('fuse() orders by hybrid relevance and carries each side’s scores', () => {
    const fused = fuse(
      [
        { id: 'a', score: 0.6 },
        { id: 'b', score: 0.55 },
      ],
      [
        { id: 'b', score: 4.2, relevance: 0.9 },
        { id: 'c', score: 2.0, relevance: 0.4 },
      ],
      { similarityOf: new Map([['c', 0.1]]) },
    );
    expect(fused.map((h) => h.id)).toEqual(['b', 'a', 'c']);
    expect(fused[0]).toMatchObject({ id: 'b', similarity: 0.55, keywordScore: 4.2, keywordRelevance: 0.9 });
    expect(fused[0]!.relevance).toBeCloseTo(hybridRelevance(0.55, 0.9), 12);
    expect(fused[1]).toEqual({ id: 'a', relevance: 0.6, similarity: 0.6 });
    expect(fused[2]).toMatchObject({ id: 'c', similarity: 0.1, keywordScore: 2.0 });
  });

  it('fuse() gives every result a relevance in [0, 1] and breaks ties by id', () => {
    const fused = fuse([{ id: 'y', score: -0.2 }, { id: 'x', score: -0.5 }], [{ id: 'z', score: 9, relevance: 1 }]);
    for (const h of fused) {
      expect(h.relevance).toBeGreaterThanOrEqual(0);
      expect(h.relevance).toBeLessThanOrEqual(1);
    }
    expect(fused.map((h) => h.id)).toEqual(['z', 'x', 'y']);
  });

  it('fuse() with keyword weight 0 keeps the vector order', () => {
    const fused = fuse([{ id: 'a', score: 0.3 }, { id: 'b', score: 0.2 }], [{ id: 'b', score: 5, relevance: 1 }], { weight: 0 });
    expect(fused.map((h) => h.id)).toEqual(['a', 'b']);
  });
});
