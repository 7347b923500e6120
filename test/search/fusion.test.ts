import { describe, expect, it } from 'vitest';
import {
  combine,
  DEFAULT_FUSION_WEIGHTS,
  fuse,
  fusionScaling,
  gatedWeights,
  hybridRelevance,
  keywordRelevance,
  vectorRelevance,
} from '../../lib/search/fusion.js';

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
    expect(hybridRelevance(undefined, 1)).toBeCloseTo(DEFAULT_FUSION_WEIGHTS.keyword, 12);
    expect(hybridRelevance(0.5, 1, { vector: 1, keyword: 0.3 })).toBeCloseTo(1 - 0.5 * 0.7, 12);
  });

  it('hybridRelevance() weighs the similarity by the vector weight', () => {
    expect(hybridRelevance(0.8, undefined, { vector: 0.25, keyword: 1 })).toBeCloseTo(0.2, 12);
    expect(hybridRelevance(0.8, 0.5, { vector: 0.25, keyword: 1 })).toBeCloseTo(1 - 0.8 * 0.5, 12);
    // A keyword match worth 0.5 outranks a similarity of 0.9 alone when the model's similarity is worth a quarter.
    expect(hybridRelevance(0.3, 0.5, { vector: 0.25, keyword: 1 })).toBeGreaterThan(
      hybridRelevance(0.9, 0, { vector: 0.25, keyword: 1 }),
    );
    expect(hybridRelevance(0.3, 0.5)).toBeLessThan(hybridRelevance(0.9, 0));
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
    const fused = fuse(
      [
        { id: 'y', score: -0.2 },
        { id: 'x', score: -0.5 },
      ],
      [{ id: 'z', score: 9, relevance: 1 }],
    );
    for (const h of fused) {
      expect(h.relevance).toBeGreaterThanOrEqual(0);
      expect(h.relevance).toBeLessThanOrEqual(1);
    }
    expect(fused.map((h) => h.id)).toEqual(['z', 'x', 'y']);
  });

  it('fuse() with keyword weight 0 keeps the vector order', () => {
    const fused = fuse(
      [
        { id: 'a', score: 0.3 },
        { id: 'b', score: 0.2 },
      ],
      [{ id: 'b', score: 5, relevance: 1 }],
      { weights: { vector: 1, keyword: 0 } },
    );
    expect(fused.map((h) => h.id)).toEqual(['a', 'b']);
  });

  it('fuse() with vector weight 0 keeps the keyword order, whatever the similarities', () => {
    // The vector side ranks c, b, a; keyword ranks a, b, c: with v = 0 hybrid is the keyword order,
    // and a document only the vector side found comes after every keyword match.
    const fused = fuse(
      [
        { id: 'c', score: 0.95 },
        { id: 'b', score: 0.9 },
        { id: 'a', score: 0.1 },
        { id: 'd', score: 0.99 },
      ],
      [
        { id: 'a', score: 6, relevance: 0.9 },
        { id: 'b', score: 4, relevance: 0.6 },
        { id: 'c', score: 1, relevance: 0.2 },
      ],
      { weights: { vector: 0, keyword: 1 } },
    );
    expect(fused.map((h) => h.id)).toEqual(['a', 'b', 'c', 'd']);
    for (const [i, r] of [0.9, 0.6, 0.2, 0].entries()) expect(fused[i]!.relevance).toBeCloseTo(r, 12);
  });
});

describe('fuse() never buries a result both inputs rank high', () => {
  /** Deterministic pseudo-random numbers (a test must see the same lists every run). */
  function lcg(seed: number): () => number {
    let x = seed >>> 0;
    return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 4294967296;
  }

  it('hybridRelevance() is at least each weighted input, and grows with each', () => {
    const rand = lcg(7);
    for (const weights of [DEFAULT_FUSION_WEIGHTS, { vector: 0.25, keyword: 1 }, { vector: 0.5, keyword: 0.6 }]) {
      for (let i = 0; i < 500; i++) {
        const s = rand();
        const k = rand();
        const h = hybridRelevance(s, k, weights);
        expect(h).toBeGreaterThanOrEqual(weights.vector * s - 1e-12);
        expect(h).toBeGreaterThanOrEqual(weights.keyword * k - 1e-12);
        expect(h).toBeLessThanOrEqual(1);
        expect(hybridRelevance(Math.min(1, s + 0.01), k, weights)).toBeGreaterThanOrEqual(h);
        expect(hybridRelevance(s, Math.min(1, k + 0.01), weights)).toBeGreaterThanOrEqual(h);
      }
    }
  });

  it('fuse() ranks first a result both inputs rank first', () => {
    const fused = fuse(
      [
        { id: 'both', score: 0.41 },
        { id: 'v', score: 0.4 },
      ],
      [
        { id: 'both', score: 2.2, relevance: 0.35 },
        { id: 'k', score: 2.1, relevance: 0.34 },
      ],
      { similarityOf: new Map([['k', 0.05]]) },
    );
    expect(fused[0]!.id).toBe('both');
  });

  it('fuse() puts a result at most (vector rank + keyword rank − 1) in random lists', () => {
    const rand = lcg(20261201);
    for (let trial = 0; trial < 200; trial++) {
      const n = 5 + Math.floor(rand() * 30);
      const ids = Array.from({ length: n }, (_, i) => `d${i}`);
      const similarity = new Map(ids.map((id) => [id, rand() * 0.9]));
      // Keyword search matches about half the documents.
      const matched = ids.filter(() => rand() < 0.5);
      const keyword = matched.map((id) => {
        const relevance = rand();
        return { id, score: relevance * 7, relevance };
      });
      keyword.sort((a, b) => b.relevance - a.relevance);
      const vector = ids.map((id) => ({ id, score: similarity.get(id)! })).sort((a, b) => b.score - a.score);
      const weights = trial % 2 === 0 ? DEFAULT_FUSION_WEIGHTS : { vector: 0.25, keyword: 1 };
      const fused = fuse(vector, keyword, { weights }).map((h) => h.id);
      keyword.forEach((h, keywordRank) => {
        const vectorRank = vector.findIndex((v) => v.id === h.id);
        expect(fused.indexOf(h.id)).toBeLessThanOrEqual(vectorRank + keywordRank);
      });
    }
  });
});

describe('per-query scaling (the fusion of sentence models)', () => {
  const perQuery = { vector: 1, keyword: 1, scale: 'per-query' as const };
  function lcg(seed: number): () => number {
    let x = seed >>> 0;
    return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 4294967296;
  }

  it('fusionScaling() maps each side min-max over its own list, and absolute is the old scale', () => {
    const vector = [
      { id: 'a', score: 0.8 },
      { id: 'b', score: 0.7 },
      { id: 'c', score: 0.6 },
    ];
    const keyword = [
      { id: 'b', score: 6, relevance: 0.6 },
      { id: 'd', score: 2, relevance: 0.2 },
    ];
    const scaling = fusionScaling(vector, keyword, perQuery);
    expect(scaling.vector(0.8)).toBeCloseTo(1, 12);
    expect(scaling.vector(0.7)).toBeCloseTo(0.5, 12);
    expect(scaling.vector(0.6)).toBe(0);
    expect(scaling.vector(0.1)).toBe(0); // below the pool: as not found
    expect(scaling.vector(undefined)).toBe(0);
    expect(scaling.keyword(0.6)).toBeCloseTo(1, 12);
    expect(scaling.keyword(0.4)).toBeCloseTo(0.5, 12);
    expect(scaling.keyword(undefined)).toBe(0);
    const absolute = fusionScaling(vector, keyword, { vector: 1, keyword: 1 });
    expect(absolute.vector(0.7)).toBe(0.7);
    expect(absolute.vector(-0.2)).toBe(0);
    expect(absolute.keyword(0.4)).toBe(0.4);
  });

  it('fuse() per query: empty sides, one keyword match, equal similarities', () => {
    expect(fuse([], [], { weights: perQuery })).toEqual([]);
    // Only the keyword side: its order, the best at the keyword weight.
    const keywordOnly = fuse(
      [],
      [
        { id: 'x', score: 5, relevance: 0.5 },
        { id: 'y', score: 4, relevance: 0.4 },
      ],
      { weights: { ...perQuery, keyword: 0.8 } },
    );
    expect(keywordOnly.map((h) => h.id)).toEqual(['x', 'y']);
    expect(keywordOnly[0]!.relevance).toBeCloseTo(0.8, 12);
    // Only the vector side: its order.
    const vectorOnly = fuse(
      [
        { id: 'p', score: 0.5 },
        { id: 'q', score: 0.4 },
        { id: 'r', score: 0.3 },
      ],
      [],
      { weights: perQuery },
    );
    expect(vectorOnly.map((h) => h.id)).toEqual(['p', 'q', 'r']);
    // One keyword match scales to 1; a pool of equal similarities scales each to 1; ties by id.
    const tied = fuse(
      [
        { id: 'n', score: 0.6 },
        { id: 'm', score: 0.6 },
      ],
      [{ id: 'k', score: 3, relevance: 0.3 }],
      { weights: perQuery },
    );
    expect(tied.map((h) => h.id)).toEqual(['k', 'm', 'n']);
    for (const h of tied) expect(h.relevance).toBeCloseTo(1, 12);
  });

  it('fuse() per query: a memory only one side found keeps its score, and carries a similarity it is given', () => {
    const fused = fuse(
      [
        { id: 'a', score: 0.9 },
        { id: 'b', score: 0.5 },
      ],
      [
        { id: 'c', score: 4, relevance: 0.7 },
        { id: 'b', score: 1, relevance: 0.1 },
      ],
      { weights: perQuery, similarityOf: new Map([['c', 0.2]]) },
    );
    const c = fused.find((h) => h.id === 'c')!;
    expect(c.similarity).toBe(0.2);
    expect(c.relevance).toBeCloseTo(1, 12); // best keyword match, below the vector pool: 0 from that side
    expect(fused.find((h) => h.id === 'a')!.relevance).toBeCloseTo(1, 12);
  });

  it('fuse() per query: relevances in [0, 1], monotone in each side, and a result both rank first is first', () => {
    const rand = lcg(22);
    const broken: string[] = [];
    for (let trial = 0; trial < 60; trial++) {
      const n = 3 + Math.floor(rand() * 15);
      const ids = Array.from({ length: n }, (_, i) => `d${i}`);
      const vector = ids.map((id) => ({ id, score: rand() * 2 - 1 })).sort((a, b) => b.score - a.score);
      const keyword = ids
        .filter(() => rand() < 0.5)
        .map((id) => {
          const relevance = rand();
          return { id, score: relevance * 7, relevance };
        })
        .sort((a, b) => b.relevance - a.relevance);
      const weights = { vector: rand(), keyword: rand(), scale: 'per-query' as const };
      const fused = fuse(vector, keyword, { weights });
      for (const h of fused)
        if (!(h.relevance >= 0 && h.relevance <= 1)) broken.push(`${trial}: ${h.id} out of [0, 1]`);
      // Monotone: with the lists' bounds fixed, a document above another on both sides is not below it.
      const scaling = fusionScaling(vector, keyword, weights);
      const keywordOf = new Map(keyword.map((h) => [h.id, h.relevance]));
      const at = new Map(fused.map((h) => [h.id, h.relevance]));
      for (const a of vector)
        for (const b of vector)
          if (
            scaling.vector(a.score) >= scaling.vector(b.score) &&
            scaling.keyword(keywordOf.get(a.id)) >= scaling.keyword(keywordOf.get(b.id)) &&
            at.get(a.id)! < at.get(b.id)! - 1e-12
          )
            broken.push(`${trial}: ${a.id} below ${b.id}`);
      if (keyword.length > 0 && keyword[0]!.id === vector[0]!.id && weights.vector > 0 && weights.keyword > 0)
        expect(fused[0]!.id).toBe(vector[0]!.id);
      // combine() grows with each input.
      const [s, k] = [rand(), rand()];
      expect(combine(Math.min(1, s + 0.05), k, weights)).toBeGreaterThanOrEqual(combine(s, k, weights));
      expect(combine(s, Math.min(1, k + 0.05), weights)).toBeGreaterThanOrEqual(combine(s, k, weights));
    }
    expect(broken).toEqual([]);
  });
});

describe('the vector gate', () => {
  const gate = { depth: 3, margin: 0.1, weight: 0.2 };
  const flat = [
    { id: 'a', score: 0.42 },
    { id: 'b', score: 0.4 },
    { id: 'c', score: 0.38 },
    { id: 'd', score: 0.1 },
  ];
  const standsOut = [
    { id: 'a', score: 0.7 },
    { id: 'b', score: 0.4 },
    { id: 'c', score: 0.38 },
  ];

  it('gatedWeights() lowers the vector weight when the best similarity hardly stands out at the gate depth', () => {
    const weights = { vector: 1, keyword: 0.8, scale: 'per-query' as const, gate };
    // 0.42 − 0.38 (the 3rd) < 0.1: the vector side is worth 0.2; the 4th (0.1) does not count.
    expect(gatedWeights(flat, weights)).toEqual({ vector: 0.2, keyword: 0.8, scale: 'per-query' });
    expect(gatedWeights(standsOut, weights)).toEqual({ vector: 1, keyword: 0.8, scale: 'per-query' });
    // A pool shorter than the depth: its last; an empty one is gated.
    expect(gatedWeights(standsOut.slice(0, 2), weights).vector).toBe(1);
    expect(gatedWeights([], weights).vector).toBe(0.2);
    const plain = { vector: 1, keyword: 0.8 };
    expect(gatedWeights(flat, plain)).toBe(plain);
  });

  it('fuse() with a gate lets the keyword side lead where the vector side does not stand out', () => {
    const keyword = [{ id: 'c', score: 3, relevance: 0.6 }];
    const weights = { vector: 1, keyword: 0.8, scale: 'per-query' as const };
    expect(fuse(flat, keyword, { weights })[0]!.id).toBe('a');
    expect(fuse(flat, keyword, { weights: { ...weights, gate } })[0]!.id).toBe('c');
    expect(fuse(standsOut, keyword, { weights: { ...weights, gate } })[0]!.id).toBe('a');
  });
});
