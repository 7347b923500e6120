import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../lib/engine/open-store.js';
import { keywordSearch } from '../../lib/search/keyword-search.js';
import type { MessageRow } from '../../lib/store/rows.js';
import type { EngramDb } from '../../lib/store/schema.js';
import { analyzeDocument as termFrequencies } from '../../lib/search/analyze.js';
import { writeTransaction } from '../../lib/store/write.js';
import { newId } from '../../lib/util/id.js';
import { rng } from '../helpers.js';

let db: EngramDb;
const random = rng(99);
// A Zipf-like vocabulary: word i appears with weight 1 / (i + 1), so a few words are very common.
const vocab = Array.from({ length: 400 }, (_, i) => `w${i}`);
const weights = vocab.map((_, i) => 1 / (i + 1));
const sum = weights.reduce((a, b) => a + b, 0);
function word(): string {
  let x = random() * sum;
  for (let i = 0; i < vocab.length; i++) if ((x -= weights[i]!) <= 0) return vocab[i]!;
  return vocab[0]!;
}

beforeAll(async () => {
  ({ db } = await openStore(`kw-${Math.random()}`));
  const rows: MessageRow[] = Array.from({ length: 3000 }, (_, i) => ({
    id: newId(),
    threadId: `t${i % 7}`,
    role: 'user',
    content: Array.from({ length: 5 + Math.floor(random() * 10) }, word).join(' '),
    createdAt: i,
    position: i,
    hash: String(i),
    inContext: 1,
  }));
  await writeTransaction(
    db,
    () => 1,
    termFrequencies,
    async () => ({
      changes: rows.map((after) => ({ table: 'messages', op: 'add', id: after.id, after })),
      result: null,
    }),
  );
});
afterAll(() => {
  db.close();
});

describe('keywordSearch', () => {
  it('keywordSearch() with a depth gives the same top hits and total as a full read', async () => {
    const queries = ['w0 w250', 'w1 w2 w399', 'w0 w1', 'w120', 'w3 w0 w77 w5', 'w0'];
    for (const q of queries) {
      const full = await keywordSearch(db.terms, db.meta, 'm', q);
      for (const depth of [1, 10, 25]) {
        const pruned = await keywordSearch(db.terms, db.meta, 'm', q, { depth });
        expect(pruned.total).toBe(full.total);
        expect(pruned.hits.slice(0, depth).map((h) => h.id)).toEqual(full.hits.slice(0, depth).map((h) => h.id));
        pruned.hits.slice(0, depth).forEach((h, i) => {
          expect(h.score).toBeCloseTo(full.hits[i]!.score, 9);
        });
      }
    }
  });

  it('keywordSearch() applies a filter to every hit and to the total', async () => {
    const all = await keywordSearch(db.terms, db.meta, 'm', 'w0 w9');
    const t3 = await keywordSearch(db.terms, db.meta, 'm', 'w0 w9', { filter: (p) => p.threadId === 't3', depth: 5 });
    const rows = await db.messages.bulkGet(all.hits.map((h) => h.id));
    expect(t3.total).toBe(rows.filter((r) => r?.threadId === 't3').length);
    expect(t3.hits.map((h) => h.id)).toEqual(all.hits.filter((_, i) => rows[i]?.threadId === 't3').map((h) => h.id));
  });
});
