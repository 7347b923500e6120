/**
 * Encryption at rest as a Dexie DBCore middleware, the layer closest to
 * IndexedDB: every row of a sealed table is written as the fields its indexes
 * read (in clear, or blinded) plus `$`, the whole row sealed (row-cipher.ts);
 * reads open `$` and hand the row back as it was written. Everything above
 * (Dexie's hooks, the engine, the one write path) sees plain rows and needs no
 * change, and the in-memory indexes are built from opened rows.
 *
 * The seal's additional data is the store id, the table and every field kept
 * beside it (the primary key among them, and the owner key of an outbound
 * row): a row moved to another id, scope or table, or copied from another
 * store, does not open. Such a row, or one that is not sealed at all, is
 * skipped and reported (`onDamaged`), as the engine does with any damaged row;
 * the rest of the store works.
 *
 * Indexes cannot read sealed values, so each indexed field is one of:
 * - kept in clear: ids, the scope ids, tiers, times, positions (see the README's
 *   "What an encrypted store reveals");
 * - blinded (row-cipher.ts `blind`): content hashes, keys of key/value
 *   memories and keyword terms, which must not be testable against a guess.
 *   A blinded index answers equality lookups only; a range or an ordered walk
 *   over it is refused (StoreError), never answered wrong.
 * A table this file does not name is refused whole: a table added to the schema
 * must be listed here (sealed, or in clear with a reason) before it can be used.
 *
 * Freshness (row-freshness.ts, freshness-journal.ts): each row written carries its write
 * transaction's number as its version (`$v`, bound into the seal); every transaction reaches
 * `meta` (this middleware adds it to each one) to journal what it wrote. A row whose version is
 * not the one the ledger holds (an older copy put back under its id) is refused and reported.
 */
import {
  type DBCore,
  type DBCoreCursor,
  type DBCoreIndex,
  type DBCoreMutateResponse,
  type DBCoreQuery,
  type DBCoreTable,
  type DBCoreTransaction,
  type Middleware,
} from 'dexie';
import { StoreError } from '../errors.js';
import { AT_REST_KEY } from './at-rest-key.js';
import { decryptBulk } from './bulk-decrypt.js';
import { FreshnessJournal, type MetaRowSealing, type ScannedRow, type TxState } from './freshness-journal.js';
import type { RowCipher } from './row-cipher.js';
import { DELETE, PUT, isFreshnessKey, keyText, type JournalEntry } from './row-freshness.js';
import { decodeValue, maxValueBytes, rowParts, writeValue } from './value-codec.js';

/** What a sealed table keeps beside the seal. */
interface SealedTable {
  /** Fields kept in clear (the primary key and the indexes that may show them). */
  clear: readonly string[];
  /** Fields kept as blind values (a multi-entry field: each entry blinded). */
  blind: readonly string[];
  /**
   * Fields once kept blinded beside the seal and no longer written, since no index reads them:
   * still bound into the seal where they were (as stored, or null), so the rows sealed before open.
   */
  retired?: readonly string[];
  /** The one row kept in clear, by its primary key: the key header, which must be read before any key is known. */
  clearRow?: string;
}

/** The tables whose rows are sealed, and what each keeps beside its seal. */
export const SEALED_TABLES: Readonly<Record<string, SealedTable>> = {
  messages: { clear: ['id', 'threadId', 'inContext', 'position', 'createdAt'], blind: ['hash'] },
  memories: {
    clear: ['id', 'tier', 'userId', 'agentId', 'runId', 'projectId', 'sessionId', 'createdAt', 'updatedAt'],
    blind: ['hash', 'key'],
  },
  vectors: { clear: ['id'], blind: [] },
  history: { clear: ['seq', 'recordId'], blind: [] },
  coreBlocks: { clear: ['agentId', 'userId'], blind: [] },
  traces: { clear: ['id', 'sessionId', 'at'], blind: [] },
  meta: { clear: ['key'], blind: [], clearRow: AT_REST_KEY },
  // The terms' keyed hashes (`k`) went with the term index (schema v5): the terms are inside the seal only.
  terms: { clear: ['c', 'd'], blind: [], retired: ['k'] },
};

/**
 * Tables kept in clear, with the reason: `changes` holds which record changed,
 * how and when (no text), what the engine replays on every search; sealing it
 * would cost every catch-up and hide nothing the sealed tables' keys do not show.
 */
export const CLEAR_TABLES: readonly string[] = ['changes'];

/** The field that holds the sealed row. */
const SEAL = '$';
/** The field of an outbound-keyed row that names its key (bound into the seal). */
const OWNER = '$k';
/** The field of a row's version (its write transaction's number, row-freshness.ts), bound into the seal. */
const VERSION = '$v';
/** What a row's sealed bytes hold in place of a field kept in clear beside them (put back on open). */
const CLEAR_PLACE = 0;
/** Format 1: a row sealed before versions (or one of the ledger's own rows); 2: with its version. */
const AAD_FORMAT = 1;
const AAD_VERSIONED = 2;
/** Dexie's DBCoreRangeType (an ambient const enum, which this build cannot import). */
const RANGE = { equal: 1, any: 3, never: 4 } as const;
/** Damaged rows kept until someone listens (found while the store opens); more are dropped. */
const EARLY_DAMAGE = 1000;
/**
 * The log head's `meta` rows a search's reads opened, kept to be opened again without the cipher
 * when read unchanged (TableSealing `#openBytes`); the memo is emptied when full.
 */
const OPENED_MEMO = 4096;
/**
 * The one table whose rows {@link RowSealing.openStored} keeps opened: every search reads the same
 * few head rows. Memories are not kept: at 100k a search seldom meets one again, and keeping each
 * one read (its sealed bytes, additional data and bytes) only fed garbage collection, whose pauses
 * were the encrypted store's search tail (bench/at-rest; REPORT.md, at-rest, session 41).
 */
const MEMO_TABLE = 'meta';

/** A stored row that does not open: the table, its key, what is wrong. */
export interface SealedRowDamage {
  table: string;
  key: string;
  reason: string;
}

/**
 * Bytes already sealed by their writer (an index snapshot's, see snapshot-chunks.ts), stored as
 * they are in a `meta` chunk row (`<key>:<n>`): only a reader that opens them reads such a row.
 */
export class PreSealedBytes {
  constructor(readonly bytes: Uint8Array) {}
}

/** A `meta` chunk row's key (snapshot-chunks.ts), the only rows that may hold pre-sealed bytes. */
const CHUNK_KEY = /:\d+$/;
/** The field of a stored row that holds pre-sealed bytes. */
const PRE_SEALED = '$b';
const BULK_IV_BYTES = 12;

/**
 * The state of one open encrypted store: its cipher, its id, the key of bulk bytes, and whom to
 * tell of a damaged row.
 */
export class RowSealing {
  readonly cipher: RowCipher;
  readonly storeId: string;
  readonly #bulkKey: Promise<CryptoKey>;
  /** The rows' versions and their journal (row-freshness.ts). */
  readonly journal = new FreshnessJournal();
  /** Every sealed table's stored keys and versions (set by the middleware; the ledger's scan). */
  scan: ((trans: DBCoreTransaction) => Promise<ScannedRow[]>) | undefined;
  /** Each sealed table's sealing, by name (set by the middleware): {@link openStored} opens with it. */
  tables: ReadonlyMap<string, TableSealing> = new Map();
  #listener: ((row: SealedRowDamage) => void) | undefined;
  readonly #early: SealedRowDamage[] = [];
  readonly #report = (row: SealedRowDamage): void => {
    if (this.#listener !== undefined) this.#listener(row);
    else if (this.#early.length < EARLY_DAMAGE) this.#early.push(row);
  };

  /** Reports a row that does not open; kept until a listener is set (rows found while the store opens). */
  get onDamaged(): (row: SealedRowDamage) => void {
    return this.#report;
  }

  /** The listener of damaged rows (the engine reports them like any damaged row); told of earlier ones at once. */
  set onDamaged(listener: ((row: SealedRowDamage) => void) | undefined) {
    this.#listener = listener;
    if (listener !== undefined) for (const row of this.#early.splice(0)) listener(row);
  }

  /**
   * Whether `stored`, read from the sealed table `table` straight from IndexedDB (below this
   * middleware, head-with-rows.ts), was written by another instance since the ledger last read the
   * freshness journal: then the journal must be read first, which only a read through the
   * middleware does, and {@link openStored} would refuse the row.
   */
  behindStored(table: string, stored: unknown): boolean {
    return this.#table(table).behind(stored);
  }

  /**
   * The row `stored` holds, read under `key` from the sealed table `table` straight from IndexedDB,
   * opened and checked by the middleware's own code: undefined when absent or when it does not open
   * (reported, as the middleware reports it). Ask {@link behindStored} first.
   */
  openStored(table: string, stored: unknown, key: unknown): unknown {
    const row = this.#table(table).open(stored, key, table === MEMO_TABLE);
    return row === DAMAGED ? undefined : row;
  }

  /**
   * {@link openStored} that reports nothing and throws nothing: the row, undefined when absent, or
   * {@link NOT_OPENED} when it does not open or cannot be opened now (a cipher wiped as the store
   * closes). The caller opens it again through {@link openStored}, which reports or throws, so that a
   * row can be opened as it arrives, inside an IndexedDB success handler (where a throw would abort
   * the read and surface as the page's uncaught error), before the caller knows whether it will use it.
   */
  openStoredQuietly(table: string, stored: unknown, key: unknown): unknown {
    try {
      const row = this.#table(table).open(stored, key, table === MEMO_TABLE, false);
      return row === DAMAGED ? NOT_OPENED : row;
    } catch {
      return NOT_OPENED;
    }
  }

  #table(name: string): TableSealing {
    const table = this.tables.get(name);
    if (table === undefined) throw unlisted(name);
    return table;
  }

  /** `bulkKey`: the AES-GCM key of {@link sealBulk} (at-rest-key.ts `bulkKeyOf`), awaited on first use. */
  constructor(cipher: RowCipher, storeId: string, bulkKey: Promise<CryptoKey>) {
    this.cipher = cipher;
    this.storeId = storeId;
    this.#bulkKey = bulkKey;
    bulkKey.catch(() => undefined); // a failed import surfaces where the key is used
  }

  #aad(what: string): Uint8Array<ArrayBuffer> {
    return new TextEncoder().encode(JSON.stringify([AAD_FORMAT, this.storeId, 'bulk', what]));
  }

  /**
   * Large bytes (an index snapshot: up to hundreds of MB) sealed with WebCrypto's AES-GCM, several
   * times faster than the row cipher; asynchronous, so never inside a transaction. `what` names
   * them (bound in as additional data): IV, ciphertext and tag.
   */
  async sealBulk(bytes: Uint8Array<ArrayBuffer>, what: string): Promise<Uint8Array> {
    const iv = crypto.getRandomValues(new Uint8Array(BULK_IV_BYTES));
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: this.#aad(what) },
      await this.#bulkKey,
      bytes,
    );
    const out = new Uint8Array(BULK_IV_BYTES + sealed.byteLength);
    out.set(iv);
    out.set(new Uint8Array(sealed), BULK_IV_BYTES);
    return out;
  }

  /**
   * What {@link sealBulk} sealed as `what`; undefined when it does not open (changed, moved,
   * another store). `sealed` is handed over (to a worker, bulk-decrypt.ts): the caller must not use it afterwards.
   */
  async openBulk(sealed: Uint8Array<ArrayBuffer>, what: string): Promise<Uint8Array | undefined> {
    if (sealed.length < BULK_IV_BYTES + 16) return undefined;
    let key: CryptoKey;
    try {
      key = await this.#bulkKey;
    } catch {
      return undefined;
    }
    // `sealed` is handed to a worker where there is one (bulk-decrypt.ts): not to be used after this.
    return decryptBulk({ key, ivBytes: BULK_IV_BYTES, aad: this.#aad(what), sealed });
  }
}

/** A row that did not open (kept apart from undefined, which is an absent row). */
const DAMAGED = Symbol('damaged');
/** What {@link RowSealing.openStoredQuietly} gives for a row that does not open (nothing reported). */
export const NOT_OPENED = Symbol('not opened');

function sameKey(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** The fields of a key path (null for an outbound primary key). */
function pathFields(keyPath: null | string | string[]): string[] {
  return keyPath === null ? [] : typeof keyPath === 'string' ? [keyPath] : keyPath;
}

/** One table's sealing: how rows are sealed and opened and how index queries are blinded. */
class TableSealing {
  readonly #sealing: RowSealing;
  readonly #name: string;
  readonly #spec: SealedTable;
  readonly #blind: ReadonlySet<string>;
  /** Fields bound into the seal, in a fixed order. */
  readonly #bound: readonly string[];
  /** The auto-increment key field, set by IndexedDB after sealing, so not bound. */
  readonly #autoKey: string | undefined;
  readonly outbound: boolean;
  readonly #keyPath: null | string | string[];
  /**
   * Rows opened by {@link RowSealing.openStored} (of {@link MEMO_TABLE}: the log head's rows, which
   * every search reads), by key: the sealed bytes and additional data they were opened from, and what they held. Opening is
   * a function of those two alone (and the key), so the same two give the same bytes without the
   * cipher; every other check runs on every read. A write or delete of a key drops its entry, so
   * nothing of a row deleted or changed here stays in memory.
   */
  readonly #opened = new Map<string, { sealed: Uint8Array; aad: string; bytes: Uint8Array }>();

  constructor(sealing: RowSealing, name: string, spec: SealedTable, primaryKey: DBCoreIndex) {
    this.#sealing = sealing;
    this.#name = name;
    this.#spec = spec;
    // A retired field is looked up as it was kept: blinded (a store not yet upgraded still indexes it).
    this.#blind = new Set([...spec.blind, ...(spec.retired ?? [])]);
    this.outbound = primaryKey.outbound === true;
    this.#keyPath = primaryKey.keyPath;
    this.#autoKey = primaryKey.autoIncrement === true ? (primaryKey.keyPath as string) : undefined;
    this.#bound = [...spec.clear, ...spec.blind, ...(spec.retired ?? []), ...(this.outbound ? [OWNER] : [])].filter(
      (f) => f !== this.#autoKey,
    );
  }

  /** The seal's additional data of `stored` (as JSON; sealed as its UTF-8 bytes). */
  #aad(stored: Record<string, unknown>): string {
    const fields = this.#bound.map((f) => stored[f] ?? null);
    const v = stored[VERSION];
    return JSON.stringify(
      v === undefined
        ? [AAD_FORMAT, this.#sealing.storeId, this.#name, fields]
        : [AAD_VERSIONED, this.#sealing.storeId, this.#name, fields, v],
    );
  }

  /** The primary key of a stored row (its clear fields, or the owner key of an outbound row). */
  keyOf(stored: Record<string, unknown>): unknown {
    const path = this.#keyPath;
    if (path === null) return stored[OWNER];
    return typeof path === 'string' ? stored[path] : path.map((f) => stored[f]);
  }

  /** Whether the row under `key` is versioned: all but the ledger's own `meta` rows. */
  versioned(key: unknown): boolean {
    return this.#name !== 'meta' || !isFreshnessKey(key);
  }

  /** Whether `stored` was written by a transaction the ledger has not read yet (another instance's). */
  behind(stored: unknown): boolean {
    if (typeof stored !== 'object' || stored === null) return false;
    const v = (stored as Record<string, unknown>)[VERSION];
    return typeof v === 'number' && this.#sealing.journal.ledger.behind(v);
  }

  /** The journal entries of the rows `values` (as stored) whose writes succeeded under `keys`. */
  written(
    values: readonly Record<string, unknown>[],
    keys: readonly unknown[],
    res: DBCoreMutateResponse,
  ): JournalEntry[] {
    const out: JournalEntry[] = [];
    values.forEach((stored, i) => {
      if (res.failures[i] !== undefined || stored[VERSION] === undefined) return;
      out.push([this.#name, keyText(keys[i]), PUT]);
    });
    return out;
  }

  /**
   * The journal entries of a put of `values` (as stored, under `keys` when outbound), one per
   * row (undefined for a row not versioned), named before IndexedDB answers; undefined when a
   * key is not known yet (one IndexedDB will make).
   */
  putEntries(
    values: readonly Record<string, unknown>[],
    keys: readonly unknown[] | undefined,
  ): (JournalEntry | undefined)[] | undefined {
    const out: (JournalEntry | undefined)[] = [];
    for (let i = 0; i < values.length; i++) {
      const stored = values[i]!;
      if (stored[VERSION] === undefined) {
        out.push(undefined);
        continue;
      }
      const key = this.outbound ? keys?.[i] : this.keyOf(stored);
      if (key === undefined || (Array.isArray(key) && key.includes(undefined))) return undefined;
      out.push([this.#name, keyText(key), PUT]);
    }
    return out;
  }

  /** Keys a delete may remove: the ledger's own rows are its to delete. */
  deletable(keys: readonly unknown[]): unknown[] {
    return this.#name === 'meta' ? keys.filter((k) => !isFreshnessKey(k)) : [...keys];
  }

  /** A stored row's key and version, for the ledger's scan (the ledger's own and unsealed rows are left out). */
  scanned(stored: unknown, key: unknown): ScannedRow | undefined {
    if (typeof stored !== 'object' || stored === null || !(SEAL in stored) || !this.versioned(key)) return undefined;
    const v = (stored as Record<string, unknown>)[VERSION];
    return { table: this.#name, key: keyText(key), v: typeof v === 'number' ? v : undefined };
  }

  #blindOne(field: string, value: unknown): string {
    return this.#sealing.cipher.blind(
      `${this.#name}.${field}`,
      typeof value === 'string' ? value : JSON.stringify(value),
    );
  }

  #blindValue(field: string, value: unknown): unknown {
    return Array.isArray(value) ? value.map((v) => this.#blindOne(field, v)) : this.#blindOne(field, value);
  }

  /**
   * The stored form of `row` (under `key` when the table's keys are outbound), versioned `n`
   * (its write transaction's number) unless it is one of the ledger's own rows.
   */
  seal(row: unknown, key: unknown, n: number): Record<string, unknown> {
    if (typeof row !== 'object' || row === null) throw new StoreError(`a ${this.#name} row must be an object`);
    const plain = row as Record<string, unknown>;
    if (this.#spec.clearRow !== undefined && plain[this.#spec.clear[0]!] === this.#spec.clearRow) return plain;
    if (this.#preSealedRow(plain) && plain['value'] instanceof PreSealedBytes)
      return { key: plain['key'], [PRE_SEALED]: plain['value'].bytes };
    const stored: Record<string, unknown> = {};
    // The fields kept in clear beside the seal are sealed as a 0 in their place (keeping the row's
    // key order): bound in as additional data, they are put back from beside the seal when it opens.
    const inner: Record<string, unknown> = { ...plain };
    for (const f of this.#spec.clear)
      if (plain[f] !== undefined) {
        stored[f] = plain[f];
        inner[f] = CLEAR_PLACE;
      }
    for (const f of this.#spec.blind) if (plain[f] !== undefined) stored[f] = this.#blindValue(f, plain[f]);
    if (this.outbound) stored[OWNER] = key;
    if (this.versioned(this.outbound ? key : this.keyOf(plain))) stored[VERSION] = n;
    const parts = rowParts(inner);
    stored[SEAL] = this.#sealing.cipher.sealWritten(
      maxValueBytes(parts),
      (into) => writeValue(parts, into),
      this.#aad(stored),
    );
    return stored;
  }

  /**
   * The row `stored` holds, DAMAGED (reported, unless `report` is false) when it does not open,
   * undefined when absent. `memo`: the bytes it opened to are kept for the next read of the row (see `#opened`).
   */
  open(stored: unknown, key: unknown, memo = false, report = true): unknown {
    if (stored === undefined) return undefined;
    const damaged = (reason: string): typeof DAMAGED => {
      if (report) this.#sealing.onDamaged({ table: this.#name, key: keyText(key ?? this.#keyOf(stored)), reason });
      return DAMAGED;
    };
    if (typeof stored !== 'object' || stored === null) return damaged('not a row');
    const s = stored as Record<string, unknown>;
    if (this.#spec.clearRow !== undefined && s[this.#spec.clear[0]!] === this.#spec.clearRow) return s;
    // Handed to the one reader that opens it (snapshot-chunks.ts); bytes that do not open are damaged there.
    if (this.#preSealedRow(s) && s[PRE_SEALED] instanceof Uint8Array && !(SEAL in s))
      return { key: s['key'], value: s[PRE_SEALED] };
    if (!(SEAL in s)) return damaged('not sealed: a row in clear in an encrypted store');
    if (this.outbound && key !== undefined && !sameKey(s[OWNER], key))
      return damaged('sealed under another key (moved)');
    const sealed = s[SEAL];
    const bytes = sealed instanceof Uint8Array ? this.#openBytes(sealed, s, memo) : undefined;
    if (bytes === undefined) return damaged('does not open: moved, from another store, or changed');
    let row: unknown;
    try {
      row = decodeValue(bytes);
    } catch {
      return damaged('opens but does not decode');
    }
    if (typeof row !== 'object' || row === null) return damaged('opens but is not a row');
    this.#putClearBack(row as Record<string, unknown>, s);
    const verdict = this.#freshness(s);
    return verdict === undefined ? row : damaged(verdict);
  }

  /** Puts the fields kept in clear beside the seal back into the row it opened to. */
  #putClearBack(opened: Record<string, unknown>, stored: Record<string, unknown>): void {
    // Checked by the seal's additional data (rows sealed before held them inside too).
    for (const f of this.#spec.clear) if (stored[f] !== undefined) opened[f] = stored[f];
    if (this.#autoKey !== undefined) opened[this.#autoKey] = stored[this.#autoKey];
  }

  /** What is wrong with the stored row's version by the ledger (an older one put back, one unknown), if anything. */
  #freshness(stored: Record<string, unknown>): string | undefined {
    const primary = this.keyOf(stored);
    if (!this.versioned(primary)) return undefined;
    const v = stored[VERSION];
    return this.#sealing.journal.ledger.check(this.#name, keyText(primary), typeof v === 'number' ? v : undefined);
  }

  /** The bytes `sealed` opens to under the additional data of `stored`, from `#opened` when it holds them (`memo`). */
  #openBytes(sealed: Uint8Array, stored: Record<string, unknown>, memo: boolean): Uint8Array | undefined {
    const aad = this.#aad(stored);
    if (!memo) return this.#sealing.cipher.open(sealed, aad);
    const key = keyText(this.keyOf(stored));
    const known = this.#opened.get(key);
    if (known !== undefined && known.aad === aad && sameBytes(known.sealed, sealed)) return known.bytes;
    const bytes = this.#sealing.cipher.open(sealed, aad);
    if (bytes === undefined) return undefined;
    if (this.#opened.size >= OPENED_MEMO) this.#opened.clear();
    this.#opened.set(key, { sealed, aad, bytes });
    return bytes;
  }

  /** Drops what `#opened` holds of the rows `keys` (written or deleted); all of it when they are not known. */
  dropOpened(keys: readonly unknown[] | undefined): void {
    if (this.#opened.size === 0) return;
    if (keys === undefined) this.#opened.clear();
    else for (const key of keys) this.#opened.delete(keyText(key));
  }

  /** Whether `row` is a `meta` chunk row, which may hold pre-sealed bytes. */
  #preSealedRow(row: Record<string, unknown>): boolean {
    return this.#name === 'meta' && typeof row['key'] === 'string' && CHUNK_KEY.test(row['key']);
  }

  #keyOf(stored: unknown): unknown {
    if (typeof stored !== 'object' || stored === null) return null;
    return this.keyOf(stored as Record<string, unknown>) ?? null;
  }

  /** Whether `index` reads a blinded field. */
  #blinded(index: DBCoreIndex): boolean {
    return pathFields(index.keyPath).some((f) => this.#blind.has(f));
  }

  #blindKey(index: DBCoreIndex, key: unknown): unknown {
    if (typeof index.keyPath === 'string') return this.#blindOne(index.keyPath, key);
    const fields = pathFields(index.keyPath);
    if (!Array.isArray(key) || key.length !== fields.length) throw this.#refused(index);
    return (key as unknown[]).map((k, i) => (this.#blind.has(fields[i]!) ? this.#blindOne(fields[i]!, k) : k));
  }

  #refused(index: DBCoreIndex): StoreError {
    return new StoreError(
      `${this.#name}.${index.name ?? 'primary key'} is a blinded index in an encrypted store: it answers equality lookups only`,
    );
  }

  /** The query with its key range blinded when its index reads a blinded field. */
  query(query: DBCoreQuery): DBCoreQuery {
    if (!this.#blinded(query.index)) return query;
    const { range } = query;
    const type: number = range.type;
    if (type === RANGE.any || type === RANGE.never) return query;
    const equal = type === RANGE.equal || (!range.lowerOpen && !range.upperOpen && sameKey(range.lower, range.upper));
    if (!equal) throw this.#refused(query.index);
    const key = this.#blindKey(query.index, range.lower);
    return { index: query.index, range: { ...range, lower: key, upper: key, lowerOpen: false, upperOpen: false } };
  }

  /** The table's fields that each index of `schema` reads must be kept beside the seal. */
  checkIndexes(indexes: readonly DBCoreIndex[], primaryKey: DBCoreIndex): void {
    const kept = new Set([...this.#spec.clear, ...this.#spec.blind, ...(this.#spec.retired ?? [])]);
    for (const index of [primaryKey, ...indexes])
      for (const field of pathFields(index.keyPath))
        if (!kept.has(field))
          throw new StoreError(
            `table ${this.#name} indexes ${field}, which an encrypted store does not keep beside the seal (row-sealing.ts)`,
          );
    if (primaryKey.keyPath !== null && this.#blinded(primaryKey))
      throw new StoreError(`table ${this.#name}: a primary key cannot be blinded`);
  }
}

function unlisted(name: string): StoreError {
  return new StoreError(
    `table ${name} is neither sealed nor listed as clear in an encrypted store (row-sealing.ts); refused`,
  );
}

/** Whether `a` and `b` hold the same bytes. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A table that refuses every call (a table the sealing does not know). */
function refusingTable(down: DBCoreTable): DBCoreTable {
  const refuse = (): Promise<never> => Promise.reject(unlisted(down.name));
  return { ...down, mutate: refuse, get: refuse, getMany: refuse, query: refuse, openCursor: refuse, count: refuse };
}

/** A cursor whose values are opened; rows that do not open are skipped (and reported). */
function openingCursor(cursor: DBCoreCursor, table: TableSealing, journal: FreshnessJournal): DBCoreCursor {
  let opened: unknown;
  let at: unknown = DAMAGED;
  const current = (): unknown => {
    if (at !== cursor.primaryKey || opened === DAMAGED) {
      at = cursor.primaryKey;
      opened = table.open(cursor.value, cursor.primaryKey);
    }
    return opened;
  };
  return Object.create(cursor, {
    key: { get: (): unknown => cursor.key },
    primaryKey: { get: (): unknown => cursor.primaryKey },
    value: { get: () => (current() === DAMAGED ? undefined : opened) },
    start: {
      value: (onNext: () => void) =>
        cursor.start(() => {
          at = DAMAGED;
          const step = (): void => {
            if (current() === DAMAGED) cursor.continue();
            else onNext();
          };
          // A row another instance wrote since the ledger last read the journal: read it first.
          if (table.behind(cursor.value))
            journal.catchUp(cursor.trans).then(step, (e: unknown) => {
              cursor.fail(
                e instanceof Error ? e : new StoreError('reading the freshness journal failed', { cause: e }),
              );
            });
          else step();
        }),
    },
  }) as DBCoreCursor;
}

/** The rows of `values` that opened (the damaged ones are skipped, and reported). */
function openAll(table: TableSealing, values: readonly unknown[], keys: readonly unknown[] | undefined): unknown[] {
  const out: unknown[] = [];
  values.forEach((v, i) => {
    const row = table.open(v, keys?.[i]);
    if (row !== DAMAGED) out.push(row);
  });
  return out;
}

/** The row `stored` holds, undefined when absent or damaged. */
function openOne(table: TableSealing, stored: unknown, key: unknown): unknown {
  const row = table.open(stored, key);
  return row === DAMAGED ? undefined : row;
}

/** `stored` once the ledger has read the journal when one of `rows` is newer than it (another instance's). */
function fresh<T>(
  table: TableSealing,
  journal: FreshnessJournal,
  trans: DBCoreTransaction,
  rows: readonly unknown[],
  stored: T,
): T | Promise<T> {
  return rows.some((r) => table.behind(r)) ? journal.catchUp(trans).then(() => stored) : stored;
}

/**
 * `write` (the rows' own requests) and the journal part naming `entries`, made at once so both
 * land in one round trip; a row whose write failed (the transaction going on) is struck from
 * the part afterwards. `entries` holds one entry per request, in order.
 */
function journaled(
  journal: FreshnessJournal,
  trans: DBCoreTransaction,
  tx: TxState,
  write: Promise<DBCoreMutateResponse>,
  entries: readonly (JournalEntry | undefined)[],
): Promise<DBCoreMutateResponse> {
  const part = journal.record(
    trans,
    tx,
    entries.filter((e) => e !== undefined),
  );
  return Promise.all([write, part]).then(([res, at]) => {
    if (res.numFailures === 0) return res;
    const failed = entries.filter((e, i): e is JournalEntry => e !== undefined && res.failures[i] !== undefined);
    return journal.strike(trans, tx, at, failed).then(() => res);
  });
}

/** A sealed table's writes: rows sealed with the transaction's number, and journaled. */
function sealedMutate(down: DBCoreTable, table: TableSealing, journal: FreshnessJournal): DBCoreTable['mutate'] {
  const deleteKeys = (trans: DBCoreTransaction, tx: TxState, keys: unknown[]): Promise<DBCoreMutateResponse> => {
    table.dropOpened(keys);
    return journaled(
      journal,
      trans,
      tx,
      down.mutate({ type: 'delete', trans, keys }),
      keys.map((k): JournalEntry => [down.name, keyText(k), DELETE]),
    );
  };
  return (req) =>
    journal.begin(req.trans).then((tx) => {
      if (req.type === 'delete') return deleteKeys(req.trans, tx, table.deletable(req.keys));
      if (req.type === 'deleteRange')
        // By key, so the journal names each row it removes (and the ledger's own rows stay).
        return down
          .query({ trans: req.trans, values: false, query: { index: down.schema.primaryKey, range: req.range } })
          .then(({ result }) => deleteKeys(req.trans, tx, table.deletable(result)));
      const values = req.values.map((v, i) => table.seal(v, req.keys?.[i], tx.n));
      table.dropOpened(table.outbound ? req.keys : values.map((v) => table.keyOf(v)));
      const write = down.mutate({ ...req, values });
      const entries = table.putEntries(values, req.keys);
      if (entries !== undefined) return journaled(journal, req.trans, tx, write, entries);
      // Keys IndexedDB makes (auto-increment): journaled once it answers with them.
      return write.then((res) =>
        journal.record(req.trans, tx, table.written(values, res.results ?? req.keys ?? [], res)).then(() => res),
      );
    });
}

/** A sealed table's reads: rows opened (and checked), after the journal when one is newer than the ledger. */
function sealedReads(
  down: DBCoreTable,
  table: TableSealing,
  journal: FreshnessJournal,
): Pick<DBCoreTable, 'get' | 'getMany' | 'query' | 'openCursor' | 'count'> {
  return {
    // .then(), not async functions: Dexie keeps its transaction zone across its own promise chain.
    get: (req) =>
      down
        .get(req)
        .then((stored: unknown) => fresh(table, journal, req.trans, [stored], stored))
        .then((stored: unknown) => openOne(table, stored, req.key)),
    getMany: (req) =>
      down
        .getMany(req)
        .then((rows: unknown[]) => fresh(table, journal, req.trans, rows, rows))
        .then((rows: unknown[]) => rows.map((v, i) => openOne(table, v, req.keys[i]))),
    query: (req) => {
      const query = table.query(req.query);
      if (!req.values) return down.query({ ...req, query });
      if (!table.outbound)
        return down
          .query({ ...req, query })
          .then((res) => fresh(table, journal, req.trans, res.result, res))
          .then((res) => ({ result: openAll(table, res.result, undefined) }));
      // Values come without their keys: ask for both (one transaction, same order) to check each row's owner key.
      return Promise.all([down.query({ ...req, query }), down.query({ ...req, query, values: false })])
        .then((both) => fresh(table, journal, req.trans, both[0].result, both))
        .then(([values, keys]) => ({ result: openAll(table, values.result, keys.result) }));
    },
    openCursor: (req) =>
      down
        .openCursor({ ...req, query: table.query(req.query) })
        .then((cursor) => (cursor === null || !req.values ? cursor : openingCursor(cursor, table, journal))),
    count: (req) => down.count({ ...req, query: table.query(req.query) }),
  };
}

function sealedTable(down: DBCoreTable, table: TableSealing, journal: FreshnessJournal): DBCoreTable {
  return { ...down, mutate: sealedMutate(down, table, journal), ...sealedReads(down, table, journal) };
}

/**
 * Starts reading the number of the write transaction `trans` as it is made: the head's read then
 * goes beside the transaction's first reads instead of before its first write. A failure here
 * surfaces at the first write, which asks again.
 */
function prefetchNumber(journal: FreshnessJournal, trans: DBCoreTransaction): void {
  try {
    journal.begin(trans).catch(() => undefined);
  } catch {
    // the same error comes back from the first write's begin()
  }
}

/** The journal's reads and writes of `meta` rows, through that table's sealing. */
function metaRowSealing(table: TableSealing): MetaRowSealing {
  return {
    seal: (row) => table.seal(row, undefined, 0),
    open: (stored, key) => {
      const row = table.open(stored, key);
      return row === DAMAGED || row === undefined ? undefined : (row as { value?: unknown }).value;
    },
  };
}

/** Reads every stored row of the sealed tables for the freshness scan, each through its table's sealing. */
function scanSealed(
  sealed: readonly { table: TableSealing; down: DBCoreTable }[],
): (trans: DBCoreTransaction) => Promise<ScannedRow[]> {
  return (trans) =>
    Promise.all(
      sealed.map(({ table, down }) =>
        FreshnessJournal.scanTable(down, trans, (stored, key) => table.scanned(stored, key)),
      ),
    ).then((all) => all.flat());
}

/**
 * Every table of `down` as this store keeps it: a sealed table behind its sealing, a table in
 * clear as it is, any other refused. Hands `sealing` its tables' sealings and the freshness scan,
 * and the journal the `meta` table.
 */
function sealTables(down: DBCore, sealing: RowSealing): Map<string, DBCoreTable> {
  const tables = new Map<string, DBCoreTable>();
  const sealed: { table: TableSealing; down: DBCoreTable }[] = [];
  const byName = new Map<string, TableSealing>();
  const { journal } = sealing;
  for (const schema of down.schema.tables) {
    const spec = SEALED_TABLES[schema.name];
    const downTable = down.table(schema.name);
    if (spec === undefined) {
      tables.set(schema.name, CLEAR_TABLES.includes(schema.name) ? downTable : refusingTable(downTable));
      continue;
    }
    const table = new TableSealing(sealing, schema.name, spec, schema.primaryKey);
    table.checkIndexes(schema.indexes, schema.primaryKey);
    tables.set(schema.name, sealedTable(downTable, table, journal));
    sealed.push({ table, down: downTable });
    byName.set(schema.name, table);
    if (schema.name === 'meta') journal.attach(down, metaRowSealing(table));
  }
  sealing.tables = byName;
  sealing.scan = scanSealed(sealed);
  return tables;
}

/** The DBCore above the sealing: `tables` by name, and every transaction reaching `meta`. */
function sealedCore(down: DBCore, tables: ReadonlyMap<string, DBCoreTable>, journal: FreshnessJournal): DBCore {
  return {
    ...down,
    // Every transaction reaches `meta`: a write journals there, a read may read the journal.
    transaction(stores, mode, options) {
      const trans = down.transaction(stores.includes('meta') ? stores : [...stores, 'meta'], mode, options);
      // A write's number, read now: the head's read goes beside the transaction's first reads.
      if (mode === 'readwrite') prefetchNumber(journal, trans);
      return trans;
    },
    table(name) {
      const table = tables.get(name);
      if (table === undefined) throw unlisted(name);
      return table;
    },
  };
}

/**
 * The middleware that seals the rows of an encrypted store (see the file's
 * head). Installed below Dexie's own middlewares, before the store opens.
 * @example
 * db.use(rowSealingMiddleware(new RowSealing(cipher, storeId)))
 */
export function rowSealingMiddleware(sealing: RowSealing): Middleware<DBCore> {
  return {
    stack: 'dbcore',
    name: 'engram-row-sealing',
    // Below every Dexie middleware (the lowest is -1): they all see plain rows.
    level: -10,
    create: (down) => sealedCore(down, sealTables(down, sealing), sealing.journal),
  };
}
