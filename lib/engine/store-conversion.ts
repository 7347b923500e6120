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
 * back raw; the key header and the ledger's rows go. `changes` (kept in clear either way) is left
 * as it is.
 *
 * The index snapshots are carried over, so the next open restores from them instead of
 * rebuilding both indexes from the rows. An encrypted store's snapshot is sealed (or opened)
 * with WebCrypto, which cannot run inside the upgrade: they are read, with the log head they
 * reflect, and converted before it (the log head first, so anything written after it moves it),
 * held as the rows to write, and written at the end of the upgrade only when the store's log
 * head (last entry, floor, generation, embedder) is still the one read; else they are dropped
 * and rebuilt on the next open, as a snapshot that is not there.
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
  type AtRestHeader,
} from '../store/at-rest-key.js';
import { LOG_FLOOR_KEY, logPositionOf, readLogHead, type LogHead } from '../store/change-log.js';
import { EMBEDDER_KEY, embedderRecordOf } from '../store/embedder-record.js';
import { loadFreshness, saveFreshness } from '../store/freshness-snapshot.js';
import { TEXT_SNAPSHOT_KEYS } from '../store/forgetting.js';
import { GENERATION_KEY, generationOf } from '../store/generation.js';
import { isFreshnessKey, type FreshnessLedger } from '../store/row-freshness.js';
import { RowSealing, SEALED_TABLES, type SealedRowDamage } from '../store/row-sealing.js';
import type { MetaRow } from '../store/rows.js';
import { EngramDb } from '../store/schema.js';
import { getSnapshot, prepareSnapshot, snapshotRows } from '../store/snapshot-chunks.js';
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
/** Conversions a store can go through at one schema version (see refuseTooMany). */
const MAX_CONVERSIONS = 9;
/** Rows read and written per step: progress and the signal are checked between steps. */
const PAGE = 500;
/** Dexie's DBCoreRangeType (an ambient const enum, which this build cannot import). */
const RANGE_ANY = 3;
const RANGE_RANGE = 2;
/** Index snapshots: carried through a conversion (see the file's head). */
const SNAPSHOT_KEYS: readonly string[] = [SNAPSHOT_KEY, ...TEXT_SNAPSHOT_KEYS];

function isSnapshotKey(key: unknown): boolean {
  return typeof key === 'string' && SNAPSHOT_KEYS.some((s) => key === s || key.startsWith(`${s}:`));
}

/** The keys after `after` (every key when undefined), in key order. */
function rangeAfter(after: unknown): DBCoreKeyRange {
  const range = after === undefined ? { type: RANGE_ANY } : { type: RANGE_RANGE, lower: after, lowerOpen: true };
  return range as unknown as DBCoreKeyRange;
}

/** The upgrade transaction as the DBCore sees it. */
function transOf(tx: Transaction): DBCoreTransaction {
  return tx.idbtrans;
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

/** The index snapshots read before a conversion, as the `meta` rows of the converted store, and the log head they reflect. */
interface CarriedSnapshots {
  head: LogHead;
  rows: MetaRow[];
}

/** A snapshot record worth carrying: one with the log position it reflects (the restore judges the rest). */
function isSnapshotRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { seq?: unknown }).seq === 'number';
}

/**
 * The snapshots of the open store `db`, each turned by `toRows` into the rows of the converted
 * store, and the log head read before them. A record that does not encode is left out (rebuilt).
 */
async function carrySnapshots(
  db: EngramDb,
  toRows: (key: string, record: Record<string, unknown>) => Promise<MetaRow[]>,
): Promise<CarriedSnapshots> {
  // The head first: anything written after it (a write, a forget dropping the keyword snapshot) moves it.
  const head = await readLogHead(db);
  const rows: MetaRow[] = [];
  for (const key of SNAPSHOT_KEYS) {
    const record = (await getSnapshot(db, key))?.value;
    if (!isSnapshotRecord(record)) continue;
    try {
      rows.push(...(await toRows(key, record)));
    } catch (e) {
      if (!(e instanceof StoreError)) throw e;
    }
  }
  return { head, rows };
}

/**
 * The rows of `record` in the store `target` will be (prepareSnapshot reads only its sealing:
 * `target` is never opened). Typed arrays that are views into a larger buffer (an opened
 * snapshot's) are copied out first: a stored view would carry its whole buffer.
 */
async function convertedRows(target: EngramDb, key: string, record: Record<string, unknown>): Promise<MetaRow[]> {
  const prepared = await prepareSnapshot(target, key, ownBuffers(record) as Record<string, unknown>);
  return snapshotRows(prepared, target.sealing !== undefined);
}

/** `value` with every typed array that does not own its whole buffer copied. */
function ownBuffers(value: unknown): unknown {
  if (ArrayBuffer.isView(value)) {
    const view = value as Uint8Array;
    return view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? view : view.slice();
  }
  if (Array.isArray(value)) return value.map(ownBuffers);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, ownBuffers(v)]));
}

/** The log head as stored in the upgrade (`meta` read raw: call it where its rows are plain). */
async function logHeadIn(raw: DBCore, trans: DBCoreTransaction): Promise<LogHead> {
  const changes = raw.table('changes');
  const query = { index: changes.schema.primaryKey, range: rangeAfter(undefined) };
  const last = await changes.openCursor({ trans, values: false, reverse: true, query });
  const keys = [LOG_FLOOR_KEY, GENERATION_KEY, EMBEDDER_KEY];
  const [floor, generation, embedder] = (await raw.table('meta').getMany({ trans, keys })) as (
    { value?: unknown } | undefined
  )[];
  return {
    last: last === null ? 0 : (last.primaryKey as number),
    floor: logPositionOf(floor?.value) ?? 0,
    generation: generationOf(generation?.value),
    embedderId: embedderRecordOf(embedder?.value)?.id,
  };
}

function sameHead(a: LogHead, b: LogHead): boolean {
  return a.last === b.last && a.floor === b.floor && a.generation === b.generation && a.embedderId === b.embedderId;
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
 * Dexie declares schema version v as native 10v: a conversion takes the next native number, and
 * one reaching the next schema version's would keep that version's upgrade from ever running.
 */
function refuseTooMany(name: string, nativeVersion: number): void {
  if ((nativeVersion + 1) % 10 === 0)
    throw new StoreError(
      `store "${name}" was converted ${MAX_CONVERSIONS} times at this schema version, the most it can be; export it and import the file into a new store`,
    );
}

/** One conversion's course: progress, the signal, and a connection that blocks it. */
class ConversionRun {
  done = 0;
  #total = 0;
  #failure: unknown;
  /** Refused after the grace (see BLOCKED_GRACE_MS). */
  #blocked = false;
  /** The upgrade runs: a later refusal cannot apply. */
  #started = false;
  #waiting: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly name: string,
    readonly phase: ConversionProgress['phase'],
    readonly work: ConversionWork,
  ) {}

  /** The upgrade's body: `convert`, reporting after each page and stopping there when the signal has aborted. */
  async upgrade(tx: Transaction, raw: DBCore, convert: Converter): Promise<void> {
    this.#started = true;
    clearTimeout(this.#waiting);
    try {
      // A blocked open cancelled: its upgrade may still run once the other connection closes.
      if (this.#blocked) throw new StoreError(`store "${this.name}" is held open elsewhere; nothing was converted`);
      await convert(tx, raw, {
        begin: (rows) => {
          this.#begin(rows);
        },
        step: (rows) => {
          this.#step(rows);
        },
      });
    } catch (e) {
      this.#failure = e;
      throw e;
    }
  }

  #begin(total: number): void {
    this.#total = total;
    this.work.onProgress?.({ phase: this.phase, done: this.done, total });
  }

  #step(rows: number): void {
    this.done += rows;
    this.work.onProgress?.({ phase: this.phase, done: this.done, total: this.#total });
    const { signal } = this.work;
    if (signal?.aborted)
      throw new AbortError('the conversion was cancelled; the store is as it was', { cause: signal.reason });
  }

  /** Closes `db` (refusing the conversion) when another connection still blocks it after the grace. */
  watch(db: Dexie): void {
    db.on('blocked', () => {
      this.#waiting ??= setTimeout(() => {
        if (this.#started) return;
        this.#blocked = true;
        db.close();
      }, BLOCKED_GRACE_MS);
    });
  }

  /** The error a failed open of the conversion rejects with. */
  failed(e: unknown): Error {
    if (this.#blocked && this.#failure === undefined)
      return new StoreError(
        `store "${this.name}" is held open by a connection that does not close; nothing was converted`,
        { cause: e },
      );
    return storeError(this.#failure ?? e, `converting store "${this.name}"`);
  }

  end(): void {
    clearTimeout(this.#waiting);
  }
}

/** One direction of a conversion of the store `name`, opened with `sealing`; `after` runs on it once converted. */
interface ConversionPlan {
  name: string;
  sealing: RowSealing;
  phase: ConversionProgress['phase'];
  convert: Converter;
  after?: (db: EngramDb) => Promise<void>;
}

/** Runs the plan's `convert` in the store's upgrade (see the file's head): all of it or nothing. The count of rows converted. */
async function runConversion(plan: ConversionPlan, work: ConversionWork): Promise<number> {
  const { name, sealing, phase, convert, after } = plan;
  const nativeVersion = await nativeVersionOf(name);
  refuseTooMany(name, nativeVersion);
  const run = new ConversionRun(name, phase, work);
  const db = new ConversionDb(name, sealing, nativeVersion, (tx, raw) => run.upgrade(tx, raw, convert));
  run.watch(db);
  try {
    await db.open();
    await after?.(db);
  } catch (e) {
    throw run.failed(e);
  } finally {
    run.end();
    db.close();
  }
  return run.done;
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

/** `use` of the store `opening` opens, closed after. */
async function withStore<T>(opening: Promise<{ db: EngramDb }>, use: (db: EngramDb) => Promise<T>): Promise<T> {
  const { db } = await opening;
  try {
    return await use(db);
  } finally {
    db.close();
  }
}

/** Writes every row of the sealed table `down` (read as stored, plain) back through the sealing. */
async function sealTable(
  tx: Transaction,
  down: DBCoreTable,
  trans: DBCoreTransaction,
  step: (rows: number) => void,
): Promise<void> {
  const table = down.schema.name;
  const outbound = down.schema.primaryKey.outbound === true;
  let after: unknown;
  for (;;) {
    const { keys, rows } = await storedPage(down, trans, after, true);
    if (keys.length === 0) return;
    // Through the sealing: sealed, versioned (transaction 1) and journaled. The journal's own rows,
    // written by this conversion into `meta`, are left as they are.
    const values = table === 'meta' ? rows.filter((_, i) => !isFreshnessKey(keys[i])) : rows;
    if (outbound) await tx.table(table).bulkPut(values, keys as IndexableTypeArrayReadonly);
    else if (values.length > 0) await tx.table(table).bulkPut(values);
    step(values.length);
    after = keys[keys.length - 1];
  }
}

/** The encryption of the plain store `name` inside its upgrade, keyed by `header`, its snapshots `carried`. */
function sealRows(name: string, header: AtRestHeader, carried: CarriedSnapshots): Converter {
  return async (tx, raw, { begin, step }) => {
    const trans = transOf(tx);
    // Checked again inside the upgrade: another instance may have converted it since.
    if ((await raw.table('meta').get({ trans, key: AT_REST_KEY })) !== undefined)
      throw new KeyError('already-encrypted', `store "${name}" was encrypted meanwhile; nothing was written`);
    const keep = sameHead(await logHeadIn(raw, trans), carried.head);
    // No ledger rows stay from an earlier encryption (the journal this conversion writes starts anew).
    await dropMetaRows(raw, trans, (k) => isSnapshotKey(k) || isFreshnessKey(k));
    begin(await storedCount(raw, trans));
    for (const table of Object.keys(SEALED_TABLES)) await sealTable(tx, raw.table(table), trans, step);
    await tx.table('meta').put({ key: AT_REST_KEY, value: header });
    // Sealed before the upgrade: their heads are sealed and journaled now, their pieces stored as they are.
    if (keep) await tx.table('meta').bulkPut(carried.rows);
  };
}

/** The ledger's snapshot written now, so the first open reads it rather than the whole journal. */
async function saveLedger(db: EngramDb): Promise<void> {
  await loadFreshness(db);
  await saveFreshness(db);
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
  const { header, storeId, dataKey } = await createAtRestKey(encryption);
  const sealing = await sealingOf(storeId, dataKey);
  const damaged: SealedRowDamage[] = [];
  sealing.onDamaged = (row) => damaged.push(row);
  const target = new EngramDb(name, sealing);
  // The plain open brings an older schema up to date (its upgrades read plain rows), as a plain open does.
  const carried = await withStore(openStore(name), (db) => carrySnapshots(db, (k, r) => convertedRows(target, k, r)));
  throwIfAborted(work.signal);
  const convert = sealRows(name, header, carried);
  const rows = await runConversion({ name, sealing, phase: 'encrypt', convert, after: saveLedger }, work);
  return { rows, damaged };
}

/** Refuses (a KeyError `wrong-key`) when the store's key header is not the one of `storeId`. */
async function checkStoreId(raw: DBCore, trans: DBCoreTransaction, name: string, storeId: string): Promise<void> {
  const header = (await raw.table('meta').get({ trans, key: AT_REST_KEY })) as
    { value?: { storeId?: unknown } } | undefined;
  if (header?.value?.storeId !== storeId)
    throw new KeyError('wrong-key', `store "${name}" was converted meanwhile by another instance; nothing was written`);
}

/** The ledger read at the start (`ledger`) brought up to the store's journal inside the upgrade. */
async function catchUpLedger(
  sealing: RowSealing,
  ledger: ReturnType<FreshnessLedger['toRecord']>,
  trans: DBCoreTransaction,
  name: string,
): Promise<void> {
  const { journal } = sealing;
  journal.ledger.fromRecord(ledger);
  journal.ledger.loaded = true;
  await journal.catchUp(trans);
  if (journal.ledger.stale)
    throw new StoreError(`store "${name}" changed while it was being decrypted; nothing was written, try again`);
}

/** Writes every row of the sealed table `down` that opens back as stored (plain); deletes the others. */
async function openTable(
  tx: Transaction,
  down: DBCoreTable,
  trans: DBCoreTransaction,
  step: (rows: number) => void,
): Promise<void> {
  const outbound = down.schema.primaryKey.outbound === true;
  let after: unknown;
  for (;;) {
    const { keys } = await storedPage(down, trans, after, false);
    if (keys.length === 0) return;
    after = keys[keys.length - 1];
    // Through the sealing: each seal and version checked; undefined for a row that does not open.
    const plain = (await tx.table(down.schema.name).bulkGet(keys as IndexableType[])) as unknown[];
    const { good, bad } = openedOrNot(keys, plain);
    const values = good.map((g) => g.row);
    if (good.length > 0)
      await down.mutate({ type: 'put', trans, values, ...(outbound ? { keys: good.map((g) => g.key) } : {}) });
    if (bad.length > 0) await down.mutate({ type: 'delete', trans, keys: bad });
    step(keys.length);
  }
}

/** The rows of `keys` that opened (`plain[i]` set), with their keys, and the keys of those that did not. */
function openedOrNot(
  keys: readonly unknown[],
  plain: readonly unknown[],
): { good: { key: unknown; row: unknown }[]; bad: unknown[] } {
  const good = keys.flatMap((k, i) => (plain[i] === undefined ? [] : [{ key: k, row: plain[i] }]));
  const bad = keys.filter((_, i) => plain[i] === undefined);
  return { good, bad };
}

/** What a decryption knows before its upgrade: the store's id, its ledger, its snapshots opened. */
interface DecryptionStart {
  storeId: string;
  ledger: ReturnType<FreshnessLedger['toRecord']>;
  carried: CarriedSnapshots;
}

/** The decryption of the store `name` (opened with `sealing`) inside its upgrade. */
function openRows(name: string, sealing: RowSealing, { storeId, ledger, carried }: DecryptionStart): Converter {
  return async (tx, raw, { begin, step }) => {
    const trans = transOf(tx);
    await checkStoreId(raw, trans, name, storeId);
    await catchUpLedger(sealing, ledger, trans, name);
    // The key header, the ledger's rows and the snapshots go (the ledger is in memory from here on).
    await dropMetaRows(raw, trans, (k) => k === AT_REST_KEY || isFreshnessKey(k) || isSnapshotKey(k));
    begin(await storedCount(raw, trans));
    for (const table of Object.keys(SEALED_TABLES)) await openTable(tx, raw.table(table), trans, step);
    // Every row is plain now: the head is read as stored, and the snapshots opened before go in as a plain store keeps them.
    if (sameHead(await logHeadIn(raw, trans), carried.head))
      await raw.table('meta').mutate({ type: 'put', trans, values: carried.rows });
  };
}

/**
 * Through an open of `name` with `encryption`: the rows' versions as the store records them (its ledger,
 * checked as an open does), to check each row read, and its snapshots carried to `target`. Rows that do
 * not open go to `damaged`.
 */
function readBeforeDecrypt(
  name: string,
  encryption: AtRestEncryption,
  target: EngramDb,
  damaged: SealedRowDamage[],
): Promise<Omit<DecryptionStart, 'storeId'>> {
  return withStore(openStore(name, encryption), async (db) => {
    const ledger = db.sealing!.journal.ledger.toRecord();
    db.sealing!.onDamaged = (row) => damaged.push(row);
    return { ledger, carried: await carrySnapshots(db, (k, r) => convertedRows(target, k, r)) };
  });
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
  const { header } = await storedKind(name);
  if (header === undefined)
    throw new KeyError('not-encrypted', `store "${name}" is not encrypted; nothing was written`);
  const damaged: SealedRowDamage[] = [];
  const target = new EngramDb(name);
  const { ledger, carried } = await readBeforeDecrypt(name, encryption, target, damaged);
  const { storeId, dataKey } = await unlockAtRestKey(encryption, header);
  const sealing = await sealingOf(storeId, dataKey);
  sealing.onDamaged = (row) => damaged.push(row);
  throwIfAborted(work.signal);
  const convert = openRows(name, sealing, { storeId, ledger, carried });
  const rows = await runConversion({ name, sealing, phase: 'decrypt', convert }, work);
  return { rows, damaged };
}
