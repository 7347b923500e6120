import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { Engram, SearchMode } from '../../lib/index.js';
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
    expect(results[0]).toMatchObject({ keywordScore: expect.any(Number) as number, keywordRelevance: expect.any(Number) as number });
    expect(results[0]!.score).toBeGreaterThan(results[0]!.similarity!);
  });

  it('search() in keyword mode scores a document with every query term above one with some', async () => {
    const { results } = await engram.search('allergic peanuts', { userId: 'ana', mode: 'keyword' });
    expect(results.map((r) => r.memory)).toEqual(['I am allergic to peanuts', 'We watched a film about peanuts farming']);
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
      const top = async (mode: SearchMode): Promise<string | undefined> => (await engram.search(query, { userId: 'ana', mode })).results[0]?.memory;
      const [vector, keyword, hybrid] = [await top('vector'), await top('keyword'), await top('hybrid')];
      expect(keyword).toBe(vector);
      expect(hybrid).toBe(vector);
    }
  });
});
