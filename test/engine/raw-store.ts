// Reading a store's raw tables, for tests that check what a deletion left behind.
import { ALL_TABLES, EngramDb } from '../../lib/store/schema.js';

/** Every row of every table of the store, as text (typed arrays as numbers). */
export async function rawStore(name: string): Promise<Record<string, string>> {
  const db = new EngramDb(name);
  await db.open();
  try {
    const out: Record<string, string> = {};
    for (const table of ALL_TABLES) {
      const rows = await db.table(table).toArray();
      out[table] = JSON.stringify(rows, (_k, v: unknown) =>
        ArrayBuffer.isView(v) ? Array.from(v as Float32Array) : v,
      );
    }
    return out;
  } finally {
    db.close();
  }
}

/** The tables whose text mentions `word` (case-insensitive). */
export function tablesHolding(raw: Record<string, string>, word: string): string[] {
  return Object.entries(raw)
    .filter(([, text]) => text.toLowerCase().includes(word.toLowerCase()))
    .map(([table]) => table);
}
