/**
 * The reads of a memory search: where the change log stands (`LogHead`: its last position, its
 * floor, the store generation, the recorded embedder) and the memories the ranking returns. The search needs both for
 * every query; beside the ranking itself they were most of a vector search's time over the bare
 * index (bench/peers), so each costs as little as the store allows: one read-only IndexedDB
 * transaction over `changes`, `meta` and `memories`, asked after the ranking, the head's four
 * requests beside the rows' (one round trip, a consistent view of both), straight on Dexie's
 * connection: Dexie's explicit transactions cost their zone bookkeeping on every microtask of the
 * page while they run, and a round trip more (they resolve at the commit).
 * - a plain store's rows are stored as they are read;
 * - a store encrypted at rest stores sealed rows, opened here by the row-sealing middleware's own
 *   code (RowSealing.openStored: the same checks, a row that does not open reported the same way).
 *   Only a row another instance wrote since this one last read the freshness journal cannot be
 *   opened here (the journal is read first, inside a transaction of the middleware): then the whole
 *   read is made again through Dexie, the head first, then the rows. An encrypted store read them
 *   through Dexie always before, the head in a transaction of its own: that cost an encrypted
 *   search most of what it cost over a plain one (bench/at-rest).
 * Either way the rows are read at the head or after it (never before), so a ranking from indexes
 * at or past the head reflects everything the returned rows do.
 */
import { ClosedError } from '../errors.js';
import { LOG_FLOOR_KEY, logPositionOf, readLogHead, type LogHead } from './change-log.js';
import { EMBEDDER_KEY, embedderRecordOf } from './embedder-record.js';
import { GENERATION_KEY, generationOf } from './generation.js';
import type { MemoryRow } from './rows.js';
import type { EngramDb } from './schema.js';

/** The log head and the memories asked for (undefined where none is stored), in the order asked. */
export interface HeadWithRows {
  head: LogHead;
  rows: (MemoryRow | undefined)[];
}

/**
 * Starts a search's reads: the function returned reads the log head and the memories `ids` (none:
 * the head alone) and returns them together. Call it once, after the ranking.
 * @example
 * const read = startHeadWithRows(db);
 * const { head, rows } = await read(['m1', 'm2']); // after the ranking
 */
export function startHeadWithRows(db: EngramDb): (ids: readonly string[]) => Promise<HeadWithRows> {
  return (ids) => readHeadWithRows(db, ids);
}

/** The stored `meta` values the head reads, in this order. */
const HEAD_KEYS = [LOG_FLOOR_KEY, GENERATION_KEY, EMBEDDER_KEY] as const;

/** What one read-only transaction found, as stored: the log's last key, the head's `meta` rows, the memories. */
interface Stored {
  ids: readonly string[];
  last: number;
  meta: unknown[];
  rows: unknown[];
}

/**
 * The memories `ids` (undefined where none is stored), in the order asked, in one read-only
 * IndexedDB transaction below Dexie, opened as the head's rows are: the rows a search reads once
 * its order is known, beyond those read with the head.
 * @example
 * const rows = await readMemories(db, ['m3', 'm4']);
 */
export async function readMemories(db: EngramDb, ids: readonly string[]): Promise<(MemoryRow | undefined)[]> {
  if (ids.length === 0) return [];
  const { rows } = await readStored(db, ids, false);
  const { sealing } = db;
  if (sealing === undefined) return rows as (MemoryRow | undefined)[];
  if (rows.some((row) => sealing.behindStored('memories', row))) return db.memories.bulkGet([...ids]);
  return rows.map((row, i) => sealing.openStored('memories', row, ids[i]) as MemoryRow | undefined);
}

/** The head and the rows in one IndexedDB transaction (see the file's head). */
async function readHeadWithRows(db: EngramDb, ids: readonly string[]): Promise<HeadWithRows> {
  const stored = await readStored(db, ids, true);
  const { sealing } = db;
  if (sealing === undefined) return headWithRows(stored, (_table, row) => row);
  // Asked of every row before any is opened: a row that does not open is reported once, by one path.
  const behind =
    stored.meta.some((row) => sealing.behindStored('meta', row)) ||
    stored.rows.some((row) => sealing.behindStored('memories', row));
  if (behind) return readThroughDexie(db, ids);
  return headWithRows(stored, (table, row, key) => sealing.openStored(table, row, key));
}

/** The head and the rows of `stored`, each stored row through `open` (its table, the row, its key). */
function headWithRows(
  stored: Stored,
  open: (table: 'meta' | 'memories', row: unknown, key: string) => unknown,
): HeadWithRows {
  const [floor, generation, embedder] = HEAD_KEYS.map(
    (key, i) => (open('meta', stored.meta[i], key) as { value?: unknown } | undefined)?.value,
  );
  const rows = stored.rows.map((row, i) => open('memories', row, stored.ids[i]!) as MemoryRow | undefined);
  const head: LogHead = {
    last: stored.last,
    floor: logPositionOf(floor) ?? 0,
    generation: generationOf(generation),
    embedderId: embedderRecordOf(embedder)?.id,
  };
  return { head, rows };
}

/** The head, then the rows, through Dexie (and so through the row-sealing middleware, which reads the journal first). */
async function readThroughDexie(db: EngramDb, ids: readonly string[]): Promise<HeadWithRows> {
  const head = await readLogHead(db);
  return { head, rows: ids.length === 0 ? [] : await db.memories.bulkGet([...ids]) };
}

/**
 * The memories `ids` and (`withHead`) the log's last key and the head's `meta` rows, as stored, in
 * one read-only transaction.
 */
function readStored(db: EngramDb, ids: readonly string[], withHead: boolean): Promise<Stored> {
  const idb = db.backendDB() as IDBDatabase | null;
  // Dexie let go of its connection (closed, or another instance deleted or upgraded the store).
  if (idb === null) return Promise.reject(new ClosedError());
  return new Promise<Stored>((resolve, reject) => {
    const tables = withHead ? ['changes', 'meta'] : [];
    const tx = idb.transaction(ids.length === 0 ? tables : [...tables, 'memories'], 'readonly');
    // A failed request aborts the transaction (its error bubbles there).
    tx.onabort = () => {
      reject(tx.error ?? new DOMException('the read transaction was aborted', 'AbortError'));
    };
    const stored: Stored = {
      ids,
      last: 0,
      meta: new Array<unknown>(HEAD_KEYS.length),
      rows: new Array<unknown>(ids.length),
    };
    let waiting = (withHead ? 1 + HEAD_KEYS.length : 0) + ids.length;
    const arrived = (): void => {
      if (--waiting === 0) resolve(stored);
    };
    if (withHead) readHead(tx, stored, arrived);
    if (ids.length === 0) return;
    const memories = tx.objectStore('memories');
    ids.forEach((id, i) => {
      const row = memories.get(id);
      row.onsuccess = () => {
        stored.rows[i] = row.result;
        arrived();
      };
    });
  });
}

/** Asks `tx` for the log's last key and the head's `meta` rows into `stored`, calling `arrived` as each comes. */
function readHead(tx: IDBTransaction, stored: Stored, arrived: () => void): void {
  const lastKey = tx.objectStore('changes').openKeyCursor(null, 'prev');
  lastKey.onsuccess = () => {
    const key = lastKey.result?.primaryKey;
    if (typeof key === 'number') stored.last = key;
    arrived();
  };
  const meta = tx.objectStore('meta');
  HEAD_KEYS.forEach((key, i) => {
    const row = meta.get(key);
    row.onsuccess = () => {
      stored.meta[i] = row.result;
      arrived();
    };
  });
}
