/**
 * Converting an existing store from plain to encrypted at rest and back (issue 26), in place.
 *
 * Exclusive and atomic: the whole conversion runs inside one IndexedDB upgrade (a
 * `versionchange` transaction over every table, the store's native version bumped by one).
 * - Every other connection to the store must close before it starts. Engram's own (another tab,
 *   another instance in this page) do: Dexie closes a connection on `versionchange`, and when
 *   that instance is next used, its reopen finds the store of the other kind and refuses with a
 *   `KeyError` (open-store.ts, `guardStoreKind`): it never writes a plain row into an encrypted
 *   store or the other way round. A connection that does not close (`blocked`) makes the
 *   conversion refuse with a StoreError before anything is written.
 * - Nothing half-done: an abort (the signal, between pages), a thrown error or a killed process
 *   aborts the upgrade, and IndexedDB leaves the store exactly as it was, version included.
 *
 * Encrypting: every row of a sealed table (row-sealing.ts `SEALED_TABLES`) is read raw (below
 * the sealing) a page at a time and written back through the sealing, so each carries version 1
 * and the freshness journal names it (transaction 1, row-freshness.ts); the key header goes in
 * last. Decrypting: each row is read through the sealing (its seal and version checked against
 * the ledger loaded at the start; a row that does not open is reported and dropped) and written
 * back raw; the key header and the ledger's rows go. Both index snapshots are dropped (they
 * rebuild on the next open), and `changes` (kept in clear either way) is left as it is.
 */
import {
  Dexie,
  type DBCore,
  type DBCoreKeyRange,
  type DBCoreTable,
  type DBCoreTransaction,
  type IndexableType,
  type IndexableTypeArrayReadonly,
  type Transaction,
} from 'dexie';
import { AbortError, KeyError, NotFoundError, StoreError } from '../errors.js';
import {
  AT_REST_KEY,
  createAtRestKey,
  readStoredHeader,
  unlockAtRestKey,
  type AtRestEncryption,
} from '../store/at-rest-key.js';
import { loadFreshness, saveFreshness } from '../store/freshness-snapshot.js';
import { TEXT_SNAPSHOT_KEYS } from '../store/forgetting.js';
import { isFreshnessKey } from '../store/row-freshness.js';
import { RowSealing, SEALED_TABLES, type SealedRowDamage } from '../store/row-sealing.js';
import { EngramDb } from '../store/schema.js';
import { storeError } from '../store/store-error.js';
import { openStore, sealingOf } from './open-store.js';
import { SNAPSHOT_KEY } from './vectors/vector-snapshot.js';

/** Progress of a conversion: rows of the sealed tables converted so far, of all of them. */
export interface ConversionProgress {
  phase: 'encrypt' | 'decrypt';
  done: number;
  total: number;
}

/** Long-work options of a conversion. */
export interface ConversionWork {
  /** Stops the conversion between pages; the store stays as it was (AbortError). */
  signal?: AbortSignal;
  onProgress?: (progress: ConversionProgress) => void;
}

/** What a conversion did. */
export interface ConversionResult {
  /** Rows converted (every row of every sealed table; the change log is not counted). */
  rows: number;
  /** Rows of an encrypted store that did not open (moved, rolled back, changed): reported and dropped. */
  damaged: SealedRowDamage[];
}

/**
 * How long a conversion waits for other connections to close. IndexedDB reports the upgrade
 * `blocked` while a connection is still closing (Chromium does so for connections closed a moment
 * before), so only one still open after this long refuses the conversion.
 */
const BLOCKED_GRACE_MS = 3000;
/** Conversions a store can go through at one schema version (see runConversion). */
const MAX_CONVERSIONS = 9;
/** Rows read and written per step: progress and the signal are checked between steps. */
const PAGE = 500;
/** Dexie's DBCoreRangeType (an ambient const enum, which this build cannot import). */
const RANGE_ANY = 3;
const RANGE_RANGE = 2;
/** Index snapshots, dropped by a conversion: rebuilt from the rows on the next open. */
const SNAPSHOT_KEYS: readonly string[] = [SNAPSHOT_KEY, ...TEXT_SNAPSHOT_KEYS];

function isSnapshotKey(key: unknown): boolean {
  return typeof key === 'string' && SNAPSHOT_KEYS.some((s) => key === s || key.startsWith(`${s}:`));
}

/** The keys after `after` (every key when undefined), in key order. */
function rangeAfter(after: unknown): DBCoreKeyRange {
  const range = after === undefined ? { type: RANGE_ANY } : { type: RANGE_RANGE, lower: after, lowerOpen: true };
  return range as unknown as DBCoreKeyRange;
}

/** One page of a table's stored keys (and rows, when `values`), as stored, after `after`. */
async function storedPage(
  table: DBCoreTable,
  trans: DBCoreTransaction,
  after: unknown,
  values: boolean,
): Promise<{ keys: unknown[]; rows: unknown[] }> {
  const query = { index: table.schema.primaryKey, range: rangeAfter(after) };
  const [keys, rows] = await Promise.all([
    table.query({ trans, values: false, limit: PAGE, query }),
    values ? table.query({ trans, values: true, limit: PAGE, query }) : Promise.resolve({ result: [] }),
  ]);
  return { keys: keys.result, rows: rows.result };
}

async function storedCount(raw: DBCore, trans: DBCoreTransaction): Promise<number> {
  const counts = await Promise.all(
    Object.keys(SEALED_TABLES).map((name) => {
      const table = raw.table(name);
      return table.count({ trans, query: { index: table.schema.primaryKey, range: rangeAfter(undefined) } });
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** Deletes the `meta` rows whose keys pass `drop`, as stored (no journal: they leave the ledger's view). */
async function dropMetaRows(raw: DBCore, trans: DBCoreTransaction, drop: (key: unknown) => boolean): Promise<void> {
  const meta = raw.table('meta');
  const keys = (
    await meta.query({ trans, values: false, query: { index: meta.schema.primaryKey, range: rangeAfter(undefined) } })
  ).result.filter(drop);
  if (keys.length > 0) await meta.mutate({ type: 'delete', trans, keys });
}

/** How a conversion reports: `begin` with the rows to convert, then `step` after each page. */
interface ConversionSteps {
  begin: (total: number) => void;
  step: (rows: number) => void;
}

/** What one direction of a conversion does inside the upgrade. */
type Converter = (tx: Transaction, raw: DBCore, steps: ConversionSteps) => Promise<void>;

/** A store opened for one conversion: its upgrade (native version + 1) runs `convert`, with the DBCore below the sealing. */
class ConversionDb extends EngramDb {
  constructor(
    name: string,
    sealing: RowSealing,
    nativeVersion: number,
    convert: (tx: Transaction, raw: DBCore) => Promise<void>,
  ) {
    super(name, sealing);
    let raw: DBCore | undefined;
    // Below the sealing (level -10): the rows as stored.
    this.use({
      stack: 'dbcore',
      name: 'engram-conversion-raw',
      level: -20,
      create(down) {
        raw = down;
        return down;
      },
    });
    this.version((nativeVersion + 1) / 10)
      .stores({})
      .upgrade((tx) => convert(tx, raw!));
  }
}

/** The store's native IndexedDB version (Dexie's version times ten). */
async function nativeVersionOf(name: string): Promise<number> {
  const probe = new Dexie(name);
  try {
    await probe.open();
    return Math.round(probe.verno * 10);
  } finally {
    probe.close();
  }
}

/**
 * Runs `convert` in the upgrade of the store `name` opened with `sealing` (see the file's head):
 * all of it or nothing. The count of rows converted.
 */
async function runConversion(
  name: string,
  sealing: RowSealing,
  phase: ConversionProgress['phase'],
  convert: Converter,
  work: ConversionWork,
  after?: (db: EngramDb) => Promise<void>,
): Promise<number> {
  const { signal, onProgress } = work;
  const nativeVersion = await nativeVersionOf(name);
  // Dexie declares schema version v as native 10v: a conversion takes the next native number, and
  // one reaching the next schema version's would keep that version's upgrade from ever running.
  if ((nativeVersion + 1) % 10 === 0)
    throw new StoreError(
      `store "${name}" was converted ${MAX_CONVERSIONS} times at this schema version, the most it can be; export it and import the file into a new store`,
    );
  let failure: unknown;
  /** `blocked`: refused after the grace; `started`: the upgrade runs (a later refusal cannot apply). */
  const state = { blocked: false, started: false };
  let waiting: ReturnType<typeof setTimeout> | undefined;
  let done = 0;
  const db = new ConversionDb(name, sealing, nativeVersion, async (tx, raw) => {
    state.started = true;
    clearTimeout(waiting);
    try {
      // A blocked open cancelled: its upgrade may still run once the other connection closes.
      if (state.blocked) throw new StoreError(`store "${name}" is held open elsewhere; nothing was converted`);
      let total = 0;
      await convert(tx, raw, {
        begin: (rows) => {
          total = rows;
          onProgress?.({ phase, done, total });
        },
        step: (rows) => {
          done += rows;
          onProgress?.({ phase, done, total });
          if (signal?.aborted)
            throw new AbortError('the conversion was cancelled; the store is as it was', { cause: signal.reason });
        },
      });
    } catch (e) {
      failure = e;
      throw e;
    }
  });
  db.on('blocked', () => {
    waiting ??= setTimeout(() => {
      if (state.started) return;
      state.blocked = true;
      db.close();
    }, BLOCKED_GRACE_MS);
  });
  try {
    await db.open();
    await after?.(db);
  } catch (e) {
    if (state.blocked && failure === undefined)
      throw new StoreError(`store "${name}" is held open by a connection that does not close; nothing was converted`, {
        cause: e,
      });
    throw storeError(failure ?? e, `converting store "${name}"`);
  } finally {
    clearTimeout(waiting);
    db.close();
  }
  return done;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortError('the conversion was cancelled before it began', { cause: signal.reason });
}

/** The store `name` as it stands before a conversion (a NotFoundError when there is none). */
async function storedKind(name: string): Promise<Awaited<ReturnType<typeof readStoredHeader>>> {
  let stored: Awaited<ReturnType<typeof readStoredHeader>>;
  try {
    stored = await readStoredHeader(name);
  } catch (e) {
    throw storeError(e, `opening store "${name}"`);
  }
  if (!stored.created) throw new NotFoundError('store', name);
  return stored;
}

/**
 * Encrypts the plain store `name` at rest with `encryption` (a new data key, as a new encrypted
 * store gets). A KeyError `already-encrypted` when it is encrypted, a NotFoundError when there is
 * no such store, an AbortError when `signal` stops it: the store is then as it was.
 */
export async function encryptStore(
  name: string,
  encryption: AtRestEncryption,
  work: ConversionWork = {},
): Promise<ConversionResult> {
  throwIfAborted(work.signal);
  const stored = await storedKind(name);
  if (stored.header !== undefined || stored.sealed)
    throw new KeyError('already-encrypted', `store "${name}" is already encrypted; nothing was written`);
  // Brings an older schema up to date (its upgrades read plain rows), as a plain open does.
  (await openStore(name)).db.close();
  const { header, storeId, dataKey } = await createAtRestKey(encryption);
  const sealing = sealingOf(storeId, dataKey);
  const damaged: SealedRowDamage[] = [];
  sealing.onDamaged = (row) => damaged.push(row);
  throwIfAborted(work.signal);
  const rows = await runConversion(
    name,
    sealing,
    'encrypt',
    async (tx, raw, { begin, step }) => {
      const trans = tx.idbtrans as unknown as DBCoreTransaction;
      // Checked again inside the upgrade: another instance may have converted it since.
      if ((await raw.table('meta').get({ trans, key: AT_REST_KEY })) !== undefined)
        throw new KeyError('already-encrypted', `store "${name}" was encrypted meanwhile; nothing was written`);
      // No ledger rows stay from an earlier encryption (the journal this conversion writes starts anew).
      await dropMetaRows(raw, trans, (k) => isSnapshotKey(k) || isFreshnessKey(k));
      begin(await storedCount(raw, trans));
      for (const table of Object.keys(SEALED_TABLES)) {
        const outbound = raw.table(table).schema.primaryKey.outbound === true;
        let after: unknown;
        for (;;) {
          const { keys, rows: page } = await storedPage(raw.table(table), trans, after, true);
          if (keys.length === 0) break;
          // Through the sealing: sealed, versioned (transaction 1) and journaled. The journal's own rows,
          // written by this conversion into `meta`, are left as they are.
          const values = table === 'meta' ? page.filter((_, i) => !isFreshnessKey(keys[i])) : page;
          if (outbound) await tx.table(table).bulkPut(values, keys as IndexableTypeArrayReadonly);
          else if (values.length > 0) await tx.table(table).bulkPut(values);
          step(values.length);
          after = keys[keys.length - 1];
        }
      }
      await tx.table('meta').put({ key: AT_REST_KEY, value: header });
    },
    work,
    // The ledger's snapshot written now, so the first open reads it rather than the whole journal.
    async (db) => {
      await loadFreshness(db);
      await saveFreshness(db);
    },
  );
  return { rows, damaged };
}

/**
 * Decrypts the encrypted store `name` (opened with `encryption`: a KeyError `wrong-key` before
 * anything is written when it does not open it) into a plain store. A KeyError `not-encrypted`
 * when it is plain. Rows that do not open are reported in the result and dropped.
 */
export async function decryptStore(
  name: string,
  encryption: AtRestEncryption,
  work: ConversionWork = {},
): Promise<ConversionResult> {
  throwIfAborted(work.signal);
  const stored = await storedKind(name);
  if (stored.header === undefined)
    throw new KeyError('not-encrypted', `store "${name}" is not encrypted; nothing was written`);
  const damaged: SealedRowDamage[] = [];
  // The rows' versions as the store records them (its ledger, checked as an open does), to check each row read.
  const { db: opened } = await openStore(name, encryption);
  const ledger = opened.sealing!.journal.ledger.toRecord();
  opened.sealing!.onDamaged = (row) => damaged.push(row);
  opened.close();
  const { storeId, dataKey } = await unlockAtRestKey(encryption, stored.header);
  const sealing = sealingOf(storeId, dataKey);
  sealing.onDamaged = (row) => damaged.push(row);
  throwIfAborted(work.signal);
  const rows = await runConversion(
    name,
    sealing,
    'decrypt',
    async (tx, raw, { begin, step }) => {
      const trans = tx.idbtrans as unknown as DBCoreTransaction;
      const header = (await raw.table('meta').get({ trans, key: AT_REST_KEY })) as
        { value?: { storeId?: unknown } } | undefined;
      if (header?.value?.storeId !== storeId)
        throw new KeyError(
          'wrong-key',
          `store "${name}" was converted meanwhile by another instance; nothing was written`,
        );
      const { journal } = sealing;
      journal.ledger.fromRecord(ledger);
      journal.ledger.loaded = true;
      await journal.catchUp(trans);
      if (journal.ledger.stale)
        throw new StoreError(`store "${name}" changed while it was being decrypted; nothing was written, try again`);
      // The key header, the ledger's rows and the snapshots go (the ledger is in memory from here on).
      await dropMetaRows(raw, trans, (k) => k === AT_REST_KEY || isFreshnessKey(k) || isSnapshotKey(k));
      begin(await storedCount(raw, trans));
      for (const table of Object.keys(SEALED_TABLES)) {
        const down = raw.table(table);
        const outbound = down.schema.primaryKey.outbound === true;
        let after: unknown;
        for (;;) {
          const { keys } = await storedPage(down, trans, after, false);
          if (keys.length === 0) break;
          after = keys[keys.length - 1];
          // Through the sealing: each seal and version checked; undefined for a row that does not open.
          const plain = (await tx.table(table).bulkGet(keys as IndexableType[])) as unknown[];
          const good = keys.flatMap((k, i) => (plain[i] === undefined ? [] : [{ key: k, row: plain[i] }]));
          const bad = keys.filter((_, i) => plain[i] === undefined);
          if (good.length > 0)
            await down.mutate({
              type: 'put',
              trans,
              values: good.map((g) => g.row),
              ...(outbound ? { keys: good.map((g) => g.key) } : {}),
            });
          if (bad.length > 0) await down.mutate({ type: 'delete', trans, keys: bad });
          step(keys.length);
        }
      }
    },
    work,
  );
  return { rows, damaged };
}
