/**
 * Freshness of the rows of a store encrypted at rest: an older sealed copy of a row put back
 * under its own id opens (its seal is genuine), so the seal alone cannot tell it from the
 * current one. Every write transaction of an encrypted store gets the next number `n` of the
 * store's write counter; each row it writes carries `n` as its version (`$v`, bound into the
 * row's seal), and the transaction appends to a sealed journal which rows it wrote or deleted
 * (`meta` rows `fresh/<n>/<part>`), and sets the sealed head (`fresh/head`: the last `n` and how
 * many journal parts it wrote) in the same transaction. This ledger is the map, kept in memory,
 * of every row's current version: loaded at open from its sealed snapshot (freshness-snapshot.ts)
 * and the journal after it, updated from this instance's committed writes and from the journal
 * of other instances' (row-sealing.ts). A row read whose version is not the ledger's, or that
 * the ledger holds deleted, or that claims a write newer than the head, is refused and reported
 * like any damaged row.
 *
 * What it cannot see (README, "Encryption at rest"): the whole store put back to an older state
 * together (head, journal, snapshot and rows): nothing on the disk is newer than that state, and
 * only trusted state kept outside the disk could tell.
 */

import { bytesHoldKeys, compareKey, KeysBuilder, SortedKeys } from './sorted-keys.js';

/** The prefix of the ledger's own `meta` rows (head and journal), which the ledger does not version. */
export const FRESHNESS_PREFIX = 'fresh/';
/** The `meta` key of the head: the last write transaction's number and its journal parts. */
export const FRESHNESS_HEAD = `${FRESHNESS_PREFIX}head`;
/** The `meta` key of the ledger's snapshot (freshness-snapshot.ts; its chunks and position row lie beside it). */
export const FRESHNESS_SNAPSHOT = `${FRESHNESS_PREFIX}snapshot`;
/** The journal is saved into the snapshot (and dropped) once it holds this many transactions. */
export const JOURNAL_SAVE_EVERY = 2000;

const N_DIGITS = 15;
const PART_DIGITS = 9;

/** The `meta` key of part `part` of transaction `n`'s journal (sorted by n, then part). */
export function journalKey(n: number, part: number): string {
  return `${FRESHNESS_PREFIX}${String(n).padStart(N_DIGITS, '0')}/${String(part).padStart(PART_DIGITS, '0')}`;
}

/** The key range of every journal row after transaction `after`: [lower, upper] (the head sorts above it). */
export function journalRange(after: number): [string, string] {
  return [journalKey(after + 1, 0), `${FRESHNESS_PREFIX}:`];
}

/**
 * Whether `key` is one of the ledger's own rows (head, journal, snapshot): not versioned, and
 * never deleted by a write through Dexie (a reset keeps them; the journal drops its own rows).
 */
export function isFreshnessKey(key: unknown): boolean {
  return typeof key === 'string' && key.startsWith(FRESHNESS_PREFIX);
}

/** A row written (`PUT`) or deleted (`DELETE`) by a transaction: its table and key (as text). */
export type JournalEntry = [table: string, key: string, op: typeof PUT | typeof DELETE];
export const PUT = 1;
export const DELETE = 0;

/** One journal row as sealed. `prevParts` (part 0 only): how many parts transaction n - 1 wrote. */
export interface JournalRow {
  n: number;
  part: number;
  prevParts?: number;
  entries: JournalEntry[];
}

/** The head as sealed. */
export interface FreshnessHead {
  n: number;
  parts: number;
}

/** A key as the ledger names it: a string key as it is, any other as JSON. */
export function keyText(key: unknown): string {
  return typeof key === 'string' ? key : JSON.stringify(key);
}

function isEntry(e: unknown): e is JournalEntry {
  return (
    Array.isArray(e) &&
    e.length === 3 &&
    typeof e[0] === 'string' &&
    typeof e[1] === 'string' &&
    (e[2] === PUT || e[2] === DELETE)
  );
}

/** The head if `value` is one, else undefined. */
export function asHead(value: unknown): FreshnessHead | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { n, parts } = value as Partial<FreshnessHead>;
  return Number.isSafeInteger(n) && n! >= 0 && Number.isSafeInteger(parts) && parts! >= 0
    ? { n: n!, parts: parts! }
    : undefined;
}

/** The journal row if `value` is one written under `key`, else undefined. */
export function asJournalRow(key: string, value: unknown): JournalRow | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const row = value as Partial<JournalRow>;
  if (!Number.isSafeInteger(row.n) || !Number.isSafeInteger(row.part) || journalKey(row.n!, row.part!) !== key)
    return undefined;
  if (row.prevParts !== undefined && !Number.isSafeInteger(row.prevParts)) return undefined;
  if (!Array.isArray(row.entries) || !row.entries.every(isEntry)) return undefined;
  return row as JournalRow;
}

/** The journal rows of the transactions (after, last], by transaction number, in the order read. */
function partsByTransaction(rows: readonly JournalRow[], after: number, last: number): Map<number, JournalRow[]> {
  const byN = new Map<number, JournalRow[]>();
  for (const row of rows) {
    if (row.n <= after || row.n > last) continue;
    let parts = byN.get(row.n);
    if (parts === undefined) byN.set(row.n, (parts = []));
    parts.push(row);
  }
  return byN;
}

/**
 * The transactions (after, head.n] in `rows` (journal rows read in key order) as lists of
 * entries, or undefined when one is missing or incomplete: every transaction from after + 1 to
 * the head must be there with every one of its parts (the next transaction's part 0, or the
 * head, says how many).
 */
export function journalAfter(
  rows: readonly JournalRow[],
  after: number,
  head: FreshnessHead,
): JournalEntry[][] | undefined {
  const byN = partsByTransaction(rows, after, head.n);
  const out: JournalEntry[][] = [];
  for (let n = after + 1; n <= head.n; n++) {
    const parts = byN.get(n) ?? [];
    const count = n === head.n ? head.parts : byN.get(n + 1)?.[0]?.prevParts;
    if (count === undefined || parts.length !== count) return undefined;
    if (parts.some((p, i) => p.part !== i)) return undefined;
    out.push(parts.flatMap((p) => p.entries));
  }
  return out;
}

/** Why a row is refused, or undefined when its version is the current one. */
export type FreshnessVerdict = undefined | string;

/** A version that stands for "deleted" in {@link TableVersions}' overlay over its saved keys. */
const GONE = -1;

/** The code-unit order of strings (`<`), the order of a snapshot's saved keys. */
function sortedKeys(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (!(keys[i - 1]! < keys[i]!)) return false;
  return true;
}

/**
 * One table's versions as a snapshot record holds them: the keys sorted, as UTF-8 bytes with the
 * end of each (sorted-keys.ts), and their versions. Older records (and a table with a key UTF-8
 * cannot hold) have `keys` as a JSON array of strings (its UTF-8 bytes, or a string) and no `ends`.
 */
export interface SavedTable {
  keys: Uint8Array | string;
  ends?: Uint32Array;
  versions: Float64Array;
}

const ENCODER = new TextEncoder();
/** The saved keys of a table no snapshot held. */
const NO_KEYS = SortedKeys.of([]);

/**
 * One table's versions: the keys a snapshot saved (sorted, looked up by binary search over their
 * bytes: an open builds no string or map per row) under the changes since (a map; GONE marks a
 * deleted key).
 */
class TableVersions {
  #saved: SortedKeys = NO_KEYS;
  #versions: Float64Array = new Float64Array(0);
  readonly #changed = new Map<string, number>();

  /** Versions saved as sorted `keys` and their `versions` (same length). */
  static saved(keys: SortedKeys, versions: Float64Array): TableVersions {
    const table = new TableVersions();
    table.#saved = keys;
    table.#versions = versions;
    return table;
  }

  get(key: string): number | undefined {
    const changed = this.#changed.get(key);
    if (changed !== undefined) return changed === GONE ? undefined : changed;
    const at = this.#saved.indexOf(key);
    return at < 0 ? undefined : this.#versions[at];
  }

  set(key: string, v: number): void {
    this.#changed.set(key, v);
  }

  delete(key: string): void {
    if (this.#saved.indexOf(key) < 0) this.#changed.delete(key);
    else this.#changed.set(key, GONE);
  }

  /**
   * Every live key and its version as a record holds them ({@link SavedTable}): the saved keys'
   * bytes copied as they are, merged in order with the changes.
   */
  toSaved(): SavedTable {
    const saved = this.#saved;
    const { overrides, extra } = this.#placeChanges();
    if (!bytesHoldKeys(extra)) return this.#asJson(extra);
    const out = new KeysBuilder();
    const versions: number[] = [];
    const put = (bytes: Uint8Array | string, v: number | undefined): void => {
      if (v === undefined || v === GONE) return;
      if (typeof bytes === 'string') out.putKey(bytes);
      else out.put(bytes);
      versions.push(v);
    };
    let j = 0;
    for (let i = 0; i < saved.length; i++) {
      const start = saved.start(i);
      const end = saved.ends[i]!;
      for (; j < extra.length && compareKey(extra[j]!, saved.bytes, start, end) < 0; j++)
        put(extra[j]!, this.#changed.get(extra[j]!));
      put(saved.bytes.subarray(start, end), overrides.get(i) ?? this.#versions[i]);
    }
    for (; j < extra.length; j++) put(extra[j]!, this.#changed.get(extra[j]!));
    const { bytes, ends } = out.result();
    return { keys: bytes, ends, versions: Float64Array.from(versions) };
  }

  /** The changes by place among the saved keys (`overrides`), and the keys the snapshot did not hold (`extra`, sorted). */
  #placeChanges(): { overrides: Map<number, number>; extra: string[] } {
    const overrides = new Map<number, number>();
    const extra: string[] = [];
    for (const [key, v] of this.#changed) {
      const at = this.#saved.indexOf(key);
      if (at < 0) extra.push(key);
      else overrides.set(at, v);
    }
    // The default sort compares UTF-16 code units: the order of `<` on strings (and 4x faster than a comparator).
    extra.sort();
    return { overrides, extra };
  }

  /** The older form, for keys UTF-8 cannot hold: every live key as a JSON array (sorted) and its version. */
  #asJson(extra: readonly string[]): SavedTable {
    const keys = [...Array.from({ length: this.#saved.length }, (_, i) => this.#saved.at(i)), ...extra].sort();
    const live = keys.filter((k) => this.get(k) !== undefined);
    return { keys: ENCODER.encode(JSON.stringify(live)), versions: Float64Array.from(live, (k) => this.get(k)!) };
  }

  /** A table of a record ({@link SavedTable}), or undefined when it is not one. */
  static fromSaved(value: unknown): TableVersions | undefined {
    const { keys, ends, versions } = (value ?? {}) as Partial<SavedTable>;
    if (!(versions instanceof Float64Array)) return undefined;
    if (ends !== undefined) {
      const sorted =
        ends instanceof Uint32Array && keys instanceof Uint8Array && ends.length === versions.length
          ? SortedKeys.read(keys, ends)
          : undefined;
      return sorted === undefined ? undefined : TableVersions.saved(sorted, versions);
    }
    return TableVersions.#fromJson(keys, versions);
  }

  /** A table of the older form: keys as a JSON array (sorted, or in any order: held as changes). */
  static #fromJson(keys: unknown, versions: Float64Array): TableVersions | undefined {
    if (!(typeof keys === 'string' || keys instanceof Uint8Array)) return undefined;
    let names: unknown;
    try {
      names = JSON.parse(typeof keys === 'string' ? keys : new TextDecoder().decode(keys));
    } catch {
      return undefined;
    }
    if (!Array.isArray(names) || names.length !== versions.length) return undefined;
    if (!names.every((k) => typeof k === 'string')) return undefined;
    if (sortedKeys(names) && bytesHoldKeys(names)) return TableVersions.saved(SortedKeys.of(names), versions);
    const table = new TableVersions();
    for (let i = 0; i < names.length; i++) table.set(names[i]!, versions[i]!);
    return table;
  }
}

/** Every row's current version, by table and key (see the file's head). */
export class FreshnessLedger {
  readonly #versions = new Map<string, TableVersions>();
  /** The last write transaction applied. */
  head = 0;
  /** The transaction the last snapshot (loaded or saved) reflects. */
  savedAt = 0;
  /** Loaded: rows are checked from here on (before, only the store's own upgrade reads them). */
  loaded = false;
  /**
   * Behind a gap: another instance saved the snapshot and dropped journal rows this instance had
   * not read yet. Until it reloads, a row newer than its head is taken as it is.
   */
  stale = false;
  /** The numbers of this instance's write transactions under way: their rows are seen only inside them. */
  readonly pending = new Set<number>();

  #table(table: string): TableVersions {
    let versions = this.#versions.get(table);
    if (versions === undefined) {
      versions = new TableVersions();
      this.#versions.set(table, versions);
    }
    return versions;
  }

  /** The verdict on the row `key` of `table` read with version `v` (undefined: a row sealed before versions). */
  check(table: string, key: string, v: number | undefined): FreshnessVerdict {
    if (!this.loaded || (v !== undefined && this.pending.has(v))) return undefined;
    const known = this.#versions.get(table)?.get(key);
    const version = v ?? 0;
    if (version > this.head)
      return this.stale ? undefined : 'newer than the last write the store recorded (its record was rolled back)';
    if (known === version) return undefined;
    if (known === undefined) return 'deleted or never written, then put back';
    return version < known ? 'an older version put back (rolled back)' : 'not the version the store recorded';
  }

  /** Whether a row of version `v` needs the journal read first (written by another instance since). */
  behind(v: number | undefined): boolean {
    return this.loaded && !this.stale && (v ?? 0) > this.head && !this.pending.has(v ?? 0);
  }

  /** Applies transaction `n`'s entries (all versioned `n`); an earlier or repeated one is ignored. */
  apply(n: number, entries: readonly JournalEntry[]): void {
    if (n <= this.head) return;
    for (const [table, key, op] of entries) {
      if (op === PUT) this.#table(table).set(key, n);
      else this.#versions.get(table)?.delete(key);
    }
    this.head = n;
  }

  /** Sets one row's version (a scan, freshness-snapshot.ts). */
  set(table: string, key: string, v: number): void {
    this.#table(table).set(key, v);
  }

  /** Forgets everything (before a load). */
  clear(): void {
    this.#versions.clear();
    this.head = 0;
    this.savedAt = 0;
    this.stale = false;
  }

  /** The ledger as a snapshot record: per table its keys, sorted, and their versions ({@link SavedTable}). */
  toRecord(): { n: number; tables: Record<string, SavedTable> } {
    const tables: Record<string, SavedTable> = {};
    for (const [table, versions] of this.#versions) tables[table] = versions.toSaved();
    return { n: this.head, tables };
  }

  /** Loads a snapshot record made by {@link toRecord} (or by an older version of it); false when it is not one. */
  fromRecord(record: unknown): boolean {
    if (typeof record !== 'object' || record === null) return false;
    const { n, tables } = record as { n?: unknown; tables?: unknown };
    if (!Number.isSafeInteger(n) || typeof tables !== 'object' || tables === null) return false;
    const loaded = new Map<string, TableVersions>();
    for (const [table, value] of Object.entries(tables)) {
      const versions = TableVersions.fromSaved(value);
      if (versions === undefined) return false;
      loaded.set(table, versions);
    }
    this.clear();
    for (const [table, map] of loaded) this.#versions.set(table, map);
    this.head = n as number;
    this.savedAt = this.head;
    return true;
  }
}
