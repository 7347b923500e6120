/**
 * The scope fields of every indexed memory, kept in memory beside the vector
 * index, so a scoped search filters inside the graph walk without reading the
 * memories of the whole scope from IndexedDB. Saved with the index snapshot.
 */
import { SCOPE_FIELDS, type CompiledFilter, type ScopeEntry } from '../search/filters.js';
import type { MemoryRow, Tier } from '../store/rows.js';

/** One entry as stored in a snapshot: id, tier, the scope fields, times. */
export type ScopeTuple = [string, Tier, ...(string | number | null)[]];

/** Scope fields by memory id. */
export class ScopeTable {
  readonly #entries = new Map<string, ScopeEntry>();

  get size(): number {
    return this.#entries.size;
  }

  /** Records a live memory's fields. */
  set(row: MemoryRow): void {
    const entry: ScopeEntry = { tier: row.tier, createdAt: row.createdAt, updatedAt: row.updatedAt };
    for (const k of SCOPE_FIELDS) if (row[k] !== undefined) entry[k] = row[k];
    if (row.expiresAt !== undefined) entry.expiresAt = row.expiresAt;
    this.#entries.set(row.id, entry);
  }

  delete(id: string): void {
    this.#entries.delete(id);
  }

  clear(): void {
    this.#entries.clear();
  }

  has(id: string): boolean {
    return this.#entries.has(id);
  }

  /** The ids of every entry. */
  ids(): IterableIterator<string> {
    return this.#entries.keys();
  }

  /** Takes over every entry of `other` (and only those). */
  replaceWith(other: ScopeTable): void {
    this.#entries.clear();
    for (const [id, entry] of other.#entries) this.#entries.set(id, entry);
  }

  /** Ids of the entries that pass every condition of `filter` but metadata ones. */
  matching(filter: CompiledFilter, now: number): Set<string> {
    const out = new Set<string>();
    for (const [id, entry] of this.#entries) if (filter.matchesEntry(entry, now)) out.add(id);
    return out;
  }

  /** A compact, structured-clone friendly copy for the snapshot. */
  toTuples(): ScopeTuple[] {
    return [...this.#entries].map(([id, e]) => [id, e.tier, ...SCOPE_FIELDS.map((k) => e[k] ?? null), e.createdAt, e.updatedAt, e.expiresAt ?? null]);
  }

  /** The inverse of toTuples(). */
  static fromTuples(tuples: readonly ScopeTuple[]): ScopeTable {
    const table = new ScopeTable();
    for (const [id, tier, ...rest] of tuples) {
      const entry: ScopeEntry = { tier, createdAt: rest[SCOPE_FIELDS.length] as number, updatedAt: rest[SCOPE_FIELDS.length + 1] as number };
      SCOPE_FIELDS.forEach((k, i) => {
        const v = rest[i];
        if (typeof v === 'string') entry[k] = v;
      });
      const expires = rest[SCOPE_FIELDS.length + 2];
      if (typeof expires === 'number') entry.expiresAt = expires;
      table.#entries.set(id, entry);
    }
    return table;
  }
}
