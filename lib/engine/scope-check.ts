/**
 * Whether a scope table (restored from a snapshot) says what the store says
 * about every memory it holds: for each scope field, each of its memories has
 * that field's value in the store, and none the store gives a value has none in
 * the table. A well-formed table with two users' values swapped would otherwise
 * hide those memories from their own users' scoped searches for good.
 *
 * Only keys are read, never a memory: the ids of each scope field's index (the
 * memories with the field) and, for each value the table holds, the ids of that
 * value (IndexedDB getAllKeys on the field's index). A memory's scope never
 * changes, so ids the store holds beyond the table (not live, no vector, written
 * since) do not matter.
 */
import { SCOPE_FIELDS, type ScopeField } from '../search/filters.js';
import type { EngramDb } from '../store/schema.js';
import type { ScopeTable } from './scope-table.js';

async function fieldMatches(db: EngramDb, table: ScopeTable, field: ScopeField): Promise<boolean> {
  const values = table.idsByValue(field);
  const [withField, ...ofValues] = await Promise.all([
    db.memories.orderBy(field).primaryKeys(),
    ...[...values.keys()].map((value) => db.memories.where(field).equals(value).primaryKeys()),
  ]);
  let valued = 0;
  let i = 0;
  for (const ids of values.values()) {
    const stored = new Set(ofValues[i++]);
    for (const id of ids) if (!stored.has(id)) return false;
    valued += ids.size;
  }
  // Every table id with the field is among the store's ids with it (checked above); none without it may be.
  let inTable = 0;
  for (const id of withField) if (table.has(id)) inTable += 1;
  return inTable === valued;
}

/**
 * True when every memory of `table` has in the store exactly the scope fields
 * the table gives it.
 * @example
 * if (!(await scopesMatchStore(db, state.scopes))) rebuild();
 */
export async function scopesMatchStore(db: EngramDb, table: ScopeTable): Promise<boolean> {
  return db.transaction('r', db.memories, async () => (await Promise.all(SCOPE_FIELDS.map((field) => fieldMatches(db, table, field)))).every(Boolean));
}
