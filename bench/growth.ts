/**
 * bench/growth: how the store's bookkeeping grows with use. A store over
 * fake-indexeddb (HashEmbedder, 100-d) takes `--adds` memories (default 20k,
 * 500 per add()), then `--updates` edits (default 2k) and `--deletes` deletes
 * (default 2k), with a hybrid search after each phase (so both indexes catch up
 * and snapshot as an app's would), plus `--hot` edits of one memory. After each
 * phase it counts the rows of every table. Goal: the change log and history
 * stay within a small multiple of the live rows (history is bounded per record
 * by `historyLimit`, the log is compacted once its consumers passed it).
 *
 * Run: npx tsx bench/growth.ts [--adds 20000] [--updates 2000] [--deletes 2000] [--hot 200]
 */
import 'fake-indexeddb/auto';
import { Engram, HashEmbedder } from '../lib/index.js';
import { ALL_TABLES, EngramDb } from '../lib/store/schema.js';
import { option } from './util/args.js';
import { printTable, writeResult, type Row } from './util/report.js';

const adds = Number(option('adds') ?? '20000');
const updates = Number(option('updates') ?? '2000');
const deletes = Number(option('deletes') ?? '2000');
const hot = Number(option('hot') ?? '200');

/** Rows per table, and live memories. */
async function sizes(name: string): Promise<Record<string, number>> {
  const db = new EngramDb(name);
  await db.open();
  try {
    const out: Record<string, number> = {};
    for (const table of ALL_TABLES) out[table] = await db.table(table).count();
    out['live'] = await db.memories.filter((m) => m.deletedAt === undefined).count();
    return out;
  } finally {
    db.close();
  }
}

function row(phase: string, s: Record<string, number>): Row {
  return {
    phase,
    'live memories': s['live']!,
    'memory rows': s['memories']!,
    vectors: s['vectors']!,
    terms: s['terms']!,
    history: s['history']!,
    changes: s['changes']!,
    'history / live': (s['history']! / s['live']!).toFixed(2),
    'changes / live': (s['changes']! / s['live']!).toFixed(2),
  };
}

async function main(): Promise<void> {
  const name = `bench-growth-${process.pid}`;
  let clock = Date.UTC(2026, 0, 1);
  const engram = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: 100 }), now: () => (clock += 1) });
  const rows: Row[] = [];
  const ids: string[] = [];
  for (let i = 0; i < adds; i += 500) {
    const batch = Array.from({ length: Math.min(500, adds - i) }, (_, j) => ({
      role: 'user' as const,
      content: `note ${i + j}: item ${((i + j) * 7919) % 100_003} is kept in box ${(i + j) % 97}`,
    }));
    const { results } = await engram.add(batch, { userId: 'bench', infer: false, dedupe: 'off' });
    ids.push(...results.map((r) => r.id));
  }
  await engram.search('item kept in box', { userId: 'bench', limit: 5 });
  rows.push(row(`after ${adds} adds`, await sizes(name)));
  for (let i = 0; i < updates; i++)
    await engram.update(ids[(i * 13) % ids.length]!, `note ${i}: item moved to shelf ${i % 89}`);
  await engram.search('item moved to shelf', { userId: 'bench', limit: 5 });
  rows.push(row(`+ ${updates} updates`, await sizes(name)));
  const doomed = ids.slice(ids.length - deletes);
  for (const id of doomed) await engram.delete(id);
  await engram.search('item kept in box', { userId: 'bench', limit: 5 });
  rows.push(row(`+ ${deletes} deletes`, await sizes(name)));
  const target = ids[0]!;
  for (let i = 0; i < hot; i++) await engram.update(target, `the hot note, version ${i}`);
  const hotHistory = (await engram.history(target)).length;
  await engram.close();
  rows.push(row(`+ ${hot} edits of one memory, closed`, await sizes(name)));
  printTable(`Table sizes (hot memory keeps ${hotHistory} history entries; default historyLimit 20)`, rows);
  writeResult('growth', { adds, updates, deletes, hot, hotHistory, rows });
}

await main();
