/**
 * The schema v5 upgrade (indexes dropped, rows unchanged), shared by the Node (fake-indexeddb) and
 * Chromium (real IndexedDB) tests: a store written by engram is copied row for row, keys and all,
 * into a database of the v4 layout, and opening that copy upgrades it. Plain and encrypted stores.
 */
import { Dexie } from 'dexie';
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram, type EngramOptions, type MemoryHistoryEntry } from '../../lib/index.js';
import { BLOCKS_TABLE, EngramDb } from '../../lib/store/schema.js';
import { V4_STORES } from './old-schemas.js';

const WORDS = ['zebra', 'quartz', 'violin', 'harbor', 'lantern', 'meadow', 'cobalt', 'glacier'];
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
const PASS = { passphrase: 'correct horse battery', kdfIterations: 1000 };

/** Copies every stored row of `from` (as stored: sealed rows stay sealed) into a new database `to` of the v4 layout. */
async function copyIntoV4(from: string, to: string, keep: (table: string, key: unknown) => boolean): Promise<void> {
  const source = new EngramDb(from);
  await source.open();
  const old = new Dexie(to);
  old.version(4).stores(V4_STORES);
  await old.open();
  try {
    for (const table of source.tables) {
      const keys = (await table.toCollection().primaryKeys()) as (string | number)[];
      const rows = (await table.toArray()) as unknown[];
      const kept = keys.flatMap((key, i) => (keep(table.name, key) ? [i] : []));
      if (kept.length === 0) continue;
      const target = old.table(table.name);
      if (table.name === BLOCKS_TABLE)
        await target.bulkPut(
          kept.map((i) => rows[i]),
          kept.map((i) => keys[i]!),
        );
      else await target.bulkPut(kept.map((i) => rows[i]));
    }
  } finally {
    source.close();
    old.close();
  }
}

/** A store with live, updated and deleted memories; what a reader should find in it. */
async function writeSource(options: Partial<EngramOptions>): Promise<{
  ids: Map<string, string>;
  updated: string;
  deleted: string;
  history: Map<string, MemoryHistoryEntry[]>;
}> {
  const engram = await Engram.open({ name: 'unused', embedder: new HashEmbedder({ dimensions: 32 }), ...options });
  try {
    const ids = new Map<string, string>();
    for (const [i, word] of WORDS.entries()) {
      const { results } = await engram.add(`note ${i}: the ${word} was seen on day ${i}`, { userId: 'ana' });
      ids.set(word, results[0]!.id);
    }
    const updated = ids.get('violin')!;
    await engram.update(updated, 'note 2: the violin was tuned on day 9');
    const deleted = ids.get('harbor')!;
    await engram.delete(deleted);
    ids.delete('harbor');
    await engram.flush();
    const history = new Map<string, MemoryHistoryEntry[]>();
    for (const id of [...ids.values(), deleted]) history.set(id, await engram.history(id));
    return { ids, updated, deleted, history };
  } finally {
    await engram.close();
  }
}

/** The upgraded store's raw layout: its Dexie version and the indexes of memories and terms. */
async function layoutOf(name: string): Promise<{ version: number; memories: string[]; terms: string[] }> {
  const db = new EngramDb(name);
  await db.open();
  try {
    return {
      version: db.verno,
      memories: db.memories.schema.indexes.map((i) => i.name),
      terms: db.terms.schema.indexes.map((i) => i.name),
    };
  } finally {
    db.close();
  }
}

export function schemaUpgradeTests(where: string): void {
  describe(`schema v5 upgrade (${where})`, () => {
    for (const encrypted of [false, true]) {
      it(`a v4 ${encrypted ? 'encrypted' : 'plain'} store opens upgraded: unused indexes gone, every memory found by vector and keyword search, history intact, new adds searchable`, async () => {
        const from = unique('v4-source');
        const to = unique('v4-copy');
        const options: Partial<EngramOptions> = {
          name: from,
          ...(encrypted ? { encryption: PASS } : {}),
        };
        const source = await writeSource(options);
        // A plain copy leaves the index snapshots behind, so both indexes are rebuilt from the upgraded rows;
        // an encrypted one is copied whole (its ledger knows every row).
        await copyIntoV4(
          from,
          to,
          (table, key) => encrypted || table !== 'meta' || !/^(index|keyword)Snapshot/.test(String(key)),
        );
        const before = new Dexie(to);
        await before.open(); // no schema given: opens as it is stored
        expect(before.verno).toBe(4);
        expect(before.table('terms').schema.indexes.map((i) => i.name)).toEqual(['k']);
        before.close();
        const engram = await Engram.open({ ...options, name: to, embedder: new HashEmbedder({ dimensions: 32 }) });
        try {
          for (const [word, id] of source.ids) {
            for (const mode of ['vector', 'keyword', 'hybrid'] as const) {
              const query = mode === 'keyword' ? word : (await engram.get(id))!.memory;
              const { results } = await engram.search(query, { mode, userId: 'ana', limit: 3 });
              expect(results[0]?.id, `${word} by ${mode}`).toBe(id);
            }
          }
          expect((await engram.search('harbor', { mode: 'keyword', userId: 'ana' })).results).toEqual([]);
          expect((await engram.getAll({ userId: 'ana' })).total).toBe(source.ids.size);
          for (const [id, entries] of source.history) expect(await engram.history(id)).toEqual(entries);
          expect((await engram.history(source.updated)).map((e) => e.op)).toEqual(['ADD', 'UPDATE']);
          const { results } = await engram.add('the saffron kite flew on day 10', { userId: 'ana' });
          const found = await engram.search('saffron', { mode: 'keyword', userId: 'ana' });
          expect(found.results.map((r) => r.id)).toEqual([results[0]!.id]);
        } finally {
          await engram.close();
        }
        const layout = await layoutOf(to);
        expect(layout.version).toBe(5);
        expect(layout.terms).toEqual([]);
        expect(layout.memories).not.toContain('createdAt');
        expect(layout.memories).not.toContain('updatedAt');
        expect(layout.memories).toContain('hash');
        await Promise.all([Dexie.delete(from), Dexie.delete(to)]);
      });
    }
  });
}
