import { afterEach, describe, expect, it } from 'vitest';
import { IndexError } from '../../lib/errors.js';
import { openStore } from '../../lib/engine/open-store.js';
import { analyzeDocument, analyzeQuery } from '../../lib/search/analyze.js';
import { KeywordPostings, type PostingsResult } from '../../lib/search/keyword-postings.js';
import { keywordSearch } from '../../lib/search/keyword-search.js';
import {
  readTermsRow,
  statsKey,
  termKey,
  type CorpusStats,
  type MessageTermsFields,
  type TermsEntry,
} from '../../lib/store/keyword-terms.js';
import type { MessageRow } from '../../lib/store/rows.js';
import type { EngramDb } from '../../lib/store/schema.js';
import { writeTransaction } from '../../lib/store/write.js';
import { newId } from '../../lib/util/id.js';
import { rng } from '../helpers.js';

const dbs: EngramDb[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

/** A seeded corpus: Zipf-like over `vocabulary` words (`w0` most common), fields from small sets. */
function corpus(seed: number, size: number, vocabulary: number): MessageRow[] {
  const random = rng(seed);
  const weights = Array.from({ length: vocabulary }, (_, i) => 1 / (i + 1));
  const sum = weights.reduce((a, b) => a + b, 0);
  const word = (): string => {
    let x = random() * sum;
    for (let i = 0; i < vocabulary; i++) if ((x -= weights[i]!) <= 0) return `w${i}`;
    return 'w0';
  };
  return Array.from({ length: size }, (_, i) => ({
    id: newId(),
    threadId: `t${Math.floor(random() * 6)}`,
    role: random() < 0.5 ? 'user' : 'assistant',
    ...(random() < 0.7 ? { userId: `u${Math.floor(random() * 3)}` } : {}),
    // Some messages have only stopwords: counted in the statistics, no terms row.
    content: random() < 0.03 ? 'the and of' : Array.from({ length: 3 + Math.floor(random() * 12) }, word).join(' '),
    createdAt: i,
    position: i,
    hash: String(i),
    inContext: 1,
  }));
}

async function storeOf(rows: MessageRow[]): Promise<EngramDb> {
  const { db } = await openStore(`postings-${Math.random()}`);
  dbs.push(db);
  await writeTransaction(
    db,
    () => 1,
    analyzeDocument,
    async () => ({
      changes: rows.map((after) => ({ table: 'messages', op: 'add', id: after.id, after })),
      result: null,
    }),
  );
  return db;
}

/** The postings of every message terms row, with the stored statistics. */
async function postingsOf(db: EngramDb): Promise<KeywordPostings> {
  const postings = new KeywordPostings();
  for (const row of await db.terms.toArray()) postings.upsert(readTermsRow(row));
  postings.stats = (await db.meta.get(statsKey('m')))!.value as CorpusStats;
  return postings;
}

const keysOf = (query: string): string[] => analyzeQuery(query).map((t) => termKey('m', t));

function queries(seed: number, count: number, vocabulary: number): string[] {
  const random = rng(seed);
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(random() * 4) }, () => `w${Math.floor(random() ** 2 * vocabulary)}`).join(' '),
  );
}

/** Same ids in the same order, same scores (to rounding), same total. */
function expectSameRanking(
  memory: PostingsResult,
  stored: { hits: { id: string; score: number }[]; total: number },
  depth: number,
): void {
  expect(memory.total).toBe(stored.total);
  const want = stored.hits.slice(0, depth);
  expect(memory.hits.map((h) => h.id)).toEqual(want.map((h) => h.id));
  memory.hits.forEach((h, i) => {
    expect(h.score).toBeCloseTo(want[i]!.score, 9);
  });
}

describe('KeywordPostings', () => {
  it('search() ranks like keywordSearch() over the same terms rows, unscoped and scoped, on two corpora', async () => {
    for (const [seed, vocabulary] of [
      [1, 2000],
      [2, 60],
    ] as const) {
      const db = await storeOf(corpus(seed, 1500, vocabulary));
      const postings = await postingsOf(db);
      const rows = await db.terms.toArray();
      const scopes: { accept: (id: string, f: MessageTermsFields) => boolean; filter: (e: TermsEntry) => boolean }[] = [
        { accept: (_, f) => f.userId === 'u1', filter: (e) => e.userId === 'u1' },
        {
          accept: (_, f) => f.threadId === 't2' && f.role === 'user',
          filter: (e) => e.threadId === 't2' && e.role === 'user',
        },
      ];
      for (const q of queries(seed + 10, 40, vocabulary)) {
        for (const depth of [10, 40]) {
          expectSameRanking(
            postings.search(keysOf(q), { depth }),
            await keywordSearch(rows, db.meta, 'm', q, { depth }),
            depth,
          );
        }
        for (const scope of scopes) {
          expectSameRanking(
            postings.search(keysOf(q), { depth: 10, accept: scope.accept }),
            await keywordSearch(rows, db.meta, 'm', q, { filter: scope.filter }),
            10,
          );
        }
      }
    }
  });

  it('search() with prune returns exactly the unpruned hits, scoped or not, and scores fewer documents on a small vocabulary', async () => {
    let prunedAway = 0;
    for (const [seed, vocabulary] of [
      [6, 2000],
      [7, 60],
      [8, 12],
    ] as const) {
      const postings = await postingsOf(await storeOf(corpus(seed, 2500, vocabulary)));
      const accepts = [
        undefined,
        (_: string, f: MessageTermsFields) => f.userId === 'u1',
        (_: string, f: MessageTermsFields) => f.threadId === 't2',
      ];
      // Longer queries too: more terms, more chances to prune.
      const all = [
        ...queries(seed + 20, 40, vocabulary),
        ...queries(seed + 30, 20, vocabulary).map((q, i) => `${q} w0 w1 w${i % vocabulary}`),
      ];
      for (const q of all) {
        for (const depth of [1, 10, 40]) {
          for (const accept of accepts) {
            const options = { depth, ...(accept === undefined ? {} : { accept }) };
            const full = postings.search(keysOf(q), options);
            const pruned = postings.search(keysOf(q), { ...options, prune: true });
            expect(pruned.hits, `${q} @${depth}`).toEqual(full.hits);
            expect(pruned.bound).toBe(full.bound);
            expect(pruned.total).toBeLessThanOrEqual(full.total);
            prunedAway += full.total - pruned.total;
          }
        }
      }
    }
    // The pruning did happen somewhere (common words after rare ones).
    expect(prunedAway).toBeGreaterThan(0);
  });

  it('search() still ranks like keywordSearch() after documents are replaced and removed (with compaction)', async () => {
    const rows = corpus(3, 3000, 300);
    const db = await storeOf(rows);
    const postings = await postingsOf(db);
    const random = rng(4);
    // Rewrite a third and delete a half of the rest: enough removals to trigger a compaction.
    const changed = rows
      .filter(() => random() < 0.33)
      .map((r) => ({ ...r, content: `${r.content} w1 w299`, userId: 'u9' }));
    const changedIds = new Set(changed.map((r) => r.id));
    const deleted = rows.filter((r) => !changedIds.has(r.id) && random() < 0.5);
    await writeTransaction(
      db,
      () => 2,
      analyzeDocument,
      async () => ({
        changes: [
          ...changed.map((after) => ({
            table: 'messages' as const,
            op: 'update' as const,
            id: after.id,
            before: rows.find((r) => r.id === after.id)!,
            after,
          })),
          ...deleted.map((before) => ({ table: 'messages' as const, op: 'delete' as const, id: before.id, before })),
        ],
        result: null,
      }),
    );
    for (const r of changed) {
      const row = await db.terms.get(['m', r.id]);
      if (row === undefined) postings.remove(r.id);
      else postings.upsert(readTermsRow(row));
    }
    for (const r of deleted) postings.remove(r.id);
    postings.stats = (await db.meta.get(statsKey('m')))!.value as CorpusStats;
    expect(postings.size).toBe(await db.terms.count());
    const stored = await db.terms.toArray();
    expect(postings.documentFrequency(termKey('m', 'w299'))).toBe(
      stored.filter((row) => row.k.includes(termKey('m', 'w299'))).length,
    );
    for (const q of [...queries(5, 30, 300), 'w1 w299', 'w299']) {
      expectSameRanking(
        postings.search(keysOf(q), { depth: 20 }),
        await keywordSearch(stored, db.meta, 'm', q, { depth: 20 }),
        20,
      );
      expectSameRanking(
        postings.search(keysOf(q), { depth: 20, accept: (_, f) => f.userId === 'u9' }),
        await keywordSearch(stored, db.meta, 'm', q, { filter: (e) => e.userId === 'u9' }),
        20,
      );
    }
  });

  it('snapshot() and restore() round-trip: the same documents, statistics and rankings', async () => {
    const db = await storeOf(corpus(6, 800, 150));
    const postings = await postingsOf(db);
    for (const row of (await db.terms.toArray()).slice(0, 100)) postings.remove(row.d);
    const restored = KeywordPostings.restore(structuredClone(postings.snapshot()));
    expect(restored.size).toBe(postings.size);
    expect(restored.stats).toEqual(postings.stats);
    for (const q of queries(7, 30, 150)) {
      expect(restored.search(keysOf(q), { depth: 15 })).toEqual(postings.search(keysOf(q), { depth: 15 }));
      const accept = (_: string, f: MessageTermsFields): boolean => f.role === 'assistant';
      expect(restored.search(keysOf(q), { accept })).toEqual(postings.search(keysOf(q), { accept }));
    }
    // Documents added after a restore land in the restored lists.
    restored.upsert({ corpus: 'm', docId: 'late', keys: [termKey('m', 'w149')], counts: [3], length: 3 });
    expect(restored.search([termKey('m', 'w149')], { depth: 1 }).hits[0]?.id).toBe('late');
  });

  it('search() asks the filter once per document and counts every match in total', () => {
    const postings = new KeywordPostings();
    postings.stats = { docs: 3, length: 6 };
    postings.upsert({ corpus: 'm', docId: 'a', keys: ['m:x', 'm:y'], counts: [1, 1], length: 2, userId: 'u1' });
    postings.upsert({ corpus: 'm', docId: 'b', keys: ['m:x'], counts: [2], length: 2, userId: 'u2' });
    postings.upsert({ corpus: 'm', docId: 'c', keys: ['m:y'], counts: [1], length: 2, userId: 'u1' });
    const asked: string[] = [];
    const result = postings.search(['m:x', 'm:y'], {
      depth: 1,
      accept: (id, f) => {
        asked.push(id);
        return f.userId === 'u1';
      },
    });
    expect(asked.sort()).toEqual(['a', 'b', 'c']);
    expect(result.total).toBe(2);
    expect(result.hits.map((h) => h.id)).toEqual(['a']);
    // An upsert replaces the earlier version of a document.
    postings.upsert({ corpus: 'm', docId: 'a', keys: ['m:z'], counts: [1], length: 1 });
    expect(postings.documentFrequency('m:x')).toBe(1);
    expect(postings.search(['m:z']).hits.map((h) => h.id)).toEqual(['a']);
  });

  it('restore() rejects a malformed snapshot with IndexError', () => {
    const snapshot = new KeywordPostings().snapshot();
    expect(() => KeywordPostings.restore({ ...snapshot, offsets: new Int32Array(3) })).toThrow(IndexError);
    expect(() => KeywordPostings.restore({ ...snapshot, ids: ['x'] })).toThrow(IndexError);
  });
});
