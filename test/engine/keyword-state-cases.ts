/**
 * Scenarios shared by the Node (fake-indexeddb) and Chromium (real IndexedDB)
 * tests of the in-memory keyword index: random corpora written through the
 * store's one write path, then the in-memory search compared with the
 * IndexedDB keyword search on the same rows.
 */
import { expect } from 'vitest';
import { EngineStore } from '../../lib/engine/engine-store.js';
import type { KeywordResult } from '../../lib/engine/keywords/keyword-state.js';
import { openStore } from '../../lib/engine/open-store.js';
import { keywordSearch } from '../../lib/search/keyword-search.js';
import type { Corpus, TermsEntry } from '../../lib/store/keyword-terms.js';
import type { MessageRow } from '../../lib/store/rows.js';
import type { RowChange } from '../../lib/store/write.js';
import { newId } from '../../lib/util/id.js';
import { rng } from '../helpers.js';

/** A fresh engine store over a new database. */
export async function freshCore(
  name = `kw-state-${Date.now()}-${Math.random().toString(36).slice(2)}`,
): Promise<EngineStore> {
  const { db, deviceId } = await openStore(name);
  return new EngineStore(db, { maxContentBytes: 1_000_000, now: Date.now, deviceId });
}

/** A generator of seeded messages: Zipf-like words `w0…` from `vocabulary`, a few threads, users and roles. */
export function messageMaker(seed: number, vocabulary: number): () => MessageRow {
  const random = rng(seed);
  const weights = Array.from({ length: vocabulary }, (_, i) => 1 / (i + 1));
  const sum = weights.reduce((a, b) => a + b, 0);
  const word = (): string => {
    let x = random() * sum;
    for (let i = 0; i < vocabulary; i++) if ((x -= weights[i]!) <= 0) return `w${i}`;
    return 'w0';
  };
  let position = 0;
  return () => ({
    id: newId(),
    threadId: `t${Math.floor(random() * 5)}`,
    role: random() < 0.5 ? 'user' : 'assistant',
    ...(random() < 0.7 ? { userId: `u${Math.floor(random() * 3)}` } : {}),
    content: random() < 0.03 ? 'the of and' : Array.from({ length: 2 + Math.floor(random() * 12) }, word).join(' '),
    createdAt: position,
    position: position++,
    hash: String(position),
    inContext: 1,
  });
}

/** Writes message rows through the store's write path (one transaction). */
export async function addMessages(core: EngineStore, rows: MessageRow[]): Promise<void> {
  await core.write(async () => ({
    changes: rows.map((after): RowChange => ({ table: 'messages', op: 'add', id: after.id, after })),
    result: null,
  }));
}

/** Rewrites some messages (new words, another user) and deletes others, through the write path. */
export async function churn(core: EngineStore, rows: MessageRow[], seed: number): Promise<MessageRow[]> {
  const random = rng(seed);
  const changes: RowChange[] = [];
  const kept: MessageRow[] = [];
  for (const before of rows) {
    const x = random();
    if (x < 0.15) {
      const after = { ...before, content: `${before.content} w1 w7`, userId: 'u9' };
      changes.push({ table: 'messages', op: 'update', id: before.id, before, after });
      kept.push(after);
    } else if (x < 0.3) {
      changes.push({ table: 'messages', op: 'delete', id: before.id, before });
    } else {
      kept.push(before);
    }
  }
  await core.write(async () => ({ changes, result: null }));
  return kept;
}

/** Seeded queries of one to four words, common words more often. */
export function queries(seed: number, count: number, vocabulary: number): string[] {
  const random = rng(seed);
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(random() * 4) }, () => `w${Math.floor(random() ** 2 * vocabulary)}`).join(' '),
  );
}

/** Filters that scope a message search, as terms-entry predicates. */
export const MESSAGE_SCOPES: ((e: Pick<TermsEntry, 'threadId' | 'userId' | 'role'>) => boolean)[] = [
  (e) => e.userId === 'u1',
  (e) => e.threadId === 't2' && e.role === 'user',
  (e) => e.userId === 'u9',
];

/**
 * Expects `search` (the in-memory index) to return what keywordSearch returns
 * over the store's rows: same top ids in order, same scores and relevance, same total.
 */
export async function expectSameAsStored(
  core: EngineStore,
  corpus: Corpus,
  query: string,
  depth: number,
  search: () => Promise<KeywordResult>,
  filter?: (e: TermsEntry) => boolean,
): Promise<void> {
  const stored = await keywordSearch(core.db.terms, core.db.meta, corpus, query, {
    analyzer: core.analyzer,
    ...(filter === undefined ? { depth } : { filter }),
  });
  const memory = await search();
  expect(memory.total, query).toBe(stored.total);
  const want = stored.hits.slice(0, depth);
  expect(
    memory.hits.map((h) => h.id),
    query,
  ).toEqual(want.map((h) => h.id));
  memory.hits.forEach((h, i) => {
    expect(h.score).toBeCloseTo(want[i]!.score, 9);
    expect(h.relevance).toBeCloseTo(want[i]!.relevance, 9);
  });
}
