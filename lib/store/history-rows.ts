/**
 * How a record's history is kept: each entry holds the row before its change and the row after it,
 * except an add's entry, which keeps no copy of the row it added (`after` null; write.ts
 * `historyEntries`). The row an add made is what the record's next entry found (the `before` of
 * the next entry that found a row), or the record as it stands now when nothing came after. Every
 * change a history entry does not log (an access count, a tombstone's text removed) leaves the
 * text, version and metadata as they were, so what a history reads of the added row is the same
 * either way. Entries written before this rule keep their copy, which is read as it is.
 */
import type { HistoryRow } from './rows.js';

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
