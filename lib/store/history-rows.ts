/**
 * How a record's history is kept: each entry holds the row before its change and the row after it,
 * with two savings on the write that matters most, a record's creation:
 * - A creation writes no entry (write.ts `logHistory`). The record's add entry is written at its
 *   first logged change, in that change's transaction, dated by the row it made (its creation
 *   time); a record never changed since has none stored, and its history is its add alone, read
 *   from the record as it stands. Stores and exports from before keep the entries they hold.
 * - An add's entry keeps no copy of the row it added (`after` null). The row an add made is what
 *   the record's next entry found (the `before` of the next entry that found a row), or the record
 *   as it stands now when nothing came after.
 * Every change a history entry does not log (an access count, a tombstone's text removed) leaves the
 * text, version and metadata as they were, so what a history reads of the added row is the same
 * either way. Entries written before these rules keep their copy, which is read as it is.
 */
import type { HistoryRow, TableName } from './rows.js';

/** When a record's row was made: its creation time (memories, messages), its time (traces), else its last change (blocks). */
export function creationTime(row: unknown): number {
  const r = row as { createdAt?: unknown; at?: unknown; updatedAt?: unknown };
  const at = r.createdAt ?? r.at ?? r.updatedAt;
  return typeof at === 'number' ? at : 0;
}

/**
 * The add entry of record `recordId` of `table`, whose first row was `row`.
 * @example
 * creationEntry('memories', id, row) // { op: 'add', before: null, after: null, at: row.createdAt, ... }
 */
export function creationEntry(table: TableName, recordId: string, row: unknown): HistoryRow {
  return { table, recordId, op: 'add', before: null, after: null, at: creationTime(row) };
}

/**
 * The add entries owed before `entries` (changes of records the store holds, written outside the
 * write path: an import's overwrites, sync's losing versions) for the records with none stored
 * (`stored`: whether one is): one per record, dated by its row here (`localRow` of its entry), which
 * it keeps as its `after`.
 * @example
 * creationsOf(overwritten, (id) => standing.has(id), (e) => e.before) // the adds to write first
 */
export function creationsOf(
  entries: readonly HistoryRow[],
  stored: (recordId: string) => boolean,
  localRow: (entry: HistoryRow) => unknown,
): HistoryRow[] {
  const out = new Map<string, HistoryRow>();
  for (const e of entries) {
    const row = localRow(e);
    if (out.has(e.recordId) || stored(e.recordId) || row === null || row === undefined) continue;
    // With its copy of the row: the entry after it may hold another version (sync's losing one) as its `before`.
    out.set(e.recordId, { ...creationEntry(e.table, e.recordId, row), after: row });
  }
  return [...out.values()];
}

/**
 * `entries` (one record's, of one table, oldest first) with each add's row put back in `after`;
 * `current` is the record's row now (undefined when it has none).
 * @example
 * withAddedRows([{ op: 'add', before: null, after: null, ... }], row) // the add's after is row
 */
export function withAddedRows(entries: readonly HistoryRow[], current: unknown): HistoryRow[] {
  return entries.map((entry, i) => {
    if (entry.op !== 'add' || entry.after !== null) return entry;
    // The next entry that found a row (another add, one a merge import brought, found none).
    const next = entries.find((e, j) => j > i && e.before !== null);
    return { ...entry, after: (next === undefined ? current : next.before) ?? null };
  });
}

/**
 * The history of record `recordId` of `table` as it reads: its stored `entries` (oldest first), or
 * its add alone when none is stored and it has a row now (`current`), each add's row put back.
 * @example
 * recordHistory('memories', id, [], row) // [{ op: 'add', after: row, at: row.createdAt, ... }]
 */
export function recordHistory(
  table: TableName,
  recordId: string,
  entries: readonly HistoryRow[],
  current: unknown,
): HistoryRow[] {
  const kept = entries.length === 0 && current !== undefined ? [creationEntry(table, recordId, current)] : entries;
  return withAddedRows(kept, current);
}
