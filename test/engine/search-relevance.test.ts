import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { Engram, SearchMode } from '../../lib/index.js';
import { hybridRelevance } from '../../lib/search/fusion.js';
import { openTemp } from '../helpers.js';

let engram: Engram;

beforeAll(async () => {
  engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 256 }) });
  await engram.add(
    [
      { role: 'user', content: 'I am allergic to peanuts' },
      { role: 'user', content: 'My flat in Porto is tiny' },
      { role: 'user', content: 'We watched a film about peanuts farming' },
      { role: 'user', content: 'The weather is grey and rainy' },
    ],
    { userId: 'ana' },
  );
});
afterAll(async () => {
  await engram.close();
});

describe('search() relevance', () => {
  it('search() gives every result a score in [0, 1], best first, in every mode', async () => {
    for (const mode of ['hybrid', 'vector', 'keyword'] as SearchMode[]) {
      const { results } = await engram.search('Which allergies, peanuts?', { userId: 'ana', mode });
      expect(results.length).toBeGreaterThan(0);
      for (const r of results) {
        expect(r.score).toBeGreaterThanOrEqual(0);
        expect(r.score).toBeLessThanOrEqual(1);
      }
      expect(results.map((r) => r.score)).toEqual([...results.map((r) => r.score)].sort((a, b) => b - a));
    }
  });

  it('search() in hybrid mode scores no result below its similarity and carries the keyword scores', async () => {
    const { results } = await engram.search('peanuts allergic', { userId: 'ana' });
    expect(results[0]!.memory).toBe('I am allergic to peanuts');
    for (const r of results) expect(r.score).toBeGreaterThanOrEqual(Math.max(0, r.similarity!) - 1e-12);
    expect(results[0]).toMatchObject({
      keywordScore: expect.any(Number) as number,
      keywordRelevance: expect.any(Number) as number,
    });
    expect(results[0]!.score).toBeGreaterThan(results[0]!.similarity!);
  });

  it('search() in keyword mode scores a document with every query term above one with some', async () => {
    const { results } = await engram.search('allergic peanuts', { userId: 'ana', mode: 'keyword' });
    expect(results.map((r) => r.memory)).toEqual([
      'I am allergic to peanuts',
      'We watched a film about peanuts farming',
    ]);
    expect(results[0]!.score).toBeGreaterThan(0.5);
    expect(results[1]!.score).toBeLessThan(results[0]!.score);
    expect(results[0]!.keywordRelevance).toBe(results[0]!.score);
  });

  it('search() applies the threshold to the score in every mode', async () => {
    for (const mode of ['hybrid', 'vector', 'keyword'] as SearchMode[]) {
      const all = (await engram.search('allergic peanuts', { userId: 'ana', mode })).results;
      const cut = (all[0]!.score + (all[1]?.score ?? 0)) / 2;
      const kept = (await engram.search('allergic peanuts', { userId: 'ana', mode, threshold: cut })).results;
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.every((r) => r.score >= cut)).toBe(true);
      expect(kept.length).toBeLessThan(all.length);
    }
  });
});

describe('search() hybrid ranking', () => {
  it('search() in hybrid mode ranks first the memory keyword and vector search both rank first', async () => {
    for (const query of ['allergic peanuts', 'flat Porto tiny', 'weather grey rainy']) {
      const top = async (mode: SearchMode): Promise<string | undefined> =>
        (await engram.search(query, { userId: 'ana', mode })).results[0]?.memory;
      const [vector, keyword, hybrid] = [await top('vector'), await top('keyword'), await top('hybrid')];
      expect(keyword).toBe(vector);
      expect(hybrid).toBe(vector);
    }
  });
});

describe('search() hybrid over many close memories', () => {
  it('every hybrid result carries its true similarity and keyword relevance, fused; none better is left out of the pools', async () => {
    const many = await openTemp({ embedder: new HashEmbedder({ dimensions: 64 }) });
    const words = ['harbour', 'boat', 'dawn', 'sail', 'rope', 'net', 'fish', 'gull', 'tide', 'pier', 'rain', 'wind'];
    const texts = Array.from(
      { length: 400 },
      (_, i) => `${words[i % 12]} ${words[(i * 7) % 12]} ${words[(i * 5 + 3) % 12]} note ${i}`,
    );
    await many.add(
      texts.map((content) => ({ role: 'user' as const, content })),
      { userId: 'ana', dedupe: 'off' },
    );
    for (const query of ['harbour boat', 'tide pier rain', 'gull fish net wind', 'sail']) {
      const limit = 10;
      const hybrid = (await many.search(query, { userId: 'ana', limit })).results;
      const byVector = (await many.search(query, { userId: 'ana', mode: 'vector', limit: 400 })).results;
      const byKeyword = (await many.search(query, { userId: 'ana', mode: 'keyword', limit: 400 })).results;
      const vector = new Map(byVector.map((r) => [r.id, r.similarity!]));
      const keyword = new Map(byKeyword.map((r) => [r.id, r.keywordRelevance!]));
      expect(hybrid).toHaveLength(limit);
      for (const r of hybrid) {
        expect(r.similarity, query).toBeCloseTo(vector.get(r.id)!, 6);
        if (r.keywordRelevance !== undefined) expect(r.keywordRelevance, query).toBeCloseTo(keyword.get(r.id)!, 9);
        expect(r.score, query).toBeCloseTo(hybridRelevance(vector.get(r.id), r.keywordRelevance), 9);
      }
      // Hybrid fuses the best 40 of each side: over those, fused exactly, the same tenth best.
      const pool = 40;
      const vectorPool = new Set(byVector.slice(0, pool).map((r) => r.id));
      const keywordPool = new Map(byKeyword.slice(0, pool).map((r) => [r.id, r.keywordRelevance!]));
      const fused = [...new Set([...vectorPool, ...keywordPool.keys()])]
        .map((id) => hybridRelevance(vector.get(id), keywordPool.get(id)))
        .sort((x, y) => y - x);
      expect(hybrid[limit - 1]!.score, query).toBeCloseTo(fused[limit - 1]!, 9);
    }
    await many.close();
  });
});
