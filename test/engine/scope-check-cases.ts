/**
 * A restored scope table is compared with the store, value by value (issue 23): a well-formed table
 * with two users' values swapped is found after open, reported and rebuilt. Shared by the Node
 * (fake-indexeddb) and Chromium (real IndexedDB) tests.
 */
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { scopesMatchStore } from '../../lib/engine/vectors/scope-check.js';
import { ScopeTable, type ScopeColumns } from '../../lib/engine/vectors/scope-table.js';
import { Engram } from '../../lib/index.js';
import type { MemoryRow } from '../../lib/store/rows.js';
import { EngramDb } from '../../lib/store/schema.js';
import { waitUntil } from '../helpers.js';

const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 64 });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;

async function tamper(name: string, change: (db: EngramDb) => Promise<unknown>): Promise<void> {
  const db = new EngramDb(name);
  await db.open();
  try {
    await change(db);
  } finally {
    db.close();
  }
}

/** A closed store with four memories of ana and four of bo (its index snapshot saved on close). */
async function anaAndBo(): Promise<string> {
  const name = unique('scopes');
  const a = await Engram.open({ name, embedder: embedder() });
  for (let i = 0; i < 4; i++) {
    await a.add(`ana note ${i} about gardening topic${i}`, { userId: 'ana', agentId: 'helper' });
    await a.add(`bo note ${i} about sailing topic${i}`, { userId: 'bo', agentId: 'helper' });
  }
  await a.close();
  return name;
}

/** Defines the tests, titled for where they run. */
export function scopeCheckTests(where: string): void {
  describe(`scopesMatchStore() (${where})`, () => {
    it('scopesMatchStore() holds for the store’s own table and fails for a swapped, a missing or an added value', async () => {
      const name = await anaAndBo();
      await tamper(name, async (db) => {
        const rows = (await db.memories.toArray()).filter((m) => m.deletedAt === undefined);
        const table = (edit: (row: MemoryRow) => MemoryRow): ScopeTable => {
          const t = new ScopeTable();
          for (const row of rows) t.set(edit(row));
          return t;
        };
        const first = rows[0]!.id;
        expect(
          await scopesMatchStore(
            db,
            table((r) => r),
          ),
        ).toBe(true);
        expect(
          await scopesMatchStore(
            db,
            table((r) => ({ ...r, userId: r.userId === 'ana' ? 'bo' : 'ana' })),
          ),
        ).toBe(false);
        expect(
          await scopesMatchStore(
            db,
            table((r) => (r.id === first ? { ...r, userId: 'bo' } : r)),
          ),
        ).toBe(false);
        expect(
          await scopesMatchStore(
            db,
            table((r) => (r.id === first ? { ...r, runId: 'run-1' } : r)),
          ),
        ).toBe(false);
        const withoutUser: MemoryRow = { ...rows[0]! };
        delete withoutUser.userId;
        expect(
          await scopesMatchStore(
            db,
            table((r) => (r.id === first ? withoutUser : r)),
          ),
        ).toBe(false);
        // Ids the store holds beyond the table (not indexed) do not matter.
        const fewer = table((r) => r);
        fewer.delete(first);
        expect(await scopesMatchStore(db, fewer)).toBe(true);
      });
    });
  });

  describe(`a restored scope table is compared with the store (${where})`, () => {
    it('open() of a snapshot whose scope table swaps two users’ values finds it after open, reports it and rebuilds: each user’s scoped search finds their memories', async () => {
      const name = await anaAndBo();
      await tamper(name, async (db) => {
        const record = (await db.meta.get('indexSnapshot'))!.value as { scopeColumns: ScopeColumns };
        const strings = record.scopeColumns.strings.map((s) => (s === 'ana' ? 'bo' : s === 'bo' ? 'ana' : s));
        await db.meta.put({
          key: 'indexSnapshot',
          value: { ...record, scopeColumns: { ...record.scopeColumns, strings } },
        });
      });
      const damaged: string[] = [];
      const b = await Engram.open({
        name,
        embedder: embedder(),
        onProgress: (p) => {
          if (p.phase === 'damaged' && p.damaged !== undefined) damaged.push(`${p.damaged.key}: ${p.damaged.reason}`);
        },
      });
      try {
        // Well formed, and every count agrees: the snapshot is taken, then checked value by value.
        expect((await b.ready()).index).toBe('snapshot');
        const anaFinds = async (): Promise<string[]> =>
          (await b.search('note about gardening', { userId: 'ana', mode: 'vector', limit: 10 })).results
            .map((r) => r.memory)
            .sort();
        expect(await waitUntil(async () => (await anaFinds()).length === 4)).toBe(true);
        expect(await anaFinds()).toEqual([0, 1, 2, 3].map((i) => `ana note ${i} about gardening topic${i}`));
        const boFinds = (await b.search('note about sailing', { userId: 'bo', mode: 'vector', limit: 10 })).results.map(
          (r) => r.memory,
        );
        expect(boFinds.sort()).toEqual([0, 1, 2, 3].map((i) => `bo note ${i} about sailing topic${i}`));
        expect(damaged).toEqual([
          'indexSnapshot: the index snapshot’s scope table does not match the store; the index is rebuilt',
        ]);
      } finally {
        await b.close();
      }
    });
  });
}
