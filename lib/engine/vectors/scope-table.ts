/**
 * The scope fields of every indexed memory, kept in memory beside the vector
 * index, so a scoped search filters inside the graph walk without reading the
 * memories of the whole scope from IndexedDB. Saved with the index snapshot.
 * Each keyless memory also carries its statement key (a hash of the analyzer's
 * comparable text), so add()'s near-duplicate check finds the memories that may
 * say the same by lookup, not by a graph search and a read of every neighbour.
 */
import { type CompiledFilter, type ScopeEntry } from '../../search/filters.js';
import { SCOPE_FIELDS, type ScopeField } from '../../store/scope.js';
import type { Analyzer } from '../../search/analyze.js';
import { TIERS, type MemoryRow, type Tier } from '../../store/rows.js';
import { contentHash } from '../../util/hash.js';

/** One entry as stored in a snapshot: id, tier, the scope fields, times, statement key. */
export type ScopeTuple = [string, Tier, ...(string | number | null)[]];

/** The scope table column by column (see {@link ScopeTable.toColumns}). */
export interface ScopeColumns {
  ids: string[];
  /** Tiers and scope values, each once. */
  strings: string[];
  /** Per entry: the index in `strings` of its tier, then of each scope field's value (-1: none). */
  codes: Int32Array;
  /** Per entry: createdAt, updatedAt, expiresAt and statement key (NaN: none). */
  numbers: Float64Array;
}

const CODE_COLUMNS = 1 + SCOPE_FIELDS.length;
const NUMBER_COLUMNS = 4;

interface Entry extends ScopeEntry {
  statement?: number;
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * A memory's statement key: the hash of its comparable text (two sayings of one
 * fact share it). Keyed memories have none: they are never near duplicates.
 */
export function statementOf(analyzer: Analyzer, row: Pick<MemoryRow, 'text' | 'key'>): number | undefined {
  return row.key === undefined ? statementKey(analyzer.comparable(row.text)) : undefined;
}

/** The statement key of a comparable text (the analyzer's `comparable`). */
export function statementKey(comparable: string): number {
  // 52 bits of the 64-bit hash: a number is cheaper than a string to keep, compare and snapshot.
  return Number.parseInt(contentHash(comparable).slice(0, 13), 16);
}

/** Scope fields by memory id, with the ids of each scope value (a scoped search visits only its scope). */
export class ScopeTable {
  readonly #entries = new Map<string, Entry>();
  /** field -> value -> ids holding it. */
  readonly #byValue = new Map<ScopeField, Map<string, Set<string>>>(SCOPE_FIELDS.map((k) => [k, new Map()]));
  /** Ids of the entries with an expiry time: the only ones a scope value's ids may hold that a search must leave out. */
  readonly #expiring = new Set<string>();
  /** Ids by statement key: one id as itself (nearly every key has one; 100k one-element Sets cost 10 MB and 40 ms at open), more in a Set. */
  readonly #byStatement = new Map<number, string | Set<string>>();

  get size(): number {
    return this.#entries.size;
  }

  /** Records a live memory's fields, and its statement key (see {@link withStatement}) when it has one. */
  set(row: MemoryRow, statement?: number): void {
    const entry: Entry = { tier: row.tier, createdAt: row.createdAt, updatedAt: row.updatedAt };
    for (const k of SCOPE_FIELDS) if (row[k] !== undefined) entry[k] = row[k];
    if (row.expiresAt !== undefined) entry.expiresAt = row.expiresAt;
    if (statement !== undefined) entry.statement = statement;
    this.#put(row.id, entry);
  }

  /** The ids of the entries recorded with this statement key. */
  withStatement(statement: number): ReadonlySet<string> {
    const ids = this.#byStatement.get(statement);
    return ids === undefined ? EMPTY : typeof ids === 'string' ? new Set([ids]) : ids;
  }

  delete(id: string): void {
    const entry = this.#entries.get(id);
    if (entry === undefined) return;
    this.#unindex(id, entry);
    this.#entries.delete(id);
  }

  clear(): void {
    this.#entries.clear();
    for (const values of this.#byValue.values()) values.clear();
    this.#byStatement.clear();
    this.#expiring.clear();
  }

  has(id: string): boolean {
    return this.#entries.has(id);
  }

  /** The ids of the entries with each value of scope field `field` (the table's own sets: never change them). */
  idsByValue(field: ScopeField): ReadonlyMap<string, ReadonlySet<string>> {
    return this.#byValue.get(field)!;
  }

  /** The ids of every entry. */
  ids(): IterableIterator<string> {
    return this.#entries.keys();
  }

  /** Takes over every entry of `other` (and only those). */
  replaceWith(other: ScopeTable): void {
    this.clear();
    for (const [id, entry] of other.#entries) this.#put(id, entry);
  }

  /**
   * Ids of the entries that pass every condition of `filter` but metadata ones.
   * With scope fields in the filter, only the ids of its rarest scope value are
   * checked, not the whole table. The result may be the table's own set of ids
   * of that value, live: never change it, and expect it to follow the table.
   */
  matching(filter: CompiledFilter, now: number): ReadonlySet<string> {
    let candidates: Set<string> | undefined;
    let fields = 0;
    for (const k of SCOPE_FIELDS) {
      const value = filter.scope[k];
      if (value === undefined) continue;
      fields += 1;
      const ids = this.#byValue.get(k)!.get(value);
      if (ids === undefined) return EMPTY;
      if (candidates === undefined || ids.size < candidates.size) candidates = ids;
    }
    // One scope value and nothing else (a user's own search): its ids are the answer, handed out
    // as they are, not copied (a copy of a 50k scope costs more than the search), unless one has expired.
    if (candidates !== undefined && fields === 1 && filter.scopeOnly && !this.#anyExpired(candidates, now))
      return candidates;
    const out = new Set<string>();
    if (candidates === undefined) {
      for (const [id, entry] of this.#entries) if (filter.matchesEntry(entry, now)) out.add(id);
    } else {
      for (const id of candidates) if (filter.matchesEntry(this.#entries.get(id)!, now)) out.add(id);
    }
    return out;
  }

  /** Whether an entry of `ids` has expired by `now` (false without looking when the table holds more expiring entries than `ids`: the caller then checks each). */
  #anyExpired(ids: ReadonlySet<string>, now: number): boolean {
    if (this.#expiring.size > ids.size) return true;
    for (const id of this.#expiring) if (this.#entries.get(id)!.expiresAt! <= now && ids.has(id)) return true;
    return false;
  }

  /**
   * The table column by column, for the snapshot: a few typed arrays and two
   * string arrays clone in and out of IndexedDB far faster than a small array
   * per entry (bench/cold-open at 100k).
   */
  toColumns(): ScopeColumns {
    const n = this.#entries.size;
    const strings: string[] = [];
    const code = stringCoder(strings);
    const ids = new Array<string>(n);
    const codes = new Int32Array(n * CODE_COLUMNS);
    const numbers = new Float64Array(n * NUMBER_COLUMNS);
    let i = 0;
    for (const [id, e] of this.#entries) {
      ids[i] = id;
      codes[i * CODE_COLUMNS] = code(e.tier);
      SCOPE_FIELDS.forEach((k, j) => {
        codes[i * CODE_COLUMNS + 1 + j] = code(e[k]);
      });
      numbers.set([e.createdAt, e.updatedAt, e.expiresAt ?? Number.NaN, e.statement ?? Number.NaN], i * NUMBER_COLUMNS);
      i++;
    }
    return { ids, strings, codes, numbers };
  }

  /** The inverse of toColumns(); undefined when `value` is not well-formed columns. */
  static fromColumns(value: unknown): ScopeTable | undefined {
    const columns = asColumns(value);
    if (columns === undefined) return undefined;
    const table = new ScopeTable();
    for (let i = 0; i < columns.ids.length; i++) {
      const id = columns.ids[i];
      const entry = entryAt(columns, i);
      if (typeof id !== 'string' || entry === undefined) return undefined;
      table.#put(id, entry);
    }
    return table;
  }

  /** A copy as one small array per entry (the snapshot format before toColumns()). */
  toTuples(): ScopeTuple[] {
    return [...this.#entries].map(([id, e]) => [
      id,
      e.tier,
      ...SCOPE_FIELDS.map((k) => e[k] ?? null),
      e.createdAt,
      e.updatedAt,
      e.expiresAt ?? null,
      e.statement ?? null,
    ]);
  }

  /** The inverse of toTuples(). */
  static fromTuples(tuples: readonly ScopeTuple[]): ScopeTable {
    const table = new ScopeTable();
    for (const [id, tier, ...rest] of tuples) {
      const entry: Entry = {
        tier,
        createdAt: rest[SCOPE_FIELDS.length] as number,
        updatedAt: rest[SCOPE_FIELDS.length + 1] as number,
      };
      SCOPE_FIELDS.forEach((k, i) => {
        const v = rest[i];
        if (typeof v === 'string') entry[k] = v;
      });
      const expires = rest[SCOPE_FIELDS.length + 2];
      if (typeof expires === 'number') entry.expiresAt = expires;
      const statement = rest[SCOPE_FIELDS.length + 3];
      if (typeof statement === 'number') entry.statement = statement;
      table.#put(id, entry);
    }
    return table;
  }

  #put(id: string, entry: Entry): void {
    const before = this.#entries.get(id);
    if (before !== undefined) this.#unindex(id, before);
    this.#entries.set(id, entry);
    if (entry.expiresAt !== undefined) this.#expiring.add(id);
    if (entry.statement !== undefined) {
      const ids = this.#byStatement.get(entry.statement);
      if (ids === undefined) this.#byStatement.set(entry.statement, id);
      else if (typeof ids === 'string') this.#byStatement.set(entry.statement, new Set([ids, id]));
      else ids.add(id);
    }
    for (const k of SCOPE_FIELDS) {
      const value = entry[k];
      if (value === undefined) continue;
      const values = this.#byValue.get(k)!;
      let ids = values.get(value);
      if (ids === undefined) values.set(value, (ids = new Set()));
      ids.add(id);
    }
  }

  #unindex(id: string, entry: Entry): void {
    this.#expiring.delete(id);
    if (entry.statement !== undefined) {
      const ids = this.#byStatement.get(entry.statement);
      if (ids === id) this.#byStatement.delete(entry.statement);
      else if (typeof ids === 'object') {
        ids.delete(id);
        if (ids.size === 1) this.#byStatement.set(entry.statement, ids.values().next().value!);
      }
    }
    for (const k of SCOPE_FIELDS) {
      const value = entry[k];
      if (value === undefined) continue;
      const values = this.#byValue.get(k)!;
      const ids = values.get(value);
      ids?.delete(id);
      if (ids?.size === 0) values.delete(value);
    }
  }
}

/** Codes of string values, kept in `strings`: a value's index there (pushed when first met), -1 for undefined. */
function stringCoder(strings: string[]): (value: string | undefined) => number {
  const codeOf = new Map<string, number>();
  return (value) => {
    if (value === undefined) return -1;
    let c = codeOf.get(value);
    if (c === undefined) {
      c = strings.length;
      strings.push(value);
      codeOf.set(value, c);
    }
    return c;
  };
}

/** `value` as scope columns when it has their shape (arrays of the right kinds and lengths), else undefined. */
function asColumns(value: unknown): ScopeColumns | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { ids, strings, codes, numbers } = value as Partial<ScopeColumns>;
  if (
    !Array.isArray(ids) ||
    !Array.isArray(strings) ||
    !(codes instanceof Int32Array) ||
    !(numbers instanceof Float64Array)
  )
    return undefined;
  const n = ids.length;
  if (
    codes.length !== n * CODE_COLUMNS ||
    numbers.length !== n * NUMBER_COLUMNS ||
    !strings.every((v) => typeof v === 'string')
  )
    return undefined;
  return { ids, strings, codes, numbers };
}

/** The entry in row `i` of `columns`; undefined when its tier or a scope value is not a known string. */
function entryAt({ strings, codes, numbers }: ScopeColumns, i: number): Entry | undefined {
  const tier = strings[codes[i * CODE_COLUMNS]!] as Tier | undefined;
  if (tier === undefined || !TIERS.includes(tier)) return undefined;
  const at = i * NUMBER_COLUMNS;
  const entry: Entry = { tier, createdAt: numbers[at]!, updatedAt: numbers[at + 1]! };
  for (let j = 0; j < SCOPE_FIELDS.length; j++) {
    const c = codes[i * CODE_COLUMNS + 1 + j]!;
    if (c === -1) continue;
    const v = strings[c];
    if (v === undefined) return undefined;
    entry[SCOPE_FIELDS[j]!] = v;
  }
  if (!Number.isNaN(numbers[at + 2]!)) entry.expiresAt = numbers[at + 2]!;
  if (!Number.isNaN(numbers[at + 3]!)) entry.statement = numbers[at + 3]!;
  return entry;
}
