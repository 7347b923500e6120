/**
 * Writing a checked import file into the store, in one transaction through the
 * one write path: `replace` empties the store first; `merge` keeps what is there
 * and takes an imported record where it is new or newer. The steps, in order:
 * the embedder (replace: the file's; merge: the same as the store's, or the
 * file's into a store without live memories), then the row changes of messages,
 * memories, blocks and traces, then the history the file brings.
 */
import { ImportError, throwIfAborted } from '../../errors.js';
import type { Table } from 'dexie';
import type { BlockRow, HistoryRow, MemoryRow } from '../../store/rows.js';
import { textFreeHistory } from '../../store/forgetting.js';
import { creationsOf } from '../../store/history-rows.js';
import { bumpGeneration } from '../../store/generation.js';
import { SCOPE_FIELDS } from '../../store/scope.js';
import { deleteSnapshot } from '../../store/snapshot-chunks.js';
import { BLOCKS_TABLE, type EngramDb } from '../../store/schema.js';
import type { RowChange } from '../../store/write.js';
import { blockKey } from '../../store/block-key.js';
import { ImportDuplicates } from './import-duplicates.js';
import type { Parsed, TransferOptions } from './transfer.js';
import type { EngineStore } from '../engine-store.js';
import type { EmbedderRecord } from '../vectors/semantic-index.js';

/** How an import meets what the store already holds. */
export type ImportMode = 'merge' | 'replace';

/** The store's rows an import changes: the row changes, and the rows it overwrites (logged in history like any update). */
interface Planned {
  changes: RowChange[];
  overwritten: HistoryRow[];
}

/** The memories' part of the plan, and what the history written after it must know. */
interface PlannedMemories extends Planned {
  /** When the import writes (the `at` of the history entries it logs). */
  at: number;
  /** Memories deleted once the import is written: their history keeps no text (forgetting.ts). */
  deletedMemories: Set<string>;
  /** Memories not stored, as duplicates of standing ones: their history is not brought either. */
  skipped: Set<string>;
}

/**
 * Writes a parsed file in one transaction. `replace` empties the store first;
 * `merge` keeps what is there and takes an imported record where it is new or
 * newer (memories and blocks by version, messages and traces when absent).
 */
export async function importParsed(
  core: EngineStore,
  parsed: Parsed,
  mode: ImportMode,
  options: TransferOptions = {},
): Promise<{ records: number }> {
  const { db } = core;
  const total = recordCount(parsed);
  throwIfAborted(options.signal);
  options.onProgress?.({ phase: 'write', done: 0, total });
  await core.write(async () => {
    if (mode === 'replace') await emptyFor(db, parsed.header.embedder);
    else if (parsed.memories.some((m) => m.vector !== undefined)) await mergeEmbedder(db, parsed.header.embedder);
    const messages = (await absent(db.messages, parsed.messages, mode)).map((after): RowChange => ({
      table: 'messages',
      op: 'add',
      id: after.id,
      after,
    }));
    const memories = await planMemories(core, parsed.memories, mode);
    const blocks = await planBlocks(db, parsed.blocks, mode, memories.at);
    const traces = (await absent(db.traces, parsed.traces, mode)).map((after): RowChange => ({
      table: 'traces',
      op: 'add',
      id: after.id,
      after,
    }));
    await writeHistory(db, parsed.history, mode, memories, [...memories.overwritten, ...blocks.overwritten]);
    return {
      changes: [...messages, ...memories.changes, ...blocks.changes, ...traces],
      result: undefined,
      withoutHistory: true,
    };
  });
  options.onProgress?.({ phase: 'write', done: total, total });
  return { records: total };
}

function recordCount(parsed: Parsed): number {
  const { messages, memories, history, blocks, traces } = parsed;
  return messages.length + memories.length + history.length + blocks.length + traces.length;
}

/** `replace`: every table the file replaces emptied, the indexes' state dropped, and the file's embedder recorded. */
async function emptyFor(db: EngramDb, incoming: EmbedderRecord | null): Promise<void> {
  for (const t of ['messages', 'memories', 'vectors', 'history', BLOCKS_TABLE, 'traces', 'terms'] as const)
    await db.table(t).clear();
  await db.meta.where('key').anyOf(['stats:m', 'stats:v']).delete();
  await deleteSnapshot(db, 'indexSnapshot');
  // Other instances on this store reload their indexes rather than replay onto stale ones.
  await bumpGeneration(db);
  if (incoming === null) await db.meta.delete('embedder');
  else await db.meta.put({ key: 'embedder', value: incoming });
}

/**
 * `merge` of a file with vectors: they must come from the store's embedder while
 * the store holds live memories; a store without any takes the file's.
 */
async function mergeEmbedder(db: EngramDb, incoming: EmbedderRecord | null): Promise<void> {
  if (incoming === null) return;
  const recorded = (await db.meta.get('embedder'))?.value as EmbedderRecord | undefined;
  const live = await db.memories.filter((m) => m.deletedAt === undefined).count();
  if (recorded === undefined || live === 0) {
    await db.meta.put({ key: 'embedder', value: incoming });
    return;
  }
  if (recorded.id !== incoming.id || recorded.dimensions !== incoming.dimensions) {
    throw new ImportError(
      1,
      `the file's vectors come from "${incoming.id}" (${incoming.dimensions}-d) but this store uses "${recorded.id}" (${recorded.dimensions}-d)`,
    );
  }
}

/** The rows whose id the store does not hold (every one on replace): messages and traces are added, never updated. */
async function absent<T extends { id: string }>(
  table: Table<T, string>,
  rows: readonly T[],
  mode: ImportMode,
): Promise<T[]> {
  const existing = mode === 'merge' ? await table.bulkGet(rows.map((r) => r.id)) : [];
  return rows.filter((_, i) => existing[i] === undefined);
}

/** Each imported memory as a change where it is new or newer than the store's and no duplicate of a standing one. */
async function planMemories(
  core: EngineStore,
  memories: Parsed['memories'],
  mode: ImportMode,
): Promise<PlannedMemories> {
  const existing = mode === 'merge' ? await core.db.memories.bulkGet(memories.map((m) => m.row.id)) : [];
  // Merging applies add()'s duplicate rule: a text the store holds in the same scope under another id is not stored twice.
  const duplicates =
    mode === 'merge'
      ? await ImportDuplicates.load(
          core,
          memories.filter((_, i) => existing[i] === undefined).map((m) => m.row),
        )
      : undefined;
  const plan: PlannedMemories = {
    changes: [],
    overwritten: [],
    at: core.now(),
    deletedMemories: new Set(),
    skipped: new Set(),
  };
  for (const [i, memory] of memories.entries()) planMemory(plan, memory, existing[i], duplicates);
  return plan;
}

/** One imported memory against the store's `before` (undefined: not held). */
function planMemory(
  plan: PlannedMemories,
  { row: after, vector, line }: Parsed['memories'][number],
  before: MemoryRow | undefined,
  duplicates: ImportDuplicates | undefined,
): void {
  if (before !== undefined) refuseScopeMove(before, after, line);
  if (before !== undefined && before.version >= after.version) {
    if (before.deletedAt !== undefined) plan.deletedMemories.add(after.id);
    return;
  }
  if (before === undefined && duplicates?.standing(after, vector) !== undefined) {
    plan.skipped.add(after.id);
    return;
  }
  if (after.deletedAt !== undefined) plan.deletedMemories.add(after.id);
  const op = importOp(before, after);
  if (before !== undefined)
    plan.overwritten.push({ table: 'memories', recordId: after.id, op, before, after, at: plan.at });
  plan.changes.push({
    table: 'memories',
    op,
    id: after.id,
    after,
    ...(before === undefined ? {} : { before }),
    ...(vector === undefined ? {} : { vector }),
  });
}

/** What writing imported row `after` over the store's `before` (undefined: not held) is: an add, a deletion or an update. */
function importOp(before: MemoryRow | undefined, after: MemoryRow): 'add' | 'delete' | 'update' {
  // A tombstone over a live memory is a deletion: the write path strips the memory's standing history of its text.
  return before === undefined
    ? 'add'
    : after.deletedAt !== undefined && before.deletedAt === undefined
      ? 'delete'
      : 'update';
}

/** A known id stays in its scope: a file may update a memory, never hand it to another user, agent or run. */
function refuseScopeMove(before: MemoryRow, after: MemoryRow, line: number): void {
  const moved = SCOPE_FIELDS.find((k) => before[k] !== after[k]);
  if (moved === undefined) return;
  throw new ImportError(
    line,
    `memory ${after.id} exists in this store with ${moved} ${JSON.stringify(before[moved] ?? null)}; the file gives ${JSON.stringify(after[moved] ?? null)}, and an import never moves a memory to another scope`,
  );
}

/** Each imported block as a change where it is new or newer (by version) than the store's. */
async function planBlocks(db: EngramDb, blocks: readonly BlockRow[], mode: ImportMode, at: number): Promise<Planned> {
  const ids = blocks.map((b) => blockKey(b.agentId, b.label, b.userId));
  const existing = mode === 'merge' ? await db.blocks.bulkGet(ids) : [];
  const plan: Planned = { changes: [], overwritten: [] };
  blocks.forEach((after, i) => {
    const before = existing[i];
    if (before !== undefined && before.version >= after.version) return;
    const id = ids[i]!;
    if (before !== undefined) plan.overwritten.push({ table: 'blocks', recordId: id, op: 'update', before, after, at });
    plan.changes.push({
      table: 'blocks',
      op: before === undefined ? 'add' : 'update',
      id,
      after,
      ...(before === undefined ? {} : { before }),
    });
  });
  return plan;
}

/**
 * The history the file brings (replace: as it is; merge: the entries the store
 * lacks, with new sequence numbers, and the entries of what the import
 * overwrote). A record deleted in the file or in the store keeps no text in it,
 * as if it had been deleted here: its entries up to its last deletion (a
 * memory's: all of them).
 */
async function writeHistory(
  db: EngramDb,
  history: readonly HistoryRow[],
  mode: ImportMode,
  memories: PlannedMemories,
  overwritten: readonly HistoryRow[],
): Promise<void> {
  const standing = mode === 'replace' ? [] : await db.history.toArray();
  const forgetText = textFreeUpTo([...history, ...standing], memories.deletedMemories);
  if (mode === 'replace') {
    await db.history.bulkPut(history.map(forgetText));
    return;
  }
  const brought = newHistory(history, standing, memories.skipped);
  // An overwritten record created here and never changed since has no entry yet: its add comes first.
  const known = new Set([...standing, ...brought].map((h) => h.recordId));
  const creations = creationsOf(
    overwritten,
    (id) => known.has(id),
    (e) => e.before,
  );
  await db.history.bulkAdd([...creations, ...brought, ...overwritten].map(forgetText));
}

/**
 * The file's history entries the store does not hold (same record, op and time),
 * but those of skipped memories, without their sequence numbers: the file's may
 * collide with this store's.
 */
function newHistory(
  history: readonly HistoryRow[],
  standing: readonly HistoryRow[],
  skipped: ReadonlySet<string>,
): HistoryRow[] {
  const have = new Set(standing.map((h) => `${h.recordId}|${h.op}|${h.at}`));
  return history
    .filter((h) => !have.has(`${h.recordId}|${h.op}|${h.at}`) && !(h.table === 'memories' && skipped.has(h.recordId)))
    .map((h) => ({ table: h.table, recordId: h.recordId, op: h.op, before: h.before, after: h.after, at: h.at }));
}

/**
 * A function that makes a history entry text-free when its record was deleted
 * at or after it: by a 'delete' entry among `entries`, or for good (a memory in
 * `deletedMemories`, whose tombstone is final).
 */
function textFreeUpTo(
  entries: readonly HistoryRow[],
  deletedMemories: ReadonlySet<string>,
): (entry: HistoryRow) => HistoryRow {
  const lastDelete = new Map<string, number>();
  const keyOf = (h: HistoryRow): string => `${h.table}\u0000${h.recordId}`;
  for (const h of entries)
    if (h.op === 'delete') lastDelete.set(keyOf(h), Math.max(lastDelete.get(keyOf(h)) ?? -Infinity, h.at));
  return (entry) => {
    const deleted =
      (entry.table === 'memories' && deletedMemories.has(entry.recordId)) ||
      entry.at <= (lastDelete.get(keyOf(entry)) ?? -Infinity);
    return deleted ? textFreeHistory(entry) : entry;
  };
}
