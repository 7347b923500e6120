/**
 * The reads of a memory search: where the change log stands (`LogHead`: its last position, its
 * floor, the store generation, the recorded embedder) and the memories the ranking returns. The search needs both for
 * every query; beside the ranking itself they were most of a vector search's time over the bare
 * index (bench/peers), so each costs as little as the store allows:
 * - a plain store: one read-only IndexedDB transaction over `changes`, `meta` and `memories`,
 *   asked after the ranking, the head's four requests beside the rows' (one round trip, a
 *   consistent view of both), straight on Dexie's connection: plain rows are stored as they are
 *   read, and Dexie's explicit transactions cost their zone bookkeeping on every microtask of the
 *   page while they run, and a round trip more (they resolve at the commit);
 * - a store encrypted at rest: every read goes through the row-sealing middleware (which opens and
 *   checks each row), so the head is read at once in its own Dexie transaction (as `readLogHead`)
 *   while the query is embedded, and the rows through `bulkGet` once they are known.
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
 * Starts a search's reads: on an encrypted store the head is read now; the function returned reads
 * the memories `ids` (none: the head alone) and returns them with the head. Call it once.
 * @example
 * const read = startHeadWithRows(db); // before the query is embedded
 * const { head, rows } = await read(['m1', 'm2']); // after the ranking
 */
export function startHeadWithRows(db: EngramDb): (ids: readonly string[]) => Promise<HeadWithRows> {
  if (db.sealing === undefined) return (ids) => readPlain(db, ids);
  const head = readLogHead(db);
  head.catch(() => undefined); // awaited below; a failure surfaces there
  return async (ids) => {
    const rows = ids.length === 0 ? [] : db.memories.bulkGet([...ids]);
    return { head: await head, rows: await rows };
  };
}

/** The head and the rows of a plain store in one IndexedDB transaction, each result as it arrives. */
function readPlain(db: EngramDb, ids: readonly string[]): Promise<HeadWithRows> {
  const idb = db.backendDB() as IDBDatabase | null;
  // Dexie let go of its connection (closed, or another instance deleted or upgraded the store).
  if (idb === null) return Promise.reject(new ClosedError());
  return new Promise<HeadWithRows>((resolve, reject) => {
    const tx = idb.transaction(ids.length === 0 ? ['changes', 'meta'] : ['changes', 'meta', 'memories'], 'readonly');
    // A failed request aborts the transaction (its error bubbles there).
    tx.onabort = () => {
      reject(tx.error ?? new DOMException('the read transaction was aborted', 'AbortError'));
    };
    const rows = new Array<MemoryRow | undefined>(ids.length);
    let last = 0;
    let floor: unknown;
    let generation: unknown;
    let embedder: unknown;
    let waiting = 4 + ids.length;
    const arrived = (): void => {
      if (--waiting > 0) return;
      const head: LogHead = {
        last,
        floor: logPositionOf(floor) ?? 0,
        generation: generationOf(generation),
        embedderId: embedderRecordOf(embedder)?.id,
      };
      resolve({ head, rows });
    };
    const lastKey = tx.objectStore('changes').openKeyCursor(null, 'prev');
    lastKey.onsuccess = () => {
      const key = lastKey.result?.primaryKey;
      if (typeof key === 'number') last = key;
      arrived();
    };
    const meta = tx.objectStore('meta');
    const metaValue = (key: string, got: (value: unknown) => void): void => {
      const row = meta.get(key);
      row.onsuccess = () => {
        got((row.result as { value?: unknown } | undefined)?.value);
        arrived();
      };
    };
    metaValue(LOG_FLOOR_KEY, (value) => (floor = value));
    metaValue(GENERATION_KEY, (value) => (generation = value));
    metaValue(EMBEDDER_KEY, (value) => (embedder = value));
    if (ids.length === 0) return;
    const memories = tx.objectStore('memories');
    ids.forEach((id, i) => {
      const row = memories.get(id);
      row.onsuccess = () => {
        rows[i] = row.result as MemoryRow | undefined;
        arrived();
      };
    });
  });
}
