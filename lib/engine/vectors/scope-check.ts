/**
 * Whether a scope table (restored from a snapshot) says what the store says
 * about every memory it holds: for each scope field, each of its memories has
 * that field's value in the store, and none the store gives a value has none in
 * the table. A well-formed table with two users' values swapped would otherwise
 * hide those memories from their own users' scoped searches for good.
 *
 * Only keys are read, never a memory: each scope field's index once, its keys
 * (the values) and its primary keys (the ids) in the same index order, so the
 * requests do not grow with the number of distinct values (a runId per memory).
 * A memory's scope never changes, so ids the store holds beyond the table (not
 * live, no vector, written since) do not matter.
 */
import { SCOPE_FIELDS, type ScopeField } from '../../store/scope.js';
import type { EngramDb } from '../../store/schema.js';
import type { ScopeTable } from './scope-table.js';

async function fieldMatches(db: EngramDb, table: ScopeTable, field: ScopeField): Promise<boolean> {
  const [values, ids] = await Promise.all([
    db.memories.orderBy(field).keys(),
    db.memories.orderBy(field).primaryKeys(),
  ]);
  // The store's value of this field for every memory of the table that has one.
  const stored = new Map<string, unknown>();
  ids.forEach((id, i) => {
    if (table.has(id)) stored.set(id, values[i]);
  });
  let valued = 0;
  for (const [value, members] of table.idsByValue(field)) {
    for (const id of members) if (stored.get(id) !== value) return false;
    valued += members.size;
  }
  // Every table id with a value has it in the store (checked above); none without one may have one there.
  return stored.size === valued;
}

/**
 * True when every memory of `table` has in the store exactly the scope fields
 * the table gives it.
 * @example
 * if (!(await scopesMatchStore(db, state.scopes))) rebuild();
 */
export async function scopesMatchStore(db: EngramDb, table: ScopeTable): Promise<boolean> {
  return db.transaction('r', db.memories, async () =>
    (await Promise.all(SCOPE_FIELDS.map((field) => fieldMatches(db, table, field)))).every(Boolean),
  );
}
