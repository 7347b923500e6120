import { describe, expect, it } from 'vitest';
import { KeywordPostings, scopeLookupWins, type PostingsResult } from '../../lib/search/keyword-postings.js';
import type { MessageTermsFields, TermsEntry } from '../../lib/store/keyword-terms.js';
import { rng } from '../helpers.js';

/**
 * A scope scored by looking its documents up in the postings (binary search)
 * must rank exactly as the walk of the postings does: same ids, same scores to
 * the bit, same order (ties by id), same total, never a document outside it.
 */

type Random = () => number;

/** A terms entry of `length` Zipf-like words over `vocabulary` (`m:w0` most common); some documents are copies (exact ties). */
function entry(random: Random, docId: string, vocabulary: number, userId: string): TermsEntry {
  const counts = new Map<string, number>();
  const length = 1 + Math.floor(random() * 10);
  for (let i = 0; i < length; i++) {
    const key = `m:w${Math.floor(random() ** 3 * vocabulary)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return { corpus: 'm', docId, keys: [...counts.keys()], counts: [...counts.values()], length, userId };
}

interface Corpus {
  postings: KeywordPostings;
  /** Live documents' ids. */
  live: string[];
  /** Ids once indexed, since removed. */
  removed: string[];
}

/** A seeded corpus with updates and removals (enough of them to compact when `removals` is large), statistics kept as the store would. */
function corpusOf(seed: number, size: number, vocabulary: number, removals: number): Corpus {
  const random = rng(seed);
  const postings = new KeywordPostings();
  const docs = new Map<string, TermsEntry>();
  const put = (e: TermsEntry): void => {
    postings.upsert(e);
    docs.set(e.docId, e);
  };
  for (let i = 0; i < size; i++) {
    const id = `d${String(i).padStart(6, '0')}`;
    // One in ten a copy of an earlier document under another id: equal scores, ordered by id.
    const copyOf =
      i > 0 && random() < 0.1 ? docs.get(`d${String(Math.floor(random() * i)).padStart(6, '0')}`) : undefined;
    put(
      copyOf === undefined ? entry(random, id, vocabulary, `u${Math.floor(random() * 20)}`) : { ...copyOf, docId: id },
    );
  }
  // Updates: a new version of a tenth of the documents (a new document number, the old postings left dead).
  const ids = [...docs.keys()];
  for (const id of ids) if (random() < 0.1) put(entry(random, id, vocabulary, `u${Math.floor(random() * 20)}`));
  const removed: string[] = [];
  for (let r = 0; r < removals; r++) {
    const id = ids[Math.floor(random() * ids.length)]!;
    if (!docs.has(id)) continue;
    postings.remove(id);
    docs.delete(id);
    removed.push(id);
  }
  postings.stats = { docs: docs.size, length: [...docs.values()].reduce((sum, e) => sum + e.length, 0) };
  return { postings, live: [...docs.keys()], removed };
}

function queryKeys(random: Random, vocabulary: number): string[] {
  return Array.from({ length: 1 + Math.floor(random() * 5) }, () => `m:w${Math.floor(random() ** 2 * vocabulary)}`);
}

/** A random scope: `size` of the live documents, plus removed ids and ids never indexed (which must not match). */
function scopeOf(random: Random, corpus: Corpus, size: number): Set<string> {
  const scope = new Set<string>();
  while (scope.size < Math.min(size, corpus.live.length))
    scope.add(corpus.live[Math.floor(random() * corpus.live.length)]!);
  for (const id of corpus.removed.slice(0, 3)) scope.add(id);
  scope.add('never-indexed');
  return scope;
}

function expectInScope(result: PostingsResult, scope: ReadonlySet<string>): void {
  for (const hit of result.hits) expect(scope.has(hit.id)).toBe(true);
}

describe('KeywordPostings: a scope looked up, not walked', () => {
  it('ranks exactly as the walk on random corpora and scopes, with updated and removed documents, before and after compaction', () => {
    let lookups = 0;
    for (const [seed, size, vocabulary, removals] of [
      [1, 3000, 400, 300],
      [2, 3000, 40, 300],
      // Enough removals to compact the postings (a third of the documents dead).
      [3, 5000, 200, 2500],
      [4, 800, 8, 50],
    ] as const) {
      const corpus = corpusOf(seed, size, vocabulary, removals);
      const random = rng(seed + 100);
      const gone = new Set(corpus.removed);
      for (let q = 0; q < 30; q++) {
        const keys = queryKeys(random, vocabulary);
        const scope = scopeOf(random, corpus, [0, 1, 5, 30, 200, 1500][q % 6]!);
        const byUser = (_: string, f: MessageTermsFields): boolean => f.userId !== 'u3';
        for (const depth of q % 5 === 0 ? [10, Infinity] : [1, 10, 40]) {
          for (const accept of [undefined, byUser]) {
            const base = { depth, ...(accept === undefined ? {} : { accept }) };
            const lookup = corpus.postings.search(keys, { ...base, within: scope, scopeStrategy: 'lookup' });
            const walk = corpus.postings.search(keys, { ...base, within: scope, scopeStrategy: 'walk' });
            // Bit-exact: the same objects, scores compared with toEqual (Object.is on numbers).
            expect(lookup, `${keys.join(' ')} @${depth} in ${scope.size}`).toEqual(walk);
            // The way memory search asked before (a filter inside the walk), and with pruning: the same hits.
            const filtered = corpus.postings.search(keys, {
              depth,
              accept: (id, f) => scope.has(id) && (accept === undefined || accept(id, f)),
            });
            expect(lookup).toEqual(filtered);
            expect(
              corpus.postings.search(keys, { ...base, within: scope, prune: true, scopeStrategy: 'walk' }).hits,
            ).toEqual(lookup.hits);
            // The default (by cost) picks one of the two: the same answer.
            const chosen = corpus.postings.search(keys, { ...base, within: scope, prune: true });
            expect(chosen.hits).toEqual(lookup.hits);
            if (
              scopeLookupWins(
                scope.size,
                keys.map((k) => corpus.postings.documentFrequency(k)),
              )
            )
              lookups++;
            expectInScope(lookup, scope);
            expect(lookup.hits.filter((h) => gone.has(h.id))).toEqual([]);
          }
        }
      }
    }
    // The cost model did send small scopes to the lookup.
    expect(lookups).toBeGreaterThan(0);
  });

  it('has exact ties ranked by id, as the walk does', () => {
    const postings = new KeywordPostings();
    for (const id of ['c', 'a', 'd', 'b'])
      postings.upsert({ corpus: 'm', docId: id, keys: ['m:x'], counts: [1], length: 2 });
    postings.upsert({ corpus: 'm', docId: 'e', keys: ['m:x'], counts: [2], length: 2 });
    postings.stats = { docs: 5, length: 10 };
    const scope = new Set(['d', 'e', 'b', 'c']);
    const lookup = postings.search(['m:x'], { depth: 3, within: scope, scopeStrategy: 'lookup' });
    expect(lookup.hits.map((h) => h.id)).toEqual(['e', 'b', 'c']);
    expect(lookup.total).toBe(4);
    expect(lookup).toEqual(postings.search(['m:x'], { depth: 3, within: scope, scopeStrategy: 'walk' }));
  });

  it('an empty scope, or one of removed and unknown ids, matches nothing; another scope never leaks in', () => {
    const corpus = corpusOf(9, 2000, 30, 200);
    const keys = ['m:w0', 'm:w1', 'm:w2'];
    for (const scopeStrategy of ['lookup', 'walk', 'cost'] as const) {
      expect(corpus.postings.search(keys, { within: new Set(), scopeStrategy })).toMatchObject({ hits: [], total: 0 });
      expect(
        corpus.postings.search(keys, { within: new Set([...corpus.removed, 'nope']), scopeStrategy }),
      ).toMatchObject({ hits: [], total: 0 });
      // Two disjoint scopes: each answers only its own documents, and together all the matches.
      const one = new Set(corpus.live.filter((_, i) => i % 2 === 0).slice(0, 50));
      const two = new Set(corpus.live.filter((_, i) => i % 2 === 1).slice(0, 50));
      const a = corpus.postings.search(keys, { within: one, scopeStrategy });
      const b = corpus.postings.search(keys, { within: two, scopeStrategy });
      expectInScope(a, one);
      expectInScope(b, two);
      expect(a.total + b.total).toBe(
        corpus.postings.search(keys, { within: new Set([...one, ...two]), scopeStrategy }).total,
      );
    }
  });

  it('asks the filter once per matching document of the scope, never outside it', () => {
    const corpus = corpusOf(10, 1000, 20, 0);
    const scope = new Set(corpus.live.slice(0, 40));
    const asked: string[] = [];
    corpus.postings.search(['m:w0', 'm:w1'], {
      within: scope,
      scopeStrategy: 'lookup',
      accept: (id) => (asked.push(id), true),
    });
    expect(new Set(asked).size).toBe(asked.length);
    for (const id of asked) expect(scope.has(id)).toBe(true);
  });

  it('scopeLookupWins: a few documents against long postings are looked up, a large scope or short postings walked', () => {
    expect(scopeLookupWins(100, [20_000, 5_000])).toBe(true);
    expect(scopeLookupWins(10, [1000])).toBe(true);
    expect(scopeLookupWins(20_000, [20_000, 5_000])).toBe(false);
    expect(scopeLookupWins(100, [50, 20])).toBe(false);
    expect(scopeLookupWins(30, [50, 20])).toBe(true);
    expect(scopeLookupWins(0, [])).toBe(false);
    expect(scopeLookupWins(1, [])).toBe(false);
  });
});
