/**
 * The vector index's snapshot in `meta` (key `indexSnapshot`): what it records
 * (the index, the unmerged buffer, the scope table column by column, the log
 * position and store generation it reflects), how it is read back into an
 * index and a scope table, and how a restored one is checked against the
 * store. The snapshot is a cache: whatever fails here means a rebuild from the
 * stored vectors (vector-state.ts), never lost memories.
 */
import { isLive } from '../../store/rows.js';
import { vectorOfModel } from '../../store/current-vector.js';
import { getSnapshot, putSnapshot } from '../../store/snapshot-chunks.js';
import { storeError } from '../../store/store-error.js';
import { BufferedIndex } from '../../vector/buffered-index.js';
import { restoreIndex } from '../../vector/choose-index.js';
import { ExactIndex } from '../../vector/exact-index.js';
import { snapshotChecksumHolds } from '../../vector/snapshot-format.js';
import type { VectorIndex } from '../../vector/vector-index.js';
import type { EngineStore } from '../engine-store.js';
import { scopesMatchStore } from './scope-check.js';
import { ScopeTable, statementOf, type ScopeColumns, type ScopeTuple } from './scope-table.js';

export const SNAPSHOT_KEY = 'indexSnapshot';

/** What `meta` keeps of the index. */
export interface SnapshotRecord {
  /** The main index. */
  bytes: Uint8Array;
  /** The vectors not merged into it yet, as an exact index (absent in older snapshots: none). */
  pending?: Uint8Array;
  /** The scope fields of the indexed memories, column by column. */
  scopeColumns?: ScopeColumns;
  /** The same as one array per memory, in older snapshots (absent in the oldest). */
  scopes?: ScopeTuple[];
  /** The analyzer the scopes' statement keys were made with (absent in older snapshots: none were). */
  statements?: string;
  seq: number;
  embedderId: string;
  dimensions: number;
  at: number;
  /** The store generation the index was built from (absent in older snapshots: 0). */
  generation?: number;
}

/** The record when `value` has a snapshot's shape, else undefined. */
function asSnapshotRecord(value: unknown): SnapshotRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Partial<SnapshotRecord>;
  const ok =
    r.bytes instanceof Uint8Array &&
    (r.pending === undefined || r.pending instanceof Uint8Array) &&
    typeof r.seq === 'number' &&
    Number.isSafeInteger(r.seq) &&
    r.seq >= 0 &&
    typeof r.embedderId === 'string' &&
    typeof r.dimensions === 'number' &&
    (r.generation === undefined || typeof r.generation === 'number');
  return ok ? (r as SnapshotRecord) : undefined;
}

/**
 * The stored snapshot record, if there is one of a usable shape (a malformed
 * one is reported as damaged), and its scope table when the record is of this
 * embedder and analyzer: made from the record's columns while its index bytes
 * are still being read (`getSnapshot`'s `whileReading`).
 */
export async function readSnapshot(
  core: EngineStore,
  embedderId: string,
): Promise<{ record: SnapshotRecord | undefined; early: ScopeTable | undefined }> {
  let early: ScopeTable | undefined;
  const row = await getSnapshot(core.db, SNAPSHOT_KEY, (fields) => {
    if (fields['statements'] !== core.analyzer.id || fields['embedderId'] !== embedderId) return;
    try {
      early = ScopeTable.fromColumns(fields['scopeColumns']);
    } catch {
      early = undefined; // made again from the record by restoreSnapshot, which judges it
    }
  });
  const record = row === undefined ? undefined : asSnapshotRecord(row.value);
  if (row !== undefined && record === undefined)
    core.reportDamaged({ table: 'meta', key: SNAPSHOT_KEY, reason: 'not an index snapshot; the index is rebuilt' });
  return { record, early };
}

/**
 * The index and scope table a record holds, or undefined when they are of
 * another dimension. Throws on corrupt bytes. The checksum over the index
 * (its cost at 100k: bench/results/REPORT.md, "Measurements cited by the code") is left to
 * {@link verifySnapshot} after the first searches; the structure is checked
 * here, so hnswlib never reads a malformed file. Statement keys made by another
 * analyzer (or none, in older snapshots) are made again from the stored texts.
 */
export async function restoreSnapshot(
  core: EngineStore,
  record: SnapshotRecord,
  dimensions: number,
  early: ScopeTable | undefined,
): Promise<{ index: BufferedIndex; scopes: ScopeTable } | undefined> {
  const main = await restoreIndex(record.bytes, { checksum: false });
  // Whatever fails after an index is restored lets its memory go (a large HNSW is most of the module's heap).
  let pending: VectorIndex | undefined;
  try {
    pending = record.pending === undefined ? undefined : await restoreIndex(record.pending);
  } catch (e) {
    main.dispose();
    throw e;
  }
  if (
    main.dimensions !== dimensions ||
    (pending !== undefined && (!(pending instanceof ExactIndex) || pending.dimensions !== dimensions))
  ) {
    main.dispose();
    pending?.dispose();
    return undefined;
  }
  const index = new BufferedIndex(main, pending);
  try {
    const saved = savedScopes(record, core.analyzer.id, early);
    return { index, scopes: saved ?? (await scopesFromStore(core)) };
  } catch (e) {
    index.dispose();
    throw e;
  }
}

/**
 * The scope table `record` saved (`early`: made from its columns already), in columns or in the older
 * tuples; undefined when it has none or its statement keys are not of analyzer `analyzerId`.
 */
function savedScopes(
  record: SnapshotRecord,
  analyzerId: string,
  early: ScopeTable | undefined,
): ScopeTable | undefined {
  if (record.statements !== analyzerId) return undefined;
  if (record.scopeColumns !== undefined) return early ?? ScopeTable.fromColumns(record.scopeColumns);
  return Array.isArray(record.scopes) ? ScopeTable.fromTuples(record.scopes) : undefined;
}

/** Writes `record` into `meta` (in chunk rows when large: lib/store/snapshot-chunks.ts). */
export async function writeSnapshot(core: EngineStore, record: SnapshotRecord): Promise<void> {
  try {
    await putSnapshot(core.db, SNAPSHOT_KEY, { ...record });
  } catch (e) {
    throw storeError(e, 'saving the index snapshot');
  }
}

/** The scope table of every live memory, read from the store (for snapshots that lack one). */
async function scopesFromStore(core: EngineStore): Promise<ScopeTable> {
  const table = new ScopeTable();
  const now = core.now();
  await core.db.memories.each((row) => {
    if (isLive(row, now)) table.set(row, statementOf(core.analyzer, row));
  });
  return table;
}

/** A restored index and what the checks compare it with. */
export interface Restored {
  core: EngineStore;
  embedderId: string;
  index: BufferedIndex;
  scopes: ScopeTable;
  /** Whether a live memory's stored vector can be indexed (reports it as damaged when not). */
  usable: (id: string, vector: unknown) => boolean;
}

/** Whether the index and the scope table hold the same ids. */
export function indexMatchesScopes({ index, scopes }: Pick<Restored, 'index' | 'scopes'>): boolean {
  if (scopes.size !== index.size) return false;
  for (const id of scopes.ids()) if (!index.has(id)) return false;
  return true;
}

/**
 * The check at open when the counts tell nothing is amiss: the scope table and
 * the index hold the same ids, and the store as many vectors.
 */
export function agreesInCount(restored: Pick<Restored, 'index' | 'scopes'>, stored: number): boolean {
  return stored === restored.scopes.size && indexMatchesScopes(restored);
}

/**
 * Whether the index holds exactly the live memories with usable vectors: the
 * scope table and the index have the same ids, every one has a stored vector,
 * and every stored vector left out belongs to a memory that is not live, is
 * another embedder's, or is damaged. `keys` are the stored vectors' ids.
 */
export async function agreesWithStore(restored: Restored, keys: readonly string[]): Promise<boolean> {
  const { core, scopes } = restored;
  if (!indexMatchesScopes(restored)) return false;
  const stored = new Set(keys);
  for (const id of scopes.ids()) if (!stored.has(id)) return false;
  const left = keys.filter((k) => !scopes.has(k));
  if (left.length === 0) return true;
  // Many left out: a rebuild costs about what checking them would.
  if (left.length > Math.max(256, keys.length / 10)) return false;
  const [rows, vectors] = await Promise.all([core.db.memories.bulkGet(left), core.db.vectors.bulkGet(left)]);
  const now = core.now();
  return left.every((id, i) => {
    const vector = vectorOfModel(vectors[i], restored.embedderId);
    if (vector === undefined || !isLive(rows[i], now)) return true;
    return !restored.usable(id, vector);
  });
}

/** At open, when the counts disagree: whether the snapshot holds anyway (intact, the same ids, the same scope values). */
export async function holdsAtOpen(restored: Restored, bytes: Uint8Array): Promise<boolean> {
  const { db } = restored.core;
  return (
    snapshotChecksumHolds(bytes) &&
    (await agreesWithStore(restored, await db.vectors.toCollection().primaryKeys())) &&
    (await scopesMatchStore(db, restored.scopes))
  );
}

/**
 * The check of a restored index after the open (when the counts agreed), once
 * its checksum held (`snapshotChecksumHolds`, run on the bytes first so that
 * they need not be kept): its ids against the store's, and its scope table's
 * values against the memories' (scope-check.ts). Returns why the snapshot
 * cannot be trusted (counts that agreed but ids or scope values that do not: a
 * vector replaced behind the log's back, two users' values swapped), or
 * undefined when it holds. `closed` stops it between reads.
 */
export async function verifySnapshot(restored: Restored, closed: () => boolean): Promise<string | undefined> {
  if (closed()) return undefined;
  const keys = await restored.core.db.vectors.toCollection().primaryKeys();
  // Closed meanwhile (checked again: each read awaited).
  if (closed()) return undefined;
  if (!(await agreesWithStore(restored, keys))) return 'the index snapshot does not match the stored vectors';
  if (!(await scopesMatchStore(restored.core.db, restored.scopes)))
    return 'the index snapshot’s scope table does not match the store';
  return undefined;
}

/** Why a restored snapshot's bytes cannot be trusted: its checksum failed (see verifySnapshot). */
export const CORRUPT_SNAPSHOT = 'the index snapshot is corrupt (checksum)';

/** Reports a snapshot found untrustworthy after the open (the caller rebuilds the index). */
export function reportBadSnapshot(core: EngineStore, reason: string): void {
  core.reportDamaged({ table: 'meta', key: SNAPSHOT_KEY, reason: `${reason}; the index is rebuilt` });
}
