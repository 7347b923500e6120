import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { ANALYZER_KEY, ensureKeywordIndex } from '../../lib/engine/keywords/keyword-reindex.js';
import { Engram, ValidationError } from '../../lib/index.js';
import { ANALYZER_ID, analyzerId, loadAnalyzer } from '../../lib/search/analyze.js';
import { EngramDb } from '../../lib/store/schema.js';

let counter = 0;
const unique = (): string => `reindex-${Date.now()}-${++counter}`;
const open = (name: string, language?: 'english' | 'german'): Promise<Engram> =>
  Engram.open({
    name,
    embedder: new HashEmbedder({ dimensions: 32 }),
    ...(language === undefined ? {} : { language }),
  });

async function seed(name: string): Promise<void> {
  const e = await open(name);
  const chat = e.conversation('t1', { userId: 'ana' });
  await chat.add({ role: 'user', content: 'She runs every morning' });
  await chat.add({ role: 'user', content: 'Die Häuser sind groß' });
  await e.add('I am running a marathon', { userId: 'ana' });
  await e.close();
}

async function withDb<T>(name: string, fn: (db: EngramDb) => Promise<T>): Promise<T> {
  const db = new EngramDb(name);
  await db.open();
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

describe('ensureKeywordIndex()', () => {
  it('ensureKeywordIndex() records the analyzer of a new store and rebuilds terms for another one', async () => {
    const name = unique();
    await seed(name);
    await withDb(name, async (db) => {
      expect((await db.meta.get(ANALYZER_KEY))?.value).toEqual({ id: ANALYZER_ID });
      const before = await db.terms.toArray();
      const stats = await db.meta.get('stats:m');
      expect(before.some((r) => r.k.includes('m:hauser'))).toBe(true);

      const german = await loadAnalyzer('german');
      expect(await ensureKeywordIndex(db, german)).toBe(true);
      const after = await db.terms.toArray();
      expect(after.some((r) => r.k.includes('m:haus'))).toBe(true);
      expect(after.some((r) => r.k.includes('m:hauser'))).toBe(false);
      expect(after).toHaveLength(before.length);
      expect((await db.meta.get('stats:m'))?.value).toMatchObject({ docs: (stats?.value as { docs: number }).docs });
      expect((await db.meta.get(ANALYZER_KEY))?.value).toEqual({ id: analyzerId('german') });
      // Same analyzer again: nothing to do.
      expect(await ensureKeywordIndex(db, german)).toBe(false);
    });
  });

  it('ensureKeywordIndex() rebuilds a store written before analyzers were recorded', async () => {
    const name = unique();
    await seed(name);
    await withDb(name, async (db) => {
      await db.meta.delete(ANALYZER_KEY);
      await db.terms.clear();
      expect(await ensureKeywordIndex(db, await loadAnalyzer())).toBe(true);
      expect(await db.terms.count()).toBe(3);
    });
  });
});

describe('Engram.open({ language })', () => {
  it('open() with another language rebuilds the keyword index, and back', async () => {
    const name = unique();
    await seed(name);
    const german = await open(name, 'german');
    const found = await german.recall.textSearch('Haus');
    expect(found.results.map((r) => r.content)).toEqual(['Die Häuser sind groß']);
    await german.close();
    const english = await open(name, 'english');
    expect((await english.recall.textSearch('running')).results.map((r) => r.content)).toEqual([
      'She runs every morning',
    ]);
    const { results } = await english.search('runs', { userId: 'ana', mode: 'keyword' });
    expect(results.map((r) => r.memory)).toEqual(['I am running a marathon']);
    await english.close();
  });

  it('open() rejects an unknown language', async () => {
    await expect(Engram.open({ name: unique(), language: 'klingon' as never })).rejects.toThrow(ValidationError);
  });
});
