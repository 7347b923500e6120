/**
 * The freshness ledger's I/O at the DBCore level, inside the transactions the row sealing
 * (row-sealing.ts) sees: each write transaction reads the head once, takes the next number,
 * journals what it wrote, and moves the head, all in that transaction; a read that meets a row
 * newer than the ledger reads the journal first; the open loads the ledger (its snapshot, then
 * the journal, or a scan of the rows when either is missing or damaged). The ledger itself and
 * what it decides are in row-freshness.ts.
 */
import type { DBCore, DBCoreKeyRange, DBCoreTable, DBCoreTransaction } from 'dexie';
import { StoreError } from '../errors.js';
import {
  FRESHNESS_HEAD,
  FreshnessLedger,
  JOURNAL_SAVE_EVERY,
  asHead,
  asJournalRow,
  journalAfter,
  journalKey,
  journalRange,
  type FreshnessHead,
  type JournalEntry,
  type JournalRow,
} from './row-freshness.js';

/** Dexie's DBCoreRangeType (an ambient const enum, which this build cannot import). */
const RANGE_ANY = 3;
const RANGE_RANGE = 2;

/** The keys from `lower` to `upper` (excluded). */
function keyRange(lower: string, upper: string): DBCoreKeyRange {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- Dexie's range type is an ambient const enum this build cannot import
  return { type: RANGE_RANGE, lower, upper, lowerOpen: false, upperOpen: true };
}

/** How the journal seals and opens its `meta` rows (the meta table's sealing, row-sealing.ts). */
export interface MetaRowSealing {
  seal(row: { key: string; value: unknown }): Record<string, unknown>;
  /** The row's value, or undefined when it does not open (reported by the sealing). */
  open(stored: unknown, key: string): unknown;
}

/** A stored row of a sealed table as a scan sees it: its table, key and version. */
export interface ScannedRow {
  table: string;
  key: string;
  v: number | undefined;
}

/** The write transaction of this instance under way: its number and what each journal part holds. */
export interface TxState {
  n: number;
  prevParts: number;
  parts: JournalEntry[][];
  /** The part still taking entries (its put is made at the end of the current microtask turn), if any. */
  open?: { part: number; written: Promise<void> } | undefined;
}

/** What the load found wrong, reported as a damaged `meta` row. */
export type LoadDamage = string | undefined;

/** The ledger's I/O (see the file's head). */
export class FreshnessJournal {
  readonly ledger = new FreshnessLedger();
  #core: DBCore | undefined;
  #meta: DBCoreTable | undefined;
  #rows: MetaRowSealing | undefined;
  readonly #tx = new WeakMap<DBCoreTransaction, Promise<TxState>>();
  /** Told when the journal is long enough to be saved into the snapshot (freshness-snapshot.ts). */
  onLong: (() => void) | undefined;
  /** Told when a gap was found: the ledger must be loaded again (freshness-snapshot.ts). */
  onStale: (() => void) | undefined;

  /** The DBCore below the sealing and the meta table's sealing (the middleware's create()). */
  attach(core: DBCore, rows: MetaRowSealing): void {
    this.#core = core;
    this.#meta = core.table('meta');
    this.#rows = rows;
  }

  #table(): { meta: DBCoreTable; rows: MetaRowSealing } {
    if (this.#meta === undefined || this.#rows === undefined)
      throw new StoreError('the freshness journal is used before the store opened');
    return { meta: this.#meta, rows: this.#rows };
  }

  #readHead(trans: DBCoreTransaction): Promise<FreshnessHead | undefined> {
    const { meta, rows } = this.#table();
    return meta.get({ trans, key: FRESHNESS_HEAD }).then((stored: unknown) => {
      if (stored === undefined) return undefined;
      return asHead(rows.open(stored, FRESHNESS_HEAD));
    });
  }

  #readJournal(trans: DBCoreTransaction, after: number): Promise<JournalRow[]> {
    const { meta, rows } = this.#table();
    const [lower, upper] = journalRange(after);
    const index = meta.schema.primaryKey;
    const range = keyRange(lower, upper);
    // Keys and values of one range in one transaction come back in the same order.
    return Promise.all([
      meta.query({ trans, values: true, query: { index, range } }),
      meta.query({ trans, values: false, query: { index, range } }),
    ]).then(([values, keys]) => {
      const out: JournalRow[] = [];
      values.result.forEach((stored, i) => {
        const key = keys.result[i] as string;
        const row = asJournalRow(key, rows.open(stored, key));
        if (row !== undefined) out.push(row);
      });
      return out;
    });
  }

  /** Applies the journal from the ledger's head to `head`; a gap makes the ledger stale (to be loaded again). */
  #follow(trans: DBCoreTransaction, head: FreshnessHead): Promise<void> {
    const { ledger } = this;
    // A head of this instance's own transaction under way: the ledger caught up when it began.
    if (!ledger.loaded || ledger.stale || head.n <= ledger.head || ledger.pending.has(head.n)) return Promise.resolve();
    const from = ledger.head;
    return this.#readJournal(trans, from).then((rows) => {
      if (ledger.head !== from || ledger.stale) return;
      const transactions = journalAfter(rows, from, head);
      if (transactions === undefined) {
        ledger.stale = true;
        this.onStale?.();
        return;
      }
      transactions.forEach((entries, i) => {
        ledger.apply(from + 1 + i, entries);
      });
    });
  }

  /** Reads the journal other instances wrote since the ledger's head (a read met a newer row). */
  catchUp(trans: DBCoreTransaction): Promise<void> {
    return this.#readHead(trans).then((head) => {
      if (head !== undefined) return this.#follow(trans, head);
      return undefined;
    });
  }

  /**
   * The number of the write transaction `trans` (read from the head once per transaction; the
   * ledger catches up first). Its journal is applied to the ledger when it commits. Called as the
   * transaction is made (row-sealing.ts), so the head is read beside the transaction's first reads
   * rather than before its first write.
   */
  begin(trans: DBCoreTransaction): Promise<TxState> {
    let state = this.#tx.get(trans);
    if (state !== undefined) return state;
    state = this.#readHead(trans).then((head) =>
      (head === undefined ? Promise.resolve() : this.#follow(trans, head)).then(() => {
        // A head behind the ledger (put back while this instance runs) does not lower the count.
        const n = Math.max(head?.n ?? 0, this.ledger.head) + 1;
        const tx: TxState = { n, prevParts: head?.parts ?? 0, parts: [] };
        this.ledger.pending.add(n);
        const idb = trans as unknown as IDBTransaction;
        idb.addEventListener('complete', () => {
          this.ledger.pending.delete(n);
          this.#committed(tx);
        });
        idb.addEventListener('abort', () => this.ledger.pending.delete(n));
        return tx;
      }),
    );
    this.#tx.set(trans, state);
    return state;
  }

  #committed(tx: TxState): void {
    const { ledger } = this;
    if (tx.parts.length === 0 || !ledger.loaded || ledger.stale) return;
    if (tx.n !== ledger.head + 1) {
      // Another instance's transactions came between, unread: read them at the next open of a row.
      return;
    }
    ledger.apply(tx.n, tx.parts.flat());
    if (ledger.head - ledger.savedAt >= JOURNAL_SAVE_EVERY) this.onLong?.();
  }

  /**
   * Journals `entries` of the write transaction `trans` and moves the head, in that transaction;
   * resolves to the number of the part that holds them (-1 when there was nothing to journal).
   * The entries of every write made in one microtask turn (a write's tables, sent at once: write.ts)
   * go into one part, put once at the end of that turn: a part and the head cost two requests,
   * so one part per table would cost a batch of adds as much as its rows did (bench/at-rest,
   * REPORT.md at-rest session 44). The turn ends while the transaction is still active: its rows'
   * own requests, made before, are still in flight, and IndexedDB applies the part after them.
   */
  record(trans: DBCoreTransaction, tx: TxState, entries: JournalEntry[]): Promise<number> {
    if (entries.length === 0) return Promise.resolve(-1);
    const open = tx.open;
    if (open !== undefined) {
      const into = tx.parts[open.part]!;
      for (const entry of entries) into.push(entry);
      return open.written.then(() => open.part);
    }
    const part = tx.parts.length;
    tx.parts.push([...entries]);
    const written = Promise.resolve().then(() => {
      tx.open = undefined;
      return this.#putPart(trans, tx, part, true);
    });
    tx.open = { part, written };
    return written.then(() => part);
  }

  /**
   * Strikes `failed` (rows whose own write failed while the transaction goes on) from part
   * `part` of `trans`'s journal, which named them before their writes answered.
   */
  strike(trans: DBCoreTransaction, tx: TxState, part: number, failed: readonly JournalEntry[]): Promise<void> {
    const entries = tx.parts[part];
    if (entries === undefined || failed.length === 0) return Promise.resolve();
    const gone = new Set(failed.map(([table, key]) => `${table}\u0000${key}`));
    tx.parts[part] = entries.filter(([table, key]) => !gone.has(`${table}\u0000${key}`));
    return this.#putPart(trans, tx, part, false);
  }

  /** Puts part `part` of `tx`'s journal as it stands (and the head, counting every part so far). */
  #putPart(trans: DBCoreTransaction, tx: TxState, part: number, withHead: boolean): Promise<void> {
    const { meta, rows } = this.#table();
    const row: JournalRow = {
      n: tx.n,
      part,
      ...(part === 0 ? { prevParts: tx.prevParts } : {}),
      entries: tx.parts[part]!,
    };
    const values = [rows.seal({ key: journalKey(tx.n, part), value: row })];
    if (withHead) values.push(rows.seal({ key: FRESHNESS_HEAD, value: { n: tx.n, parts: tx.parts.length } }));
    return meta.mutate({ type: 'put', trans, values }).then((res) => {
      if (res.numFailures > 0) throw Object.values(res.failures)[0]!;
    });
  }

  /**
   * Loads the ledger: `snapshot` (a record of FreshnessLedger.toRecord, or undefined) and the
   * journal after it, else every row's stored version (`scan`) up to the head. What did not
   * check is returned as the reason (the caller reports it), undefined when all did.
   */
  async load(snapshot: unknown, scan: (trans: DBCoreTransaction) => Promise<ScannedRow[]>): Promise<LoadDamage> {
    const core = this.#core;
    if (core === undefined) throw new StoreError('the freshness journal is used before the store opened');
    const { ledger } = this;
    ledger.loaded = false;
    const tables = core.schema.tables.map((t) => t.name);
    const trans = core.transaction(tables, 'readonly');
    // The head is read while the snapshot is taken in, and the journal after the snapshot beside it (one round trip).
    const reading = this.#readHead(trans);
    // No snapshot yet: the journal from the first transaction (it is dropped only once a snapshot holds it).
    if (snapshot === undefined) ledger.clear();
    const base = snapshot === undefined || ledger.fromRecord(snapshot);
    const [head, journal] = await Promise.all([reading, base ? this.#readJournal(trans, ledger.head) : []]);
    if (head !== undefined && base && ledger.head <= head.n) {
      const transactions = journalAfter(journal, ledger.head, head);
      if (transactions !== undefined) {
        const from = ledger.head;
        transactions.forEach((entries, i) => {
          ledger.apply(from + 1 + i, entries);
        });
        ledger.loaded = true;
        return undefined;
      }
    }
    // No snapshot and journal that check: every row's own version, up to the head (a newer row is refused).
    return this.#loadScanned(await scan(trans), head);
  }

  /** Loads the ledger from every row's stored version (`rows`), up to `head`; what was wrong, as {@link load} returns it. */
  #loadScanned(rows: readonly ScannedRow[], head: FreshnessHead | undefined): LoadDamage {
    const { ledger } = this;
    ledger.clear();
    // A loop, not Math.max(...versions): a large store has more rows than a call takes arguments.
    let newest = 0;
    let versioned = false;
    for (const { v } of rows)
      if (v !== undefined) {
        versioned = true;
        if (v > newest) newest = v;
      }
    const bound = head?.n ?? newest;
    for (const row of rows) if ((row.v ?? 0) <= bound) ledger.set(row.table, row.key, row.v ?? 0);
    ledger.head = bound;
    ledger.loaded = true;
    // A store that never had a head and whose rows carry no versions was made before them (or is new).
    if (head === undefined && !versioned) return undefined;
    if (head === undefined) return 'the freshness record is missing: rows were taken at their stored versions';
    return 'the freshness record (snapshot and journal) does not check: rows were taken at their stored versions';
  }

  /** Deletes the journal up to transaction `n` (saved in the snapshot), in its own transaction. */
  async drop(n: number): Promise<void> {
    const core = this.#core;
    if (core === undefined) return;
    const meta = core.table('meta');
    const trans = core.transaction(['meta'], 'readwrite');
    const range = keyRange(journalKey(0, 0), journalKey(n + 1, 0));
    const done = new Promise<void>((resolve, reject) => {
      const tx = trans as unknown as IDBTransaction;
      tx.addEventListener('complete', () => {
        resolve();
      });
      tx.addEventListener('abort', () => {
        reject(tx.error ?? new StoreError('dropping the freshness journal was aborted'));
      });
    });
    await meta.mutate({ type: 'deleteRange', trans, range });
    await done;
  }

  /** The stored rows' keys and versions of every table, in `trans` (for the scan of a load). */
  static scanTable(
    table: DBCoreTable,
    trans: DBCoreTransaction,
    read: (stored: unknown, key: unknown) => ScannedRow | undefined,
  ): Promise<ScannedRow[]> {
    const query = { index: table.schema.primaryKey, range: { type: RANGE_ANY } as unknown as DBCoreKeyRange };
    return Promise.all([
      table.query({ trans, values: true, query }),
      table.query({ trans, values: false, query }),
    ]).then(([values, keys]) => {
      const out: ScannedRow[] = [];
      values.result.forEach((stored, i) => {
        const row = read(stored, keys.result[i]);
        if (row !== undefined) out.push(row);
      });
      return out;
    });
  }
}
