/**
 * lib/engine ties the parts together: the store, the keyword index and (with
 * semantic memory) the vector index and the embedder. Faces in lib/memory call
 * the engine and never Dexie or WASM directly. The engine must not import faces.
 */
import { ClosedError } from '../errors.js';
import type { EngramDb } from '../store/schema.js';
import { ENGLISH_ANALYZER, type Analyzer } from '../search/analyze.js';
import { writeTransaction, type WritePlan, type WritePolicy } from '../store/write.js';

/** Settings every engine operation reads, fixed at open(). */
export interface StoreSettings {
  /** Largest accepted message content or memory text, in UTF-8 bytes. */
  maxContentBytes: number;
  /** The clock; injectable for tests of TTLs and ordering. */
  now: () => number;
  /** This device's id, recorded as the origin of the memories it writes. */
  deviceId: string;
  /** History entries kept per record (see `WritePolicy`); the store's default when absent. */
  historyLimit?: number;
}

/** A stored row that could not be used and was skipped; the rest of the store works. */
export interface DamagedRow {
  table: string;
  key: string;
  reason: string;
}

/** The open store and its settings, shared by every engine operation. */
export class EngineStore {
  readonly db: EngramDb;
  readonly settings: StoreSettings;
  /** How texts become keyword terms and embedder input (the store's language). */
  readonly analyzer: Analyzer;
  #closed = false;
  readonly #policy: WritePolicy;
  readonly #damaged = new Map<string, DamagedRow>();
  /** Write transactions under way, waited for by close(). */
  readonly #writes = new Set<Promise<unknown>>();
  /** Told of every damaged row as it is found (the facade forwards it to onProgress). */
  onDamaged: ((row: DamagedRow) => void) | undefined;

  constructor(db: EngramDb, settings: StoreSettings, analyzer: Analyzer = ENGLISH_ANALYZER) {
    this.db = db;
    this.settings = settings;
    this.analyzer = analyzer;
    this.#policy = settings.historyLimit === undefined ? {} : { historyLimit: settings.historyLimit };
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Throws ClosedError after close(). Every public operation calls it first. */
  assertOpen(): void {
    if (this.#closed) throw new ClosedError();
  }

  /** Damaged rows found so far (each once), skipped by the engine. */
  get damaged(): readonly DamagedRow[] {
    return [...this.#damaged.values()];
  }

  /** Records a row the engine skipped because it is malformed. */
  reportDamaged(row: DamagedRow): void {
    const key = `${row.table}\u0000${row.key}`;
    if (this.#damaged.has(key)) return;
    this.#damaged.set(key, row);
    this.onDamaged?.(row);
  }

  now(): number {
    return this.settings.now();
  }

  /**
   * The single write path; see {@link writeTransaction}. A write started before
   * close() is waited for by it: it commits and resolves, or rejects with a typed
   * error; a write asked for after close() began rejects with ClosedError.
   */
  async write<R>(plan: () => Promise<WritePlan<R>>): Promise<R> {
    this.assertOpen();
    const run = writeTransaction(this.db, this.settings.now, (text) => this.analyzer.document(text), plan, this.#policy);
    this.#writes.add(run);
    try {
      return await run;
    } finally {
      this.#writes.delete(run);
    }
  }

  /**
   * Marks the core closed (every later call rejects with ClosedError) and waits
   * for the writes under way to commit or fail; the caller then closes Dexie.
   */
  async markClosed(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#writes]);
  }
}
