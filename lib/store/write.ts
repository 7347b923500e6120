/**
 * The single write path. Every change to a message, memory, block or trace goes
 * through {@link writeTransaction}: in one IndexedDB transaction it writes the
 * row, its history entry, a change-log entry, the keyword terms row and the
 * corpus statistics. Either all of it lands or none of it does.
 */
import { Dexie, type IndexableType } from 'dexie';
import { StoreError } from '../errors.js';
import {
  MEMORY_CORPUS,
  MESSAGE_CORPUS,
  messageTermsFields,
  statsKey,
  termsRowOf,
  type Analyzer,
  type Corpus,
  type CorpusStats,
} from './keyword-terms.js';
import type {
  BlockRow,
  ChangeOp,
  ChangeRow,
  HistoryRow,
  MemoryRow,
  MessageRow,
  TermsRow,
  TraceRow,
  VectorRow,
} from './rows.js';
import { blockKey } from './block-key.js';
import { TEXT_SNAPSHOT_KEYS, textFreeHistory, textFreeTombstone } from './forgetting.js';
import { creationEntry } from './history-rows.js';
import { ALL_TABLES, BLOCKS_TABLE, type EngramDb } from './schema.js';
import { readGeneration } from './generation.js';
import { readEmbedderId } from './embedder-record.js';
import { deleteSnapshot } from './snapshot-chunks.js';
import { LOG_FLOOR_KEY, logBoundsOf, logBoundsRow, readLastSeq } from './change-log.js';
import { storeError } from './store-error.js';

/** One row change, with the row before and after. */
export type RowChange =
  | { table: 'messages'; op: ChangeOp; id: string; before?: MessageRow; after?: MessageRow }
  | {
      table: 'memories';
      op: ChangeOp;
      id: string;
      before?: MemoryRow;
      after?: MemoryRow;
      /** The memory's new vector row; null deletes it (a text changed by an instance on a model the store left). */
      vector?: VectorRow | null;
      /** Bookkeeping only (access counts): no history entry, no change-log entry. */
      quiet?: boolean;
    }
  | { table: 'blocks'; op: ChangeOp; id: string; before?: BlockRow; after?: BlockRow }
  | { table: 'traces'; op: ChangeOp; id: string; before?: TraceRow; after?: TraceRow };

/** What a planner decides: the changes to apply and the value to return. */
export interface WritePlan<R> {
  changes: RowChange[];
  result: R;
  /**
   * Skip history entries (an import brings its own history). Change-log entries
   * are always written.
   * @default false
   */
  withoutHistory?: boolean;
  /**
   * The change-log position the plan took for the last one, having read
   * nothing after it: the write rolls back with {@link LogMovedError} when
   * anything else was logged after it (its own first entry does not directly
   * follow it). See memories.ts, add()'s duplicate check without reads.
   */
  logAfter?: number;
}

/** A write planned on the change log as it was (WritePlan.logAfter) found it moved; it was rolled back. */
export class LogMovedError extends StoreError {
  constructor() {
    super('the change log moved under a write planned without reading it; the write was rolled back');
    this.name = 'LogMovedError';
  }
}

/**
 * A committed write as the change log has it: the logged changes in order
 * (deletions already text-free), their sequence numbers, and the store
 * generation the write landed in. Caches of the store apply it without reading
 * it back when it directly follows what they reflect.
 */
export interface LoggedWrite {
  changes: readonly RowChange[];
  seqs: readonly number[];
  generation: number;
  /** The store's recorded embedder when the write landed (an instance on another model learns of a re-embed here). */
  embedderId: string | undefined;
  /** What the write did to the keyword terms rows and the corpus statistics (the keyword index applies it). */
  terms: LoggedTerms;
}

/** The keyword side of a committed write: terms rows written and deleted, and each touched corpus's statistics after it. */
export interface LoggedTerms {
  puts: readonly TermsRow[];
  /** Keys (corpus, document id) of the terms rows deleted. */
  deletes: readonly (readonly [Corpus, string])[];
  stats: readonly (readonly [Corpus, CorpusStats])[];
}

/** The text a row is keyword-indexed under, or undefined when it is not indexed. */
function indexedText(
  change: RowChange,
  row: MessageRow | MemoryRow | BlockRow | TraceRow | undefined,
): string | undefined {
  if (row === undefined) return undefined;
  if (change.table === 'messages') return (row as MessageRow).content;
  if (change.table === 'memories') {
    const m = row as MemoryRow;
    return m.deletedAt === undefined ? m.text : undefined;
  }
  return undefined;
}

/** The store's standing rules for every write. */
export interface WritePolicy {
  /**
   * Most history entries kept per record; older ones are dropped as new ones come.
   * @default DEFAULT_HISTORY_LIMIT
   */
  historyLimit?: number;
}

/** History entries kept per record unless the store is opened with another `historyLimit`. */
export const DEFAULT_HISTORY_LIMIT = 20;

/**
 * Runs `plan` inside one read-write transaction over the whole store and applies
 * the changes it returns. `plan` may read (its reads see a consistent store) but
 * must await only Dexie calls (IndexedDB commits a transaction that has no request pending).
 * Throwing anywhere rolls everything back.
 * A deletion leaves no text behind: a memory's tombstone and every history
 * entry of the deleted record are made text-free (see forgetting.ts) in the
 * same transaction.
 * @example
 * await writeTransaction(db, now, analyze, async () => ({ changes: [{ table: 'messages', op: 'add', id, after: row }], result: row }))
 */
export async function writeTransaction<R>(
  db: EngramDb,
  now: () => number,
  analyze: Analyzer,
  plan: () => Promise<WritePlan<R>>,
  policy: WritePolicy = {},
  committed?: (write: LoggedWrite) => void,
): Promise<R> {
  let logged: LoggedWrite | undefined;
  let result: R;
  try {
    result = await db.transaction('rw', [...ALL_TABLES], async () => {
      const planned = await plan();
      logged = await applyChanges(
        db,
        planned.changes.map(withoutDeletedText),
        now(),
        analyze,
        planned.withoutHistory === true,
        policy.historyLimit ?? DEFAULT_HISTORY_LIMIT,
      );
      if (planned.logAfter !== undefined && !(await logFollows(db, logged, planned.logAfter)))
        throw new LogMovedError();
      return planned.result;
    });
  } catch (e) {
    throw storeError(e, 'write failed');
  }
  // Only after the commit: an observer never sees a write that was rolled back.
  if (logged !== undefined && logged.seqs.length > 0) committed?.(logged);
  return result;
}

/** Whether this write's log entries directly follow `after` (with none: whether `after` is still the last). */
async function logFollows(db: EngramDb, logged: LoggedWrite | undefined, after: number): Promise<boolean> {
  const first = logged?.seqs[0];
  if (first !== undefined) return first === after + 1;
  return (await readLastSeq(db)) === after;
}

/** A memory tombstone carries no text, whoever planned it (a delete, a pulled deletion, an import). */
function withoutDeletedText(change: RowChange): RowChange {
  if (change.table !== 'memories' || change.after?.deletedAt === undefined) return change;
  return { ...change, after: textFreeTombstone(change.after) };
}

/** What a batch of changes does to the keyword side: terms rows put and deleted, and each corpus's change of statistics. */
interface TermsPlan {
  puts: TermsRow[];
  deletes: [Corpus, string][];
  statDelta: Map<Corpus, CorpusStats>;
}

/** The keyword corpus a change's table feeds (none for tables without keyword search). */
function corpusOf(change: RowChange): Corpus | undefined {
  return change.table === 'messages' ? MESSAGE_CORPUS : change.table === 'memories' ? MEMORY_CORPUS : undefined;
}

/** Whether an update of a message changed the fields its terms row keeps beside the terms. */
function termsFieldsChanged(change: RowChange): boolean {
  return change.table === 'messages' && change.before !== undefined && change.after !== undefined
    ? JSON.stringify(messageTermsFields(change.before)) !== JSON.stringify(messageTermsFields(change.after))
    : false;
}

/** The terms rows and corpus statistics `changes` make, as if applied in order (the last terms row of each document wins). */
function planTerms(changes: readonly RowChange[], analyze: Analyzer): TermsPlan {
  const statDelta = new Map<Corpus, CorpusStats>();
  const bump = (corpus: Corpus, docs: number, length: number): void => {
    const s = statDelta.get(corpus) ?? { docs: 0, length: 0 };
    s.docs += docs;
    s.length += length;
    statDelta.set(corpus, s);
  };
  const termsOps = new Map<string, { key: [Corpus, string]; row: TermsRow | undefined }>();
  for (const change of changes) {
    const corpus = corpusOf(change);
    const beforeText = indexedText(change, change.before);
    const afterText = indexedText(change, change.after);
    if (corpus === undefined || (beforeText === afterText && !termsFieldsChanged(change))) continue;
    if (beforeText !== undefined) bump(corpus, -1, -analyze(beforeText).length);
    const after =
      afterText === undefined
        ? undefined
        : termsRowOf(
            corpus,
            change.id,
            analyze(afterText),
            change.table === 'messages' ? messageTermsFields(change.after!) : {},
          );
    if (afterText !== undefined) bump(corpus, 1, after?.n ?? 0);
    termsOps.set(`${corpus}:${change.id}`, { key: [corpus, change.id], row: after });
  }
  const ops = [...termsOps.values()];
  return {
    puts: ops.flatMap((o) => (o.row === undefined ? [] : [o.row])),
    deletes: ops.filter((o) => o.row === undefined).map((o) => o.key),
    statDelta,
  };
}

/** Each touched corpus's statistics after `statDelta`, from what `meta` holds now. */
async function statsAfter(db: EngramDb, statDelta: ReadonlyMap<Corpus, CorpusStats>): Promise<[Corpus, CorpusStats][]> {
  const deltas = [...statDelta];
  const current = await Promise.all(deltas.map(([corpus]) => db.meta.get(statsKey(corpus))));
  return deltas.map(([corpus, delta], i): [Corpus, CorpusStats] => {
    const was = (current[i]?.value as CorpusStats | undefined) ?? { docs: 0, length: 0 };
    return [corpus, { docs: was.docs + delta.docs, length: was.length + delta.length }];
  });
}

/** Whether `change` makes its record (an add with no row before): it writes no history entry (history-rows.ts). */
function creates(change: RowChange): boolean {
  return change.op === 'add' && change.before === undefined;
}

/**
 * The history entries of `changes` (none makes its record): the row before and after each, but no
 * copy of the row an add wrote (history-rows.ts `withAddedRows` puts it back on reading): an add's
 * entry would otherwise repeat the whole row, and on an encrypted store seal it again (bench/at-rest,
 * REPORT.md at-rest). A record of `unrecorded` (none of its entries stored) gets its add entry
 * before its first, dated by the row that change found.
 */
function historyEntries(changes: readonly RowChange[], unrecorded: ReadonlySet<string>, at: number): HistoryRow[] {
  const owed = new Set(unrecorded);
  const out: HistoryRow[] = [];
  for (const c of changes) {
    if (owed.delete(c.id) && c.before !== undefined) out.push(creationEntry(c.table, c.id, c.before));
    out.push({
      table: c.table,
      recordId: c.id,
      op: c.op,
      before: c.before ?? null,
      after: c.op === 'add' ? null : (c.after ?? null),
      at,
    });
  }
  return out;
}

/** The change-log entry of each change (its seq given by IndexedDB). */
function logEntries(changes: readonly RowChange[], at: number): ChangeRow[] {
  return changes.map((c) => ({ table: c.table, recordId: c.id, op: c.op, at }));
}

/**
 * Writes `changes` and everything that follows from them in the open transaction: rows, history,
 * change log, terms rows and corpus statistics. Returns what it logged (nothing for no changes).
 */
async function applyChanges(
  db: EngramDb,
  changes: RowChange[],
  at: number,
  analyze: Analyzer,
  withoutHistory: boolean,
  historyLimit: number,
): Promise<LoggedWrite | undefined> {
  if (changes.length === 0) return undefined;
  const { puts: termsPuts, deletes: termsDeletes, statDelta } = planTerms(changes, analyze);
  const rows = new RowBatch();
  for (const change of changes) rows.add(change);
  const logged = changes.filter((c) => !(c.table === 'memories' && c.quiet === true));
  // Every request of the transaction in flight at once (IndexedDB applies a transaction's requests
  // in order): one wait instead of one per table, and what must follow a read or a write (the
  // statistics, the log's end, the history's bounds) is asked for as soon as that one answers, while
  // IndexedDB still works through the rest (bench/ingest).
  const history = withoutHistory ? undefined : logHistory(db, logged, at, historyLimit);
  const log = db.changes.bulkAdd(logEntries(logged, at), { allKeys: true });
  const [, seqs, generation, embedderId, stats] = await Promise.all([
    rows.flush(db),
    log,
    readGeneration(db),
    readEmbedderId(db),
    putStats(db, statDelta),
    putLogEnd(db, log),
    afterHistory(db, history, logged),
    termsDeletes.length > 0 ? db.terms.bulkDelete(termsDeletes) : undefined,
    termsPuts.length > 0 ? db.terms.bulkPut(termsPuts) : undefined,
  ]);
  return { changes: logged, seqs, generation, embedderId, terms: { puts: termsPuts, deletes: termsDeletes, stats } };
}

/** Puts each touched corpus's statistics after `statDelta` (read first); returns them. */
async function putStats(db: EngramDb, statDelta: ReadonlyMap<Corpus, CorpusStats>): Promise<[Corpus, CorpusStats][]> {
  const stats = await statsAfter(db, statDelta);
  await Promise.all(stats.map(([corpus, value]) => db.meta.put({ key: statsKey(corpus), value: { ...value } })));
  return stats;
}

/** Records the log's end once `log` (this write's entries) landed: read by key before every search (change-log.ts readLastSeq). */
async function putLogEnd(db: EngramDb, log: Promise<number[]>): Promise<void> {
  const [seqs, bounds] = await Promise.all([log, db.meta.get(LOG_FLOOR_KEY)]);
  const last = seqs.at(-1);
  if (last !== undefined) await db.meta.put(logBoundsRow(logBoundsOf(bounds?.value).floor, last));
}

/**
 * Writes the history entries of `logged` and keeps each record's newest `limit`. A record's creation
 * writes none (history-rows.ts): the bookkeeping of a batch of adds is its rows alone, one request
 * a row fewer (bench/ingest, REPORT.md ingest session 44). Every other change reads its record's
 * stored keys first: a record with none gets its add entry too, and the bound counts both.
 */
async function logHistory(db: EngramDb, logged: readonly RowChange[], at: number, limit: number): Promise<void> {
  const changes = logged.filter((c) => !creates(c));
  if (changes.length === 0) return;
  const ids = [...new Set(changes.map((c) => c.id))];
  const stored = await Promise.all(ids.map((id) => db.history.where('recordId').equals(id).primaryKeys()));
  const entries = historyEntries(changes, new Set(ids.filter((_, i) => stored[i]!.length === 0)), at);
  const added = await db.history.bulkAdd(entries, { allKeys: true });
  // Each record's keys, oldest first: its stored ones, then this write's (IndexedDB numbers them in order).
  const keysOf = new Map(ids.map((id, i) => [id, (stored[i] as number[]).sort((a, b) => a - b)]));
  entries.forEach((e, i) => keysOf.get(e.recordId)!.push(added[i]!));
  await Promise.all(
    [...keysOf.values()].map(async (keys) => {
      if (keys.length > limit) await db.history.bulkDelete(keys.slice(0, keys.length - limit));
    }),
  );
}

/** Once `history` (this write's entries; undefined: the write keeps none) landed: strips the history of the records the write deleted of their text. */
async function afterHistory(
  db: EngramDb,
  history: Promise<void> | undefined,
  logged: readonly RowChange[],
): Promise<void> {
  await history;
  await forgetHistoryText(
    db,
    logged.filter((c) => c.op === 'delete'),
  );
}

/**
 * Strips the text from every history entry of records just deleted (their event
 * and time stay), and drops the snapshots that may still hold their words.
 */
async function forgetHistoryText(db: EngramDb, deletes: readonly RowChange[]): Promise<void> {
  if (deletes.length === 0) return;
  if (deletes.some((c) => c.table === 'messages' || c.table === 'memories'))
    for (const key of TEXT_SNAPSHOT_KEYS) await deleteSnapshot(db, key);
  const tables = new Map(deletes.map((c) => [c.id, c.table]));
  const entries = await db.history
    .where('recordId')
    .anyOf([...tables.keys()])
    .toArray();
  const mine = entries.filter((e) => tables.get(e.recordId) === e.table);
  if (mine.length > 0) await db.history.bulkPut(mine.map(textFreeHistory));
}

/**
 * Row writes of one transaction, grouped per table so they go to IndexedDB in
 * bulk. Only the last write of a record counts, as if applied in order.
 */
class RowBatch {
  readonly #puts = new Map<string, Map<string, { key: IndexableType; row: unknown }>>();
  readonly #deletes = new Map<string, Map<string, IndexableType>>();

  add(change: RowChange): void {
    switch (change.table) {
      case 'messages':
        this.#write('messages', change.id, change.after);
        return;
      case 'memories':
        this.#addMemory(change);
        return;
      case 'blocks':
        this.#addBlock(change);
        return;
      case 'traces':
        this.#write('traces', change.id, change.after);
        return;
    }
  }

  /** A memory's row, and its vector: dropped with the memory (deleted or tombstoned), replaced when the change has one. */
  #addMemory(change: Extract<RowChange, { table: 'memories' }>): void {
    this.#write('memories', change.id, change.after);
    if (change.after === undefined || change.after.deletedAt !== undefined)
      this.#write('vectors', change.id, undefined);
    else if (change.vector !== undefined) this.#write('vectors', change.id, change.vector ?? undefined);
  }

  /** A block's row, under the key of its owner and label (outside the row). */
  #addBlock(change: Extract<RowChange, { table: 'blocks' }>): void {
    const row = change.after ?? change.before;
    if (row !== undefined)
      this.#write(BLOCKS_TABLE, change.id, change.after, blockKey(row.agentId, row.label, row.userId));
  }

  #write(table: string, id: string, row: unknown, key: IndexableType = id): void {
    const puts = this.#puts.get(table) ?? new Map<string, { key: IndexableType; row: unknown }>();
    const deletes = this.#deletes.get(table) ?? new Map<string, IndexableType>();
    this.#puts.set(table, puts);
    this.#deletes.set(table, deletes);
    if (row === undefined) {
      puts.delete(id);
      deletes.set(id, key);
    } else {
      deletes.delete(id);
      puts.set(id, { key, row });
    }
  }

  /** Every table's deletes, then its puts, all in flight at once (no two touch one key). */
  async flush(db: EngramDb): Promise<void> {
    const requests: Promise<unknown>[] = [];
    for (const [table, deletes] of this.#deletes)
      if (deletes.size > 0) requests.push(db.table(table).bulkDelete([...deletes.values()]));
    for (const [table, puts] of this.#puts) {
      if (puts.size === 0) continue;
      const entries = [...puts.values()];
      // The blocks table keeps its key outside the row.
      requests.push(
        table === BLOCKS_TABLE
          ? db.blocks.bulkPut(
              entries.map((e) => e.row as BlockRow),
              entries.map((e) => e.key as string),
            )
          : db.table(table).bulkPut(entries.map((e) => e.row)),
      );
    }
    await Promise.all(requests);
  }
}

/** Dexie's key bounds, re-exported for range queries in the engine. */
export const MIN_KEY = Dexie.minKey;
export const MAX_KEY = Dexie.maxKey;
