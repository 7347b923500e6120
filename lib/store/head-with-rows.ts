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
 *   Opening a row (cipher, additional data, decoding) is most of what an encrypted search costs
 *   over a plain one, so each row is opened as it arrives, while IndexedDB still reads the
 *   transaction's other requests (RowSealing.openStoredQuietly: that cost half the gap to a plain
 *   search, bench/at-rest). Quietly: a row that does not open there is opened again when first
 *   asked for ({@link ReadRows.get}) and reported then, so a damaged one is reported once, by the
 *   read that reaches it, and a read redone through Dexie (below) reports it there.
 *   Only a row another instance wrote since this one last read the freshness journal cannot be
 *   opened here (the journal is read first, inside a transaction of the middleware): then the whole
 *   read is made again through Dexie, the head first, then the rows. An encrypted store read them
 *   through Dexie always before, the head in a transaction of its own: that cost an encrypted
 *   search most of what it cost over a plain one (bench/at-rest).
 * Either way the rows are read at the head or after it (never before), so a ranking from indexes
 * at or past the head reflects everything the returned rows do.
 */
import { ClosedError } from '../errors.js';
import { confirmsLast, LOG_FLOOR_KEY, logBoundsOf, readLogHead, type LogBounds, type LogHead } from './change-log.js';
import { EMBEDDER_KEY, embedderRecordOf } from './embedder-record.js';
import { GENERATION_KEY, generationOf } from './generation.js';
import { NOT_OPENED, type RowSealing } from './row-sealing.js';
import type { MemoryRow } from './rows.js';
import type { EngramDb } from './schema.js';

/** The log head and the memories asked for. */
export interface HeadWithRows {
  head: LogHead;
  rows: ReadRows;
}

/** How a stored memory row is opened: the row as stored and its key; undefined when it does not open (reported). */
type OpenRow = (stored: unknown, key: string) => MemoryRow | undefined;

/** Not opened yet (a row that does not open is undefined, so it needs a mark of its own). */
const UNOPENED = Symbol('unopened');
/** A row of a read: opened (undefined when none is stored or it does not open), or not yet. */
type Opened = MemoryRow | undefined | typeof UNOPENED;

/**
 * The memories a read found, in the order asked (undefined where none is stored or where one
 * does not open), each opened once, when first asked for.
 * @example
 * const { rows } = await read(['m1', 'm2']);
 * rows.get(0)?.text; // m1's row, opened now
 */
export class ReadRows {
  readonly ids: readonly string[];
  readonly #stored: readonly unknown[];
  readonly #open: OpenRow | undefined;
  readonly #opened: Opened[];

  /**
   * `stored`: the rows as read, for `ids`; `open`: how each is opened (none: they are stored as they
   * are read); `opened`: those opened already as they arrived (UNOPENED where not).
   */
  constructor(ids: readonly string[], stored: readonly unknown[], open?: OpenRow, opened?: Opened[]) {
    this.ids = ids;
    this.#stored = stored;
    this.#open = open;
    this.#opened = opened ?? new Array<Opened>(ids.length).fill(UNOPENED);
  }

  /** The row of `ids[i]`, opened now if it was not yet (a row that does not open is reported here, once). */
  get(i: number): MemoryRow | undefined {
    const opened = this.#opened[i];
    if (opened !== UNOPENED) return opened;
    const stored = this.#stored[i];
    const row = this.#open === undefined ? (stored as MemoryRow | undefined) : this.#open(stored, this.ids[i]!);
    this.#opened[i] = row;
    return row;
  }

  /** Every row, in the order asked (each opened). */
  all(): (MemoryRow | undefined)[] {
    return this.ids.map((_, i) => this.get(i));
  }
}

/**
 * Reads a search's log head and the memories `ids` (none: the head alone) together. `expected`:
 * where the caller's indexes stand in the log, the last position they expect (see readHead).
 */
export type ReadHeadWithRows = (ids: readonly string[], expected?: number) => Promise<HeadWithRows>;

/**
 * Starts a search's reads: the function returned reads the log head and the memories `ids` (none:
 * the head alone) and returns them together. Call it once, after the ranking.
 * @example
 * const read = startHeadWithRows(db);
 * const { head, rows } = await read(['m1', 'm2'], index.seq); // after the ranking
 */
export function startHeadWithRows(db: EngramDb): ReadHeadWithRows {
  return (ids, expected) => readHeadWithRows(db, ids, expected);
}

/** The stored `meta` values the head reads, in this order (the log's bounds first: readHead decides on them). */
const HEAD_KEYS = [LOG_FLOOR_KEY, GENERATION_KEY, EMBEDDER_KEY] as const;

/** What one read-only transaction found: the log's last key and floor, the head's `meta` rows as stored, the memories. */
interface Stored {
  ids: readonly string[];
  last: number;
  /** The floor, from the LOG_FLOOR_KEY row as `boundsOf` read it (0 when it could not be read here). */
  floor: number;
  meta: unknown[];
  rows: unknown[];
  /** The rows opened as they arrived (UNOPENED where not: a plain store's, or one left to ReadRows.get). */
  opened: Opened[];
  /** The head's `meta` rows opened as they arrived, the same way. */
  metaOpened: unknown[];
}

/** Opens a stored row of `table` as it arrives (its key), or leaves it UNOPENED. */
type OpenEarly = (table: 'memories' | 'meta', stored: unknown, key: string) => unknown;

/** How the stored LOG_FLOOR_KEY row gives the log's bounds (undefined: it cannot be read here). */
type BoundsOf = (stored: unknown) => LogBounds | undefined;

/** A plain store's LOG_FLOOR_KEY row, as stored. */
const plainBounds: BoundsOf = (stored) => logBoundsOf((stored as { value?: unknown } | undefined)?.value);

/**
 * The memories `ids`, in one read-only IndexedDB transaction below Dexie, opened as the head's
 * rows are: the rows a search reads once its order is known, beyond those read with the head.
 * @example
 * const rows = await readMemories(db, ['m3', 'm4']);
 * rows.get(1); // m4's row
 */
export async function readMemories(db: EngramDb, ids: readonly string[]): Promise<ReadRows> {
  if (ids.length === 0) return new ReadRows(ids, []);
  const { sealing } = db;
  const { rows, opened } = await readStored(db, ids, undefined, sealing && openOnArrival(sealing));
  if (sealing === undefined) return new ReadRows(ids, rows);
  if (rows.some((row) => sealing.behindStored('memories', row)))
    return new ReadRows(ids, await db.memories.bulkGet([...ids]));
  return new ReadRows(ids, rows, openMemory(sealing), opened);
}

/** How `sealing` opens a stored memory row. */
function openMemory(sealing: RowSealing): OpenRow {
  return (stored, key) => sealing.openStored('memories', stored, key) as MemoryRow | undefined;
}

/**
 * How `sealing` opens a memory row as it arrives, while IndexedDB still reads the rest of the
 * transaction's requests (most of an encrypted search's cost over a plain one, bench/at-rest): quietly,
 * so that a row that does not open, or one another instance wrote since the ledger last read the
 * journal, is left to {@link ReadRows.get} (or to the read through Dexie), which reports it once;
 * and a row whose opening throws is left to it the same way.
 */
function openOnArrival(sealing: RowSealing): OpenEarly {
  return (table, stored, key) => {
    if (sealing.behindStored(table, stored)) return UNOPENED;
    const row = sealing.openStoredQuietly(table, stored, key);
    return row === NOT_OPENED ? UNOPENED : row;
  };
}

/** The head and the rows in one IndexedDB transaction (see the file's head). */
async function readHeadWithRows(db: EngramDb, ids: readonly string[], expected?: number): Promise<HeadWithRows> {
  const { sealing } = db;
  const boundsOf = sealing === undefined ? plainBounds : sealedBounds(sealing);
  const stored = await readStored(db, ids, { boundsOf, expected }, sealing && openOnArrival(sealing));
  if (sealing === undefined) return headWithRows(stored, (row) => row);
  // Asked of every row before any is opened: a row that does not open is reported once, by one path.
  const behind =
    stored.meta.some((row) => sealing.behindStored('meta', row)) ||
    stored.rows.some((row) => sealing.behindStored('memories', row));
  if (behind) return readThroughDexie(db, ids);
  return headWithRows(stored, (row, key) => sealing.openStored('meta', row, key), openMemory(sealing));
}

/**
 * The head and the rows of `stored`: the head's `meta` rows but the floor's through `openMeta` (the row, its key),
 * each memory row through `openRow` when first asked for (none: stored as read).
 */
function headWithRows(
  stored: Stored,
  openMeta: (row: unknown, key: string) => unknown,
  openRow?: OpenRow,
): HeadWithRows {
  // The floor's row was read (opened, in an encrypted store) as the transaction ran: see readHead.
  const [generation, embedder] = HEAD_KEYS.slice(1).map(
    (key, i) =>
      (opened(stored.metaOpened[i + 1], () => openMeta(stored.meta[i + 1], key)) as { value?: unknown } | undefined)
        ?.value,
  );
  const rows = new ReadRows(stored.ids, stored.rows, openRow, openRow && stored.opened);
  const head: LogHead = {
    last: stored.last,
    floor: stored.floor,
    generation: generationOf(generation),
    embedderId: embedderRecordOf(embedder)?.id,
  };
  return { head, rows };
}

/** `early` unless it is UNOPENED, else what `open` gives. */
function opened(early: unknown, open: () => unknown): unknown {
  return early === UNOPENED ? open() : early;
}

/** The head, then the rows, through Dexie (and so through the row-sealing middleware, which reads the journal first). */
async function readThroughDexie(db: EngramDb, ids: readonly string[]): Promise<HeadWithRows> {
  const head = await readLogHead(db);
  return { head, rows: new ReadRows(ids, ids.length === 0 ? [] : await db.memories.bulkGet([...ids])) };
}

/**
 * An encrypted store's LOG_FLOOR_KEY row, opened as the middleware opens it (undefined when another
 * instance wrote it since the ledger was read: the whole read is then made again through Dexie).
 */
function sealedBounds(sealing: RowSealing): BoundsOf {
  return (stored) => {
    if (stored !== undefined && sealing.behindStored('meta', stored)) return undefined;
    try {
      return plainBounds(sealing.openStored('meta', stored, LOG_FLOOR_KEY));
    } catch {
      // Thrown in the request's success handler, it would abort the read (RowSealing.openStoredQuietly):
      // the head's other rows throw it outside IndexedDB.
      return undefined;
    }
  };
}

/** How the head is read: how the LOG_FLOOR_KEY row gives the log's bounds, and the position expected (readHead). */
interface HeadReading {
  boundsOf: BoundsOf;
  expected: number | undefined;
}

/**
 * The memories `ids` and (with `head`) the log's last key and the head's `meta` rows, as stored, in
 * one read-only transaction.
 */
function readStored(
  db: EngramDb,
  ids: readonly string[],
  head: HeadReading | undefined,
  early: OpenEarly | undefined,
): Promise<Stored> {
  const withHead = head !== undefined;
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
    const stored = nothingRead(ids);
    let waiting = (withHead ? 1 + HEAD_KEYS.length : 0) + ids.length;
    const arrived = (): void => {
      if (--waiting === 0) resolve(stored);
    };
    if (withHead) readHead(tx, stored, head, arrived, early);
    if (ids.length > 0) readRows(tx, stored, arrived, early);
  });
}

/** A read of the memories `ids` before anything arrived. */
function nothingRead(ids: readonly string[]): Stored {
  return {
    ids,
    last: 0,
    floor: 0,
    meta: new Array<unknown>(HEAD_KEYS.length),
    rows: new Array<unknown>(ids.length),
    opened: new Array<Opened>(ids.length).fill(UNOPENED),
    metaOpened: new Array<unknown>(HEAD_KEYS.length).fill(UNOPENED),
  };
}

/** Asks `tx` for the memories `stored.ids` into `stored` (each opened as it arrives, with `early`), calling `arrived` as each comes. */
function readRows(tx: IDBTransaction, stored: Stored, arrived: () => void, early: OpenEarly | undefined): void {
  const memories = tx.objectStore('memories');
  stored.ids.forEach((id, i) => {
    const row = memories.get(id);
    row.onsuccess = () => {
      stored.rows[i] = row.result;
      if (early !== undefined) stored.opened[i] = early('memories', row.result, id) as Opened;
      arrived();
    };
  });
}

/**
 * Asks `tx` for the log's last key and the head's `meta` rows into `stored`, calling `arrived` as
 * each comes. The last key is the LOG_FLOOR_KEY row's recorded last position when the entries at it
 * and after it confirm it (change-log.ts readLastSeq: a cursor to the log's end can take tens of
 * milliseconds), else the cursor's. The entries that would confirm `expected` are asked for beside
 * the row: when the row records it (nothing logged since the indexes last caught up, a search's
 * common case), the head costs no second round trip.
 */
function readHead(
  tx: IDBTransaction,
  stored: Stored,
  { boundsOf, expected }: HeadReading,
  arrived: () => void,
  early: OpenEarly | undefined,
): void {
  const changes = tx.objectStore('changes');
  const meta = tx.objectStore('meta');
  const requests = HEAD_KEYS.map((key) => meta.get(key));
  const guessed = expected === undefined ? undefined : ([changes.get(expected), changes.get(expected + 1)] as const);
  requests.forEach((row, i) => {
    row.onsuccess = () => {
      stored.meta[i] = row.result;
      // The bounds row (the first) is opened by boundsOf, below.
      if (early !== undefined && i > 0) stored.metaOpened[i] = early('meta', row.result, HEAD_KEYS[i]!);
      arrived();
    };
  });
  // The bounds row is answered first (requests are answered in order), `guessed` after it.
  requests[0]!.addEventListener('success', () => {
    const bounds = boundsOf(requests[0]!.result);
    stored.floor = bounds?.floor ?? 0;
    const recorded = bounds?.recorded;
    if (bounds === undefined || recorded === undefined) {
      readLastKey(changes, stored, arrived);
      return;
    }
    const [at, after] =
      guessed !== undefined && recorded === expected ? guessed : [changes.get(recorded), changes.get(recorded + 1)];
    // Answered in order: when `after` has been, so has `at`.
    after.onsuccess = () => {
      if (confirmsLast(bounds, at.result !== undefined, after.result !== undefined)) {
        stored.last = recorded;
        arrived();
      } else readLastKey(changes, stored, arrived);
    };
  });
}

/** Reads the log's last key by a cursor into `stored`, then calls `arrived`. */
function readLastKey(changes: IDBObjectStore, stored: Stored, arrived: () => void): void {
  const lastKey = changes.openKeyCursor(null, 'prev');
  lastKey.onsuccess = () => {
    const key = lastKey.result?.primaryKey;
    if (typeof key === 'number') stored.last = key;
    arrived();
  };
}
