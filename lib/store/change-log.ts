/**
 * Keeping the change log bounded. The log (`changes`) feeds the caches of the
 * store (vector and keyword indexes, in every open instance) and sync's push.
 * An entry may go once every consumer that needs it has passed it:
 * - hard consumers never lose an entry they have not passed: sync's push
 *   position (`sync.pushedSeq`, lib/sync/store-host.ts) and every position
 *   registered under a `logConsumer:<name>` key in `meta` (a number, or an
 *   object with a numeric `seq`), see {@link registerLogConsumer};
 * - soft consumers are the index snapshots (`indexSnapshot`,
 *   `keywordSnapshot`): they are kept replayable while they lag by less than
 *   the lag limit; a snapshot further behind is dropped (its index is rebuilt
 *   from the store on the next open, which is cheaper than replaying the log).
 * Everything up to the new floor is deleted and the floor is recorded under
 * {@link LOG_FLOOR_KEY}: an instance whose in-memory position is below the
 * floor (another tab, idle while this one wrote) reloads from the store
 * instead of replaying (see vector-state.ts and keyword-state.ts).
 */
import type { MetaRow } from './rows.js';
import type { EngramDb } from './schema.js';
import { readGeneration } from './generation.js';
import { readEmbedderId } from './embedder-record.js';
import { deleteSnapshot, snapshotPositionKey } from './snapshot-chunks.js';

/**
 * `meta` key of the log floor (entries with a seq at or below it may be gone) and of the log's last
 * position, kept with it: `{ seq: floor, last }` (see {@link LogBounds}).
 */
export const LOG_FLOOR_KEY = 'changes.floor';

/** `meta` key prefix of registered log consumers (a consumer's position: a number or `{ seq }`). */
export const LOG_CONSUMER_PREFIX = 'logConsumer:';

/** Hard consumers known by key: sync's push position (SYNC_PUSHED_SEQ_KEY in lib/sync/store-host.ts). */
const HARD_KEYS = ['sync.pushedSeq'];

/** Soft consumers: the index snapshots (SNAPSHOT_KEY of vector-state.ts and keyword-state.ts). */
const SOFT_KEYS = ['indexSnapshot', 'keywordSnapshot'];

/** A log position (a consumer's, the floor) from its `meta` value, or undefined when it holds none. */
export function logPositionOf(value: unknown): number | undefined {
  const seq = typeof value === 'object' && value !== null ? (value as { seq?: unknown }).seq : value;
  return typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
}

/**
 * Where the log's `meta` row (LOG_FLOOR_KEY) says it stands: its floor, and its last position as
 * recorded by every write that logs (write.ts) and by compaction; undefined when the row records
 * none (an older engram wrote the floor alone, as a number).
 */
export interface LogBounds {
  floor: number;
  recorded: number | undefined;
}

/** The bounds a LOG_FLOOR_KEY value holds (`{ seq: floor, last }`, or a floor alone). */
export function logBoundsOf(value: unknown): LogBounds {
  const last = typeof value === 'object' && value !== null ? (value as { last?: unknown }).last : undefined;
  return { floor: logPositionOf(value) ?? 0, recorded: logPositionOf(last) };
}

/** The LOG_FLOOR_KEY row of `floor` and the log's last position `last` (readers of the floor alone read `seq`). */
export function logBoundsRow(floor: number, last: number): MetaRow {
  return { key: LOG_FLOOR_KEY, value: { seq: floor, last } };
}

/**
 * Whether the recorded last position may be taken as the log's end, from whether the entries at it
 * and after it are stored: it may when the first is and the second is not. Entries are deleted only
 * as a prefix (compaction, which keeps the last; a reset deletes the row with them) and their keys
 * are contiguous (IndexedDB's key generator is reverted when a transaction aborts), so then nothing
 * lies beyond it. A position an older engram left behind (it logged without moving it, or wrote the
 * floor alone), a damaged one or none fails this: the log's end is then read by cursor.
 */
export function confirmsLast(
  bounds: LogBounds,
  atRecorded: boolean,
  afterRecorded: boolean,
): bounds is LogBounds & { recorded: number } {
  return bounds.recorded !== undefined && atRecorded && !afterRecorded;
}

/**
 * The last sequence number of the change log (0 when empty). Read by key (the LOG_FLOOR_KEY row's
 * recorded last, checked against the entry after it) rather than by a reverse cursor: once many
 * entries were deleted (a compaction late in a session), a cursor that seeks to the log's end walks
 * their leftovers in Chromium's LevelDB until LevelDB compacts them, 17-27 ms instead of 0.5 before
 * every search (bench/peers, `engram-resumed`; bench/results/REPORT.md). The cursor stays the fallback.
 */
export async function readLastSeq(db: EngramDb): Promise<number> {
  return db.transaction('r', [db.meta, db.changes], async () => (await readEnds(db)).last);
}

/** The log's last position and its floor, read inside the caller's transaction. */
async function readEnds(db: EngramDb): Promise<{ last: number; floor: number }> {
  const bounds = logBoundsOf((await db.meta.get(LOG_FLOOR_KEY))?.value);
  const [at, after] =
    bounds.recorded === undefined ? [] : await db.changes.bulkGet([bounds.recorded, bounds.recorded + 1]);
  if (confirmsLast(bounds, at !== undefined, after !== undefined))
    return { last: bounds.recorded, floor: bounds.floor };
  return { last: (await db.changes.orderBy(':id').last())?.seq ?? 0, floor: bounds.floor };
}

/** The log floor: every entry at or below it may have been compacted away (0 when never compacted). */
export async function readLogFloor(db: EngramDb): Promise<number> {
  return logPositionOf((await db.meta.get(LOG_FLOOR_KEY))?.value) ?? 0;
}

/** Where the log stands: its last position, its floor and the store generation, read together. */
export interface LogHead {
  last: number;
  floor: number;
  generation: number;
  /** The store's recorded embedder (undefined: none, or a damaged record): a re-embed elsewhere changes it. */
  embedderId: string | undefined;
}

/**
 * The log's last position, floor, the store generation and the recorded embedder in one read
 * transaction (a consistent view). A cache of the store checks this before a
 * search: in the common case, nothing written since it last caught up, this
 * one transaction is all the catch-up reads (bench/peers: three separate reads
 * per index were most of a vector search's time over the bare index).
 * @example
 * const { last, floor, generation } = await readLogHead(db);
 */
export async function readLogHead(db: EngramDb): Promise<LogHead> {
  return db.transaction('r', [db.meta, db.changes], async () => {
    const [{ last, floor }, generation, embedderId] = await Promise.all([
      readEnds(db),
      readGeneration(db),
      readEmbedderId(db),
    ]);
    return { last, floor, generation, embedderId };
  });
}

/**
 * Registers (or moves) a consumer that needs every change-log entry after `seq`.
 * Compaction never deletes an entry a registered consumer has not passed, so a
 * consumer that stops for good must {@link unregisterLogConsumer}.
 * @example await registerLogConsumer(db, 'sync:https://qdrant.example#memories', pushedSeq)
 */
export async function registerLogConsumer(db: EngramDb, name: string, seq: number): Promise<void> {
  await db.meta.put({ key: `${LOG_CONSUMER_PREFIX}${name}`, value: { seq } });
}

/** Removes a registered consumer. */
export async function unregisterLogConsumer(db: EngramDb, name: string): Promise<void> {
  await db.meta.delete(`${LOG_CONSUMER_PREFIX}${name}`);
}

/** What a compaction did. */
export interface Compaction {
  /** Entries deleted. */
  removed: number;
  /** The floor after it. */
  floor: number;
  /** Snapshot keys dropped because they lagged too far behind. */
  droppedSnapshots: string[];
}

/**
 * Lowers `bound` (the highest entry a compaction may delete) to the position of each index
 * snapshot that lags the log's end `last` by at most `lagLimit`, so it stays replayable; a
 * snapshot that lags further (below `bound`), or whose position cannot be read, is deleted:
 * its index is rebuilt from the store on its next load. `positions`: the snapshots' position
 * rows, in SOFT_KEYS order (run in compactChangeLog's transaction).
 */
async function keepSnapshots(
  db: EngramDb,
  positions: readonly (MetaRow | undefined)[],
  bound: number,
  log: { last: number; lagLimit: number },
): Promise<{ bound: number; droppedSnapshots: string[] }> {
  const droppedSnapshots: string[] = [];
  // A snapshot written before position rows existed: its record says where it stands.
  const unplaced = SOFT_KEYS.filter((_, i) => positions[i] === undefined);
  const records = new Map(
    unplaced.length === 0 ? [] : (await db.meta.bulkGet(unplaced)).map((row, i) => [unplaced[i]!, row] as const),
  );
  for (const [i, key] of SOFT_KEYS.entries()) {
    const row = positions[i] ?? records.get(key);
    if (row === undefined) continue;
    const seq = logPositionOf(row.value);
    if (seq !== undefined && log.last - seq <= log.lagLimit) bound = Math.min(bound, seq);
    else if (seq === undefined || seq < bound) {
      await deleteSnapshot(db, key);
      droppedSnapshots.push(key);
    }
  }
  return { bound, droppedSnapshots };
}

/**
 * Deletes the change-log entries every consumer has passed, in one transaction
 * over `changes` and `meta`. `lagLimit`: how far a snapshot may lag behind the
 * log's end and still be kept replayable; `keepAfter`: the lowest position of
 * the calling instance's own caches (they keep every entry after it).
 */
export async function compactChangeLog(
  db: EngramDb,
  lagLimit: number,
  keepAfter = Number.MAX_SAFE_INTEGER,
): Promise<Compaction> {
  return db.transaction('rw', [db.changes, db.meta], async () => {
    // Every read at once (IndexedDB answers a transaction's requests in order): one wait instead of five.
    const [last, floor, registered, hardRows, positions] = await Promise.all([
      readLastSeq(db),
      readLogFloor(db),
      db.meta.where('key').startsWith(LOG_CONSUMER_PREFIX).toArray(),
      db.meta.bulkGet(HARD_KEYS),
      db.meta.bulkGet(SOFT_KEYS.map(snapshotPositionKey)),
    ]);
    const hard = [...hardRows.filter((r) => r !== undefined), ...registered]
      // A registered consumer whose position cannot be read keeps everything.
      .map((r) => logPositionOf(r.value) ?? 0);
    // What every consumer has passed. The last entry always stays: the log's end is the position
    // every snapshot is checked against.
    const passed = Math.min(last - 1, keepAfter, ...hard);
    const { bound, droppedSnapshots } = await keepSnapshots(db, positions, passed, { last, lagLimit });
    if (bound <= floor) return { removed: 0, floor, droppedSnapshots };
    const removed = await db.changes.where(':id').belowOrEqual(bound).delete();
    await db.meta.put(logBoundsRow(bound, last));
    return { removed, floor: bound, droppedSnapshots };
  });
}
