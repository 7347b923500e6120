/**
 * The engine's public object. `Engram.open()` does the I/O; faces hang off it.
 */
import type { Embedder } from './embed/embedder.js';
import { TransformersEmbedder } from './embed/transformers-embedder.js';
import { KeyError, ValidationError } from './errors.js';
import { toChatModel, type ChatModel, type LlmOption } from './llm/chat-model.js';
import { Archival, parseArchivalOptions, type ArchivalOptions } from './memory/archival.js';
import { Blocks, parseBlocksOptions, type BlocksOptions } from './memory/blocks.js';
import { Conversation, type ConversationOptions } from './memory/conversation.js';
import {
  LongTermMemory,
  parseScope,
  type AddOptions,
  type ChatMessage,
  type GetAllOptions,
  type DeleteAllOptions,
  type MemoryChange,
  type SearchOptions,
  type SearchResult,
} from './memory/long-term.js';
import { PersistentMemory } from './memory/persistent.js';
import { Recall } from './memory/recall-memory.js';
import { MemorySystem, type MemorySystemOptions } from './memory/memory-system.js';
import { newId } from './util/id.js';
import {
  ANALYZER_LANGUAGES,
  ENGLISH_ANALYZER,
  loadAnalyzer,
  type Analyzer,
  type AnalyzerLanguage,
} from './search/analyze.js';
import {
  abortSignal,
  checkedByCaller,
  checkOptions,
  definedOnly,
  func,
  id,
  int,
  nested,
  oneOf,
  optional,
  scopeSpec,
  withDefault,
  type Check,
  type OptionsSpec,
} from './util/options.js';
import { isPlainObject, requireId } from './util/validate.js';
import { EngineStore, type DamagedRow } from './engine/engine-store.js';
import { forgetScope, type ForgetResult } from './engine/forget.js';
import { FORGET_SCOPE_FIELDS, type ForgetScope, type MemoryScope } from './store/scope.js';
import { syncMetaKeysOf } from './sync/store-host.js';
import { DEFAULT_HISTORY_LIMIT } from './store/write.js';
import { storeError } from './store/store-error.js';
import type { EngramDb } from './store/schema.js';
import type { AddOutcome, MemoryHistoryEntry, MemoryItem } from './engine/memories/memories.js';
import { ensureKeywordIndex } from './engine/keywords/keyword-reindex.js';
import { openStore, resetStore } from './engine/open-store.js';
import { changeAtRestKey, parseAtRestEncryption, type AtRestEncryption } from './store/at-rest-key.js';
import { decryptStore, encryptStore, type ConversionResult, type ConversionWork } from './engine/store-conversion.js';
import { saveFreshness } from './store/freshness-snapshot.js';
import { exportStore, parseExport, type TransferOptions } from './engine/transfer/transfer.js';
import {
  parseExportDecryption,
  parseExportEncryption,
  plainExportOf,
  sealExport,
  type ExportDecryption,
  type ExportOptions,
} from './engine/transfer/sealed-export.js';
import { importParsed, type ImportMode } from './engine/transfer/import-write.js';
import {
  closeKeywordState,
  flushKeywordState,
  keywordState,
  resetKeywordState,
} from './engine/keywords/keyword-state.js';
import {
  SemanticIndex,
  storedEmbedderRecord,
  type EmbedderRecord,
  type EmbedderSource,
} from './engine/vectors/semantic-index.js';
import type { IndexOrigin, LongWorkOptions } from './engine/vectors/vector-state.js';
import { SyncController, type SyncStatus } from './sync/sync-controller.js';
import type { AutoSyncOptions, SyncOptions } from './sync/sync-options.js';
import type { SyncResult } from './sync/sync-run.js';

/** Options of {@link Engram.open}. */
export interface EngramOptions {
  /**
   * Name of the IndexedDB database. Two instances with one name share one store.
   * @example 'my-assistant'
   */
  name: string;
  /**
   * Language of the keyword analysis (stemmer and stopwords). Opening a store
   * with another language than it was written in rebuilds its keyword index.
   * @default 'english'
   * @example 'german'
   */
  language?: AnalyzerLanguage;
  /**
   * Largest accepted message content or memory text, in UTF-8 bytes (also what
   * `Engram.import()` holds every row of the file to).
   * @default 1048576 (1 MB)
   */
  maxContentBytes?: number;
  /**
   * The clock, in epoch milliseconds; tests inject one to drive TTLs and dates.
   * @default Date.now
   */
  now?: () => number;
  /**
   * The embedder: an instance (still yours after close()), or a factory called on
   * first semantic use (its embedder is disposed by close()). Embeddings are cached
   * by content hash either way.
   * @default the offline model, `TransformersEmbedder.create()` (engram-glove-100d)
   * @example new HashEmbedder({ dimensions: 64 })
   */
  embedder?: Embedder | (() => Promise<Embedder>);
  /**
   * Re-embed every memory when the store was written with another embedder
   * (otherwise that is a DimensionMismatchError), inside open(): the same run as
   * {@link Engram.reembed}, which does it on an open store while searches and writes
   * go on. `true` or `{ onProgress, signal }`.
   * @default false
   */
  reembed?: boolean | LongWorkOptions;
  /** Progress of loading or rebuilding the vector index. */
  onProgress?: LongWorkOptions['onProgress'];
  /**
   * A language model for `add(messages, { infer: true })`: an OpenAI-compatible
   * endpoint (a local server keeps everything on the device) or an async function.
   * @example { baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' }
   */
  llm?: LlmOption;
  /**
   * History entries kept per record (memory, message, block, trace); older
   * versions are dropped as new ones are written, so history stays bounded.
   * @default 20
   * @example 100
   */
  historyLimit?: number;
  /**
   * Encrypt the store at rest: every text, metadata value, vector and index
   * snapshot is sealed (XChaCha20-Poly1305) and keyword terms are keyed hashes.
   * A WebCrypto AES-GCM `key` or a `passphrase`. A store is created encrypted or
   * plain and stays so; the wrong key, or the wrong kind of opening, is a
   * `KeyError` before anything is read or written. See the README's "Encryption at rest".
   * @default undefined (a plain store)
   * @example { passphrase: 'correct horse battery staple' }
   */
  encryption?: AtRestEncryption;
}

/** What {@link Engram.reembed} did. */
export interface ReembedResult {
  /** Live memories the store now holds with the new model's vectors. */
  total: number;
  /** Of them, embedded by this run (the rest were staged by an earlier, stopped run, or written with the new model). */
  embedded: number;
}

/** What {@link Engram.stats} reports. */
export interface EngramStats {
  /** Live (not deleted) memories. */
  memories: number;
  messages: number;
  /** Vectors in the loaded index; null before semantic memory is first used. */
  indexSize: number | null;
  /** How many damaged rows were skipped since open(). */
  damaged: number;
  /** The damaged rows: table, key and what is wrong. */
  damagedRows: readonly DamagedRow[];
}

const MAX_SYSTEMS = 64;

/** The checks of {@link MemorySystemOptions} (a new session id when none is given). */
const SYSTEM_OPTIONS_SPEC = {
  sessionId: optional(id),
  projectId: optional(id),
  maxEntries: withDefault(int(1, 100_000), 100),
  ttlMs: withDefault(int(1), 3_600_000),
} satisfies OptionsSpec<MemorySystemOptions>;

/** The checks of {@link ForgetScope}. */
const FORGET_SCOPE_SPEC = scopeSpec(FORGET_SCOPE_FIELDS) satisfies OptionsSpec<ForgetScope>;

/** `maxContentBytes` when not given (1 MiB): what open() holds input to and import() holds a file's rows to. */
const DEFAULT_MAX_CONTENT_BYTES = 1_048_576;

/** An Embedder, or a function that makes one (the offline model's by default: transformers.js loads inside create()). */
const embedderSource: Check<EmbedderSource> = (field, value) => {
  const embedder = typeof value === 'object' && value !== null && typeof (value as Embedder).embed === 'function';
  if (typeof value !== 'function' && !embedder)
    throw new ValidationError(field, 'must be an Embedder or a function returning one');
  return value as EmbedderSource;
};

/** The checks of {@link LongWorkOptions}. */
const LONG_WORK_SPEC = {
  signal: optional(abortSignal),
  onProgress: optional(func<NonNullable<LongWorkOptions['onProgress']>>()),
} satisfies OptionsSpec<LongWorkOptions>;

/** `reembed`: false or absent is none, true re-embeds with open()'s progress only, an object with its own. */
const reembedOption: Check<LongWorkOptions | undefined> = (field, value) => {
  if (value === undefined || value === false) return undefined;
  return value === true ? {} : definedOnly(nested(LONG_WORK_SPEC)(field, value));
};

/** The checks of {@link EngramOptions}; `llm` is checked by toChatModel, `encryption` by parseAtRestEncryption. */
const OPEN_OPTIONS_SPEC = {
  name: id,
  language: optional(oneOf(ANALYZER_LANGUAGES)),
  maxContentBytes: withDefault(int(1), DEFAULT_MAX_CONTENT_BYTES),
  now: withDefault(func<() => number>(), Date.now),
  embedder: withDefault(embedderSource, () => TransformersEmbedder.create()),
  reembed: reembedOption,
  onProgress: optional(func<NonNullable<EngramOptions['onProgress']>>()),
  llm: checkedByCaller<LlmOption>(),
  historyLimit: withDefault(int(1, 1_000_000), DEFAULT_HISTORY_LIMIT),
  encryption: (field, value) => parseAtRestEncryption(value, field),
} satisfies OptionsSpec<EngramOptions>;

/** A key or passphrase that must be given (the current one, or the next one of a store). */
const requiredEncryption: Check<AtRestEncryption> = (field, value) => {
  const encryption = parseAtRestEncryption(value, field);
  if (encryption === undefined) throw new ValidationError(field, 'is required: a key or a passphrase');
  return encryption;
};

/** The checks of {@link Engram.changeStoreKey}'s options. */
const STORE_KEY_CHANGE_SPEC = {
  encryption: requiredEncryption,
  newEncryption: requiredEncryption,
} satisfies OptionsSpec<{ encryption: AtRestEncryption; newEncryption: AtRestEncryption }>;

/** The checks of {@link ExportOptions}. */
const EXPORT_OPTIONS_SPEC = {
  signal: optional(abortSignal),
  onProgress: optional(func<NonNullable<ExportOptions['onProgress']>>()),
  encrypt: (field, value) => parseExportEncryption(value, field),
} satisfies OptionsSpec<ExportOptions>;

/** Options of {@link Engram.encryptStore} and {@link Engram.decryptStore}. */
export interface StoreConversionOptions extends ConversionWork {
  /**
   * The key or passphrase: the one to encrypt with, or the one the store is encrypted with.
   * @example { passphrase: 'correct horse battery staple' }
   */
  encryption: AtRestEncryption;
}

/** The checks of {@link StoreConversionOptions}. */
const CONVERSION_OPTIONS_SPEC = {
  encryption: (field, value) => {
    const encryption = parseAtRestEncryption(value, field);
    if (encryption === undefined) throw new ValidationError(field, 'is required: a key or a passphrase');
    return encryption;
  },
  signal: optional(abortSignal),
  onProgress: optional(func<NonNullable<ConversionWork['onProgress']>>()),
} satisfies OptionsSpec<StoreConversionOptions>;

/** The analyzer of a checked `language`. */
function analyzerOf(language: AnalyzerLanguage | undefined): Promise<Analyzer> {
  return language === undefined ? Promise.resolve(ENGLISH_ANALYZER) : loadAnalyzer(language);
}

/** Every error leaving the library is typed: a store closed under a call rejects with ClosedError, not Dexie's error. */
function typed<T>(call: Promise<T>): Promise<T> {
  return call.catch((e: unknown) => {
    throw storeError(e, 'engram');
  });
}

/** forget()'s scope checked: the fields given, at least one of them. */
function forgetScopeOf(scope: ForgetScope): ForgetScope {
  const parsed: ForgetScope = definedOnly(
    checkOptions('scope', scope, FORGET_SCOPE_SPEC, 'must be an object with userId, agentId, runId or projectId'),
  );
  if (Object.keys(parsed).length === 0)
    throw new ValidationError('scope', 'must name at least one of userId, agentId, runId, projectId');
  return parsed;
}

/** Damaged rows reach the caller's onProgress: those the at-rest sealing finds, through the store's report. */
function reportDamage(db: EngramDb, core: EngineStore, progress: LongWorkOptions): void {
  if (db.sealing !== undefined)
    db.sealing.onDamaged = (row) => {
      core.reportDamaged(row);
    };
  core.onDamaged = (row) =>
    progress.onProgress?.({ phase: 'damaged', done: core.damaged.length, total: core.damaged.length, damaged: row });
}

/** Checks import()'s mode and file, and splits its options: the import's own, the transfer's, the store's for open(). */
function importArgsOf(
  file: unknown,
  options: EngramOptions & TransferOptions & { mode: ImportMode; decrypt?: ExportDecryption },
): { mode: ImportMode; decrypt: ExportDecryption | undefined; transfer: TransferOptions; openOptions: EngramOptions } {
  if (!isPlainObject(options)) throw new ValidationError('options', 'must be an object with name and mode');
  const { mode, signal, onProgress, decrypt, ...openOptions } = options;
  const given: unknown = mode;
  if (given !== 'merge' && given !== 'replace')
    throw new ValidationError('options.mode', "must be 'merge' or 'replace'");
  if (typeof file !== 'string' && !(file instanceof Blob))
    throw new ValidationError('file', 'must be a Blob, a File or a string');
  const transfer: TransferOptions = {
    ...(signal === undefined ? {} : { signal }),
    ...(onProgress === undefined ? {} : { onProgress }),
  };
  return { mode, decrypt, transfer, openOptions };
}

/**
 * On-device memory for an AI agent.
 * @example
 * const engram = await Engram.open({ name: 'assistant' })
 * const chat = engram.conversation('thread-1')
 * await chat.add({ role: 'user', content: 'I moved to Lisbon last spring.' })
 * const { results } = await engram.recall.textSearch('lisbon')
 * await engram.close()
 */
export class Engram {
  readonly name: string;
  readonly #core: EngineStore;
  readonly #recall: Recall;
  readonly #semantic: SemanticIndex;
  readonly #memory: LongTermMemory;
  readonly #progress: LongWorkOptions;
  /** Memory systems by (session, project), least recently used first. */
  readonly #systems = new Map<string, MemorySystem>();
  /** Sync with Qdrant, made on first use (the Qdrant client loads only then). */
  #sync: SyncController | undefined;
  #closing: Promise<void> | undefined;

  private constructor(
    name: string,
    core: EngineStore,
    semantic: SemanticIndex,
    progress: LongWorkOptions,
    model: ChatModel | undefined,
  ) {
    this.name = name;
    this.#core = core;
    this.#recall = new Recall(core);
    this.#semantic = semantic;
    this.#memory = new LongTermMemory(core, semantic, model);
    this.#progress = progress;
  }

  /** Opens (or creates) the store `options.name`. */
  static async open(options: EngramOptions): Promise<Engram> {
    const o = checkOptions('options', options, OPEN_OPTIONS_SPEC, 'must be an object with a name');
    const { name, maxContentBytes, now, historyLimit, embedder: source, reembed, encryption } = o;
    const progress: LongWorkOptions = o.onProgress === undefined ? {} : { onProgress: o.onProgress };
    const model = o.llm === undefined ? undefined : toChatModel(o.llm);
    const analyzer = await analyzerOf(o.language);
    const { db, deviceId } = await openStore(name, encryption);
    try {
      await ensureKeywordIndex(db, analyzer);
    } catch (e) {
      db.close();
      throw e;
    }
    const core = new EngineStore(db, { maxContentBytes, now, deviceId, historyLimit }, analyzer);
    reportDamage(db, core, progress);
    const semantic = new SemanticIndex(core, source, reembed);
    const engram = new Engram(name, core, semantic, progress, model);
    // The keyword index loads beside the vector index (its snapshot is read while the vector
    // snapshot's chunks are), so the first keyword or hybrid search does not wait for it.
    // A failure here is only a later load: the first keyword search tries again and reports it.
    keywordState(core).catch(() => undefined);
    // A store that already holds memories checks its embedder (and loads its index) now,
    // so a mismatch surfaces at open; an empty one loads the model on first use.
    if ((await SemanticIndex.recorded(core)) !== undefined || core.damaged.length > 0) {
      try {
        await semantic.ready(progress);
      } catch (e) {
        await engram.close();
        throw e;
      }
    }
    return engram;
  }

  /**
   * The embedder the store `name`'s vectors were made with (its id and dimension), read
   * without loading a model or an index: an app picks the model to open the store with
   * (the same one, or another with `reembed`). undefined when the store never embedded
   * anything (or its record is damaged, which open() then reports). A store encrypted at
   * rest needs its `encryption` (else `KeyError`, as open()).
   * @example
   * const stored = await Engram.storedEmbedder('assistant'); // { id: 'engram-glove-100d', dimensions: 100 }
   */
  static async storedEmbedder(
    name: string,
    options: Pick<EngramOptions, 'encryption'> = {},
  ): Promise<EmbedderRecord | undefined> {
    if (!isPlainObject(options)) throw new ValidationError('options', 'must be an object');
    const { db } = await openStore(
      requireId('name', name),
      parseAtRestEncryption(options.encryption, 'options.encryption'),
    );
    try {
      return await storedEmbedderRecord(db);
    } finally {
      db.close();
    }
  }

  /**
   * Changes the passphrase (or key) of the encrypted store `name`: the store's data key is
   * wrapped again under `newEncryption`, one small write of its key header; no row is
   * re-encrypted, and instances that hold the store open keep working. `encryption` must open
   * the store (a `KeyError` `wrong-key` before anything is written; `not-encrypted` for a plain
   * store, which `Engram.encryptStore` converts). Afterwards only `newEncryption` opens it.
   * @example
   * await Engram.changeStoreKey('assistant', { encryption: { passphrase: old }, newEncryption: { passphrase: next } })
   */
  static async changeStoreKey(
    name: string,
    options: { encryption: AtRestEncryption; newEncryption: AtRestEncryption },
  ): Promise<void> {
    const { encryption, newEncryption } = checkOptions('options', options, STORE_KEY_CHANGE_SPEC);
    await changeAtRestKey(requireId('name', name), encryption, newEncryption);
  }

  /**
   * Encrypts the existing plain store `name` at rest (as `open({ encryption })` would have made
   * it), in place, all of it or nothing: one IndexedDB upgrade, so a cancel (`signal`), an error
   * or a killed tab leaves the store exactly as it was. Other instances holding the store are
   * closed by it and refuse their next call with a KeyError (open it again with the key); the
   * index snapshots are carried over (the next open restores from them). `KeyError` `already-encrypted`, `NotFoundError`
   * when there is no such store, `AbortError` when cancelled. See the README's "Encryption at rest".
   * @example
   * await Engram.encryptStore('assistant', { encryption: { passphrase }, onProgress: (p) => show(p.done, p.total) })
   * const engram = await Engram.open({ name: 'assistant', encryption: { passphrase } })
   */
  static async encryptStore(name: string, options: StoreConversionOptions): Promise<ConversionResult> {
    const { encryption, ...work } = checkOptions(
      'options',
      options,
      CONVERSION_OPTIONS_SPEC,
      'must be an object with encryption',
    );
    return encryptStore(requireId('name', name), encryption, definedOnly(work));
  }

  /**
   * Turns the encrypted store `name` back into a plain one, in place, all of it or nothing (as
   * {@link Engram.encryptStore}). `encryption` must open it: a `KeyError` `wrong-key` before
   * anything is written; `not-encrypted` for a plain store. Rows that do not open (damaged) are
   * reported in the result and dropped.
   * @example
   * await Engram.decryptStore('assistant', { encryption: { passphrase } })
   */
  static async decryptStore(name: string, options: StoreConversionOptions): Promise<ConversionResult> {
    const { encryption, ...work } = checkOptions(
      'options',
      options,
      CONVERSION_OPTIONS_SPEC,
      'must be an object with encryption',
    );
    return decryptStore(requireId('name', name), encryption, definedOnly(work));
  }

  /** True after close(). */
  get closed(): boolean {
    return this.#core.closed;
  }

  /**
   * A thread of conversation (MassGen ConversationMemory plus MemGPT's context operations).
   * @example
   * const chat = engram.conversation('t1', { agentId: 'helper' })
   */
  conversation(threadId: string, options: ConversationOptions = {}): Conversation {
    this.#core.assertOpen();
    return new Conversation(this.#core, requireId('threadId', threadId), options);
  }

  /** Search over every stored message (MemGPT recall memory). */
  get recall(): Recall {
    this.#core.assertOpen();
    return this.#recall;
  }

  /**
   * Core memory blocks of one agent (MemGPT), or of one user of the agent with
   * `{ userId }`. A user sees their own blocks and the agent's blocks set with
   * `shared: true`; nobody else's.
   * @example
   * await engram.blocks('helper').set('persona', 'Patient and brief.', { shared: true })
   * await engram.blocks('helper', { userId: 'ana' }).set('human', 'Name: Ana')
   */
  blocks(agentId: string, options: BlocksOptions = {}): Blocks {
    this.#core.assertOpen();
    return new Blocks(this.#core, requireId('agentId', agentId), parseBlocksOptions(options));
  }

  /** Stores a text, or the non-system messages of a conversation, as long-term memories (mem0 add). */
  add(input: string | readonly ChatMessage[], options?: AddOptions): Promise<AddOutcome> {
    return typed(this.#memory.add(input, options));
  }

  /**
   * Finds memories by meaning and keywords (hybrid by default) within a scope.
   * @example
   * const { results } = await engram.search('where does Ana live?', { userId: 'ana', limit: 3 })
   */
  search(query: string, options?: SearchOptions): Promise<{ results: SearchResult[] }> {
    return typed(this.#memory.search(query, options));
  }

  /** One memory, or undefined when missing or deleted. */
  get(id: string): Promise<MemoryItem | undefined> {
    return typed(this.#memory.get(id));
  }

  /** Memories of a scope, newest first, paged. */
  getAll(options?: GetAllOptions): Promise<{ results: MemoryItem[]; total: number }> {
    return typed(this.#memory.getAll(options));
  }

  /** Changes a memory's text (re-embedded) or metadata; bumps its version and records history. */
  update(id: string, change: string | MemoryChange): Promise<MemoryItem> {
    return typed(this.#memory.update(id, change));
  }

  /** Deletes a memory (a tombstone stays for sync). */
  delete(id: string): Promise<boolean> {
    return typed(this.#memory.delete(id));
  }

  /** Deletes every memory of a scope. */
  deleteAll(scope: DeleteAllOptions): Promise<number> {
    return typed(this.#memory.deleteAll(scope));
  }

  /**
   * Forgets everything of a user, agent, run or project (every given field must
   * match): memories, messages, core memory blocks, traces, their history,
   * keyword terms, vectors and index entries, in one transaction. Other scopes
   * are untouched. A memory leaves only a text-free tombstone (id, scope, times,
   * version, origin) so sync can carry the deletion to other devices.
   * @example
   * const removed = await engram.forget({ userId: 'ana' }) // { memories: 12, messages: 40, … }
   */
  async forget(scope: ForgetScope): Promise<ForgetResult> {
    this.#core.assertOpen();
    const parsed = forgetScopeOf(scope);
    const result = await typed(
      forgetScope(this.#core, parsed, {
        metaKeysOf: (records) => records.flatMap((r) => syncMetaKeysOf(r.table, r.id)),
      }),
    );
    this.#systems.clear();
    if (this.#semantic.started) {
      // The store generation moved: the index reloads from the store, without what was forgotten.
      const { state } = await this.#semantic.ready();
      await state.catchUp();
      await state.snapshot();
    }
    await flushKeywordState(this.#core);
    return result;
  }

  /** A memory's history (ADD, UPDATE, DELETE), oldest first. */
  history(id: string): Promise<MemoryHistoryEntry[]> {
    return typed(this.#memory.history(id));
  }

  /** Deletes everything in this store: messages, memories, blocks, traces, history. */
  async reset(): Promise<void> {
    this.#core.assertOpen();
    await resetStore(this.#core.db);
    await resetKeywordState(this.#core);
    if (this.#semantic.started) {
      // The reset bumped the store generation: the index reloads (empty) from the store.
      const { state } = await this.#semantic.ready();
      await state.catchUp();
    }
  }

  /**
   * MassGen PersistentMemory for an agent/user/run.
   * @example
   * const memory = engram.persistent({ agentId: 'helper', userId: 'ana' })
   */
  persistent(scope: MemoryScope = {}): PersistentMemory {
    this.#core.assertOpen();
    return new PersistentMemory(this.#memory, parseScope(scope, 'scope'));
  }

  /**
   * The three-tier memory system of a session and project. Systems are cached per
   * (session, project); the 64 most recently used are kept.
   * @example
   * const mem = engram.system({ sessionId: 's1', projectId: 'apollo' })
   */
  system(options: MemorySystemOptions = {}): MemorySystem {
    this.#core.assertOpen();
    const o = checkOptions('options', options, SYSTEM_OPTIONS_SPEC);
    const sessionId = o.sessionId ?? newId(this.#core.now());
    const { projectId, maxEntries, ttlMs } = o;
    const key = JSON.stringify([sessionId, projectId ?? null, maxEntries, ttlMs]);
    return this.#cachedSystem(
      key,
      () =>
        new MemorySystem(this.#core, this.#semantic, {
          sessionId,
          maxEntries,
          ttlMs,
          ...(projectId === undefined ? {} : { projectId }),
        }),
    );
  }

  /** The system cached under `key` (made by `make` when absent), now the most recently used; past MAX_SYSTEMS the least is dropped. */
  #cachedSystem(key: string, make: () => MemorySystem): MemorySystem {
    let system = this.#systems.get(key);
    if (system === undefined) {
      system = make();
      if (this.#systems.size >= MAX_SYSTEMS) this.#systems.delete(this.#systems.keys().next().value!);
    } else {
      this.#systems.delete(key);
    }
    this.#systems.set(key, system);
    return system;
  }

  /**
   * MemGPT archival memory of an agent, or of one user of the agent with `{ userId }`.
   * @example
   * await engram.archival('helper', { userId: 'ana' }).insert('Ana keeps bees.')
   */
  archival(agentId: string, options: ArchivalOptions = {}): Archival {
    this.#core.assertOpen();
    return new Archival(this.#memory, requireId('agentId', agentId), parseArchivalOptions(options));
  }

  /**
   * Loads the embedder and the vector index now rather than on first use, with progress.
   * Reports whether the index came from its snapshot or was rebuilt.
   */
  async ready(
    options: LongWorkOptions = {},
  ): Promise<{ embedderId: string; dimensions: number; index: IndexOrigin; size: number; damaged: number }> {
    this.#core.assertOpen();
    const { embedder, state } = await this.#semantic.ready({ ...this.#progress, ...options });
    return {
      embedderId: embedder.id,
      dimensions: embedder.dimensions,
      index: state.origin,
      size: state.index.size,
      damaged: this.#core.damaged.length,
    };
  }

  /**
   * Re-embeds every memory with another model while the store stays open, then switches
   * to it. Meanwhile searches answer from the current model's index (and keywords), and
   * writes carry on: each memory written is embedded by the new model too before the
   * switch. The switch is one small transaction: the store's recorded embedder changes
   * only when every live memory of every scope has the new model's vector of its current
   * text; from then on searches and writes use the new model, and the vector rows are
   * rewritten in small transactions before this returns. Stopped (the signal, a
   * failing model, a closed tab), the store stays on its model and searches as before;
   * what was embedded is kept, so the next run with the same model embeds only the rest.
   * `embedder` is an instance (still yours) or a factory (its embedder is this engram's
   * from the switch on, disposed by close()). Progress: phase `reembed`, then the new
   * index's `rebuild`.
   * @example
   * const { total } = await engram.reembed(() => TransformersEmbedder.create({ model: MINILM_EMBEDDING_MODEL }), {
   *   onProgress: (p) => console.log(p.phase, p.done, p.total),
   *   signal: controller.signal,
   * });
   */
  async reembed(embedder: Embedder | (() => Promise<Embedder>), options: LongWorkOptions = {}): Promise<ReembedResult> {
    this.#core.assertOpen();
    const source = embedderSource('embedder', embedder);
    const work = definedOnly(checkOptions('options', options, LONG_WORK_SPEC));
    const { total, embedded } = await typed(this.#semantic.reembed(source, work));
    return { total, embedded };
  }

  /**
   * What the store holds and how healthy it is: live memories and messages, the
   * vector index's size (when loaded), and the damaged rows that were skipped
   * (a malformed `meta` row, a stored vector of the wrong length or with NaN).
   * Damaged rows never stop the store from opening; their memories stay readable.
   * @example
   * const { damaged } = await engram.stats()
   */
  async stats(): Promise<EngramStats> {
    this.#core.assertOpen();
    const { db } = this.#core;
    const [memories, messages] = await Promise.all([
      db.memories.filter((m) => m.deletedAt === undefined).count(),
      db.messages.count(),
    ]);
    const state = this.#semantic.started ? (await this.#semantic.ready()).state : undefined;
    const damagedRows = this.#core.damaged;
    return { memories, messages, indexSize: state?.index.size ?? null, damaged: damagedRows.length, damagedRows };
  }

  /**
   * The whole store as a versioned JSON-lines file (messages, memories with
   * vectors, history, blocks, traces), with progress; with `encrypt`, that file
   * sealed under a passphrase (sealed-export.ts).
   * @example
   * const file = await engram.export({ onProgress: (p) => console.log(p.done, p.total) })
   * const sealed = await engram.export({ encrypt: 'correct horse battery staple' })
   */
  async export(options: ExportOptions = {}): Promise<Blob> {
    this.#core.assertOpen();
    const { encrypt, ...transfer } = definedOnly(checkOptions('options', options, EXPORT_OPTIONS_SPEC));
    const plain = await exportStore(this.#core, transfer);
    return encrypt === undefined ? plain : sealExport(plain, encrypt, transfer);
  }

  /**
   * Imports an export file into the store `options.name` and opens it. Every line
   * is validated first; a bad file gives an ImportError with the line number and
   * the store is left as it was. `replace` empties the store first; `merge` keeps
   * it and takes new or newer records. An encrypted export needs its passphrase as
   * `decrypt` (a KeyError `key-needed` without it, `wrong-key` for a wrong one,
   * `not-encrypted` when the file is plain); `encryption` is the store's own, as in open().
   * @example
   * const engram = await Engram.import(file, { name: 'assistant', mode: 'merge' })
   * const copy = await Engram.import(sealed, { name: 'copy', mode: 'replace', decrypt: 'correct horse battery staple' })
   */
  static async import(
    file: Blob | string,
    options: EngramOptions & TransferOptions & { mode: ImportMode; decrypt?: ExportDecryption },
  ): Promise<Engram> {
    const { mode, decrypt, transfer, openOptions } = importArgsOf(file, options);
    const { name, language, maxContentBytes, now, encryption } = checkOptions(
      'options',
      openOptions,
      OPEN_OPTIONS_SPEC,
    );
    const passphrase = parseExportDecryption(decrypt, 'options.decrypt');
    const plain = await plainExportOf(file, passphrase, transfer);
    const parsed = await parseExport(plain, { maxContentBytes }, transfer);
    const analyzer = await analyzerOf(language);
    const { db, deviceId } = await openStore(name, encryption);
    const core = new EngineStore(db, { maxContentBytes: Number.MAX_SAFE_INTEGER, now, deviceId }, analyzer);
    try {
      await ensureKeywordIndex(db, analyzer);
      await importParsed(core, parsed, mode, transfer);
    } finally {
      await core.markClosed();
      db.close();
    }
    return Engram.open(openOptions);
  }

  #syncer(): SyncController {
    this.#core.assertOpen();
    const core = this.#core;
    const semantic = this.#semantic;
    this.#sync ??= new SyncController({
      db: core.db,
      deviceId: core.settings.deviceId,
      now: () => core.now(),
      maxContentBytes: core.settings.maxContentBytes,
      write: (plan) => core.write(plan),
      embedder: async () => {
        const { embedder } = await semantic.ready(this.#progress);
        return { id: embedder.id, dimensions: embedder.dimensions };
      },
      afterWrite: async () => {
        const { state } = await semantic.ready();
        await state.catchUp();
      },
    });
    return this.#sync;
  }

  /**
   * Syncs with the user's own Qdrant: pulls what other devices pushed, then pushes
   * this store's changes. Long-term memories and core memory blocks by default.
   * @example
   * const { uploaded, downloaded } = await engram.sync({ url: 'http://127.0.0.1:6333', encryption: { passphrase } })
   */
  async sync(options: SyncOptions): Promise<SyncResult> {
    return this.#syncer().sync(options);
  }

  /**
   * Syncs every `intervalMs`, backing off exponentially while the server is unreachable.
   * @example
   * await engram.startAutoSync({ url: 'http://127.0.0.1:6333', intervalMs: 60_000 })
   */
  async startAutoSync(options: AutoSyncOptions): Promise<void> {
    await this.#syncer().startAutoSync(options);
  }

  /** Stops auto-sync (and a sync it is running). Idempotent. */
  async stopAutoSync(): Promise<void> {
    await this.#sync?.stopAutoSync();
  }

  /** Sync's state: running, auto, last result or error, cursors per collection. */
  async syncStatus(): Promise<SyncStatus> {
    return this.#syncer().status();
  }

  /**
   * Finishes the index work that waits for a pause in writing (new vectors are
   * merged into HNSW) and writes the vector and keyword index snapshots now.
   * close() writes the snapshots too, keeping unmerged vectors apart in them.
   */
  async flush(): Promise<void> {
    this.#core.assertOpen();
    const vectors = async (): Promise<void> => {
      if (!this.#semantic.started) return;
      const { state } = await this.#semantic.ready();
      await state.catchUp();
      await state.mergeAll();
      await state.snapshot();
    };
    // Side by side: the HNSW merge (WebAssembly on this thread) runs while IndexedDB writes the keyword snapshot.
    const settled = await Promise.allSettled([flushKeywordState(this.#core), vectors()]);
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
  }

  /**
   * Closes the store: snapshots the index, frees WASM and the model, closes
   * IndexedDB. Idempotent. Writes under way finish first: one that commits
   * resolves as a success, one that cannot start any more rejects with ClosedError.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    // Later calls reject with ClosedError from here on; writes already started may commit.
    const writesSettled = this.#core.markClosed();
    try {
      await writesSettled;
      await this.#sync?.close();
      await this.#semantic.close();
      await closeKeywordState(this.#core);
      // An encrypted store's row versions: the next open reads them and not the journal (a failure only lengthens it).
      await saveFreshness(this.#core.db).catch(() => undefined);
    } catch (e) {
      // The store was encrypted or decrypted by another instance since (Engram.encryptStore): its
      // reopen refuses (KeyError), and nothing of this instance's is saved into it.
      const failure = storeError(e, 'close');
      if (!(failure instanceof KeyError)) throw failure;
    } finally {
      this.#core.closeDb();
    }
  }
}
