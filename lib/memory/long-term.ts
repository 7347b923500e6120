/**
 * Long-term memory in mem0's vocabulary: add / search / get / getAll / update /
 * delete / deleteAll / history. Validates at the door and calls the engine.
 */
import { ValidationError } from '../errors.js';
import type { EngineStore } from '../engine/engine-store.js';
import {
  addMemories,
  deleteMatching,
  deleteMemories,
  getLive,
  listMemories,
  memoryHistory,
  toItem,
  updateMemory,
  type MemoryHistoryEntry,
  type AddOutcome,
  type MemoryInput,
  type MemoryItem,
  type MemoryPatch,
} from '../engine/memories/memories.js';
import { SEARCH_MODES, searchMemories, type ScoredMemory, type SearchMode } from '../engine/memories/memory-search.js';
import { DEDUPE_MODES, type DedupeMode } from '../engine/memories/near-duplicates.js';
import type { SemanticIndex } from '../engine/vectors/semantic-index.js';
import { inferAndApply } from '../engine/memories/infer.js';
import type { ChatModel } from '../llm/chat-model.js';
import { retrievalProfile } from '../search/retrieval-profile.js';
import { compileFilters, type MemoryFilters } from '../search/filters.js';
import { MEMORY_SCOPE_FIELDS, type MemoryScope, type Scope } from '../store/scope.js';
import { ROLES, type Metadata } from '../store/rows.js';
import {
  abortSignal,
  boolean,
  checkedByCaller,
  checkOptions,
  definedOnly,
  finiteNumber,
  int,
  metadata,
  nonEmptyText,
  oneOf,
  optional,
  scopeSpec,
  withDefault,
  type Checked,
  type OptionsSpec,
} from '../util/options.js';
import { isPlainObject, requireId, requireOneOf, requireText } from '../util/validate.js';

/** Options of {@link LongTermMemory.add}. */
export interface AddOptions extends MemoryScope {
  /** Stored with the memory; filterable in search. */
  metadata?: Metadata;
  /**
   * Extract facts with the LLM (the `llm` option of open) and reconcile them with
   * similar memories (ADD, UPDATE, DELETE, NONE) instead of storing the raw text.
   * @default false
   */
  infer?: boolean;
  /**
   * What counts as a memory already stored in the same tier and scope (then
   * the standing memory comes back with event `NONE`): `'exact'` the same
   * text; `'near'` also the same statement said a little differently ("I'm"
   * / "I am", case, punctuation, filler words) and embedded close by; `'off'`
   * stores every text.
   * @default 'near'
   */
  dedupe?: DedupeMode;
  /**
   * With `infer`: how long each model call may take; past it the raw input is
   * stored and `error` says the model timed out (also when the model ignores
   * its AbortSignal).
   * @default 60000
   */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Options of {@link LongTermMemory.search}. */
export interface SearchOptions extends MemoryScope {
  filters?: MemoryFilters;
  /** Most results. @default 10 */
  limit?: number;
  /**
   * Minimum relevance (`score`, in [0, 1]) of a result, in every mode; in hybrid mode, where the
   * model's fusion is per query, a result also needs evidence (hasEvidence,
   * lib/search/retrieval-profile.ts).
   * @example 0.45
   */
  threshold?: number;
  /** @default 'hybrid' */
  mode?: SearchMode;
  signal?: AbortSignal;
}

/** One search result. */
export interface SearchResult extends MemoryItem {
  /**
   * Relevance in [0, 1]: cosine similarity (vector), BM25 over the most the query
   * could score (keyword), or their fusion (hybrid). Comparable across queries where
   * the model's fusion is `absolute`; where it is `per-query` (MiniLM) a hybrid
   * relevance is relative to the query's best, and a hybrid `threshold` also asks
   * for evidence (hasEvidence, lib/search/retrieval-profile.ts).
   */
  score: number;
  /** Cosine similarity with the query, where computed. */
  similarity?: number;
  /** BM25 score, when the memory matched the query's keywords. */
  keywordScore?: number;
  /** The BM25 score over the query's bound, in [0, 1]. */
  keywordRelevance?: number;
}

/** Options of {@link LongTermMemory.getAll}. */
export interface GetAllOptions extends MemoryScope {
  filters?: MemoryFilters;
  /** @default 100 */
  limit?: number;
  /** @default 0 */
  offset?: number;
}

/** Options of {@link LongTermMemory.deleteAll}: at least one scope field or filter. */
export interface DeleteAllOptions extends MemoryScope {
  filters?: MemoryFilters;
}

/** A change given to {@link LongTermMemory.update} as an object: new text and/or metadata. */
export interface MemoryChange {
  text?: string;
  metadata?: Metadata;
}

/** A chat message given to add(). */
export interface ChatMessage {
  role: string;
  content: string;
  name?: string;
}

/** The longest model deadline setTimeout can keep (about 24.8 days). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** The checks of a {@link MemoryScope}. */
const MEMORY_SCOPE_SPEC = scopeSpec(MEMORY_SCOPE_FIELDS) satisfies OptionsSpec<MemoryScope>;

/** The checks of {@link AddOptions}; metadata is held to the store's `maxContentBytes`. */
function addOptionsSpec(maxContentBytes: number) {
  return {
    ...MEMORY_SCOPE_SPEC,
    metadata: optional(metadata(maxContentBytes)),
    infer: optional(boolean),
    timeoutMs: optional(int(1, MAX_TIMEOUT_MS)),
    dedupe: withDefault(oneOf(DEDUPE_MODES), 'near'),
    signal: optional(abortSignal),
  } satisfies OptionsSpec<AddOptions>;
}

/** The checks of {@link SearchOptions}; `filters` is compiled with the call's scope (compileFilters). */
const SEARCH_OPTIONS_SPEC = {
  ...MEMORY_SCOPE_SPEC,
  filters: checkedByCaller<MemoryFilters>(),
  limit: withDefault(int(1, 1000), 10),
  threshold: optional(finiteNumber),
  mode: withDefault(oneOf(SEARCH_MODES), 'hybrid'),
  signal: optional(abortSignal),
} satisfies OptionsSpec<SearchOptions>;

/** The checks of {@link GetAllOptions}; `filters` is compiled with the call's scope. */
const GET_ALL_OPTIONS_SPEC = {
  ...MEMORY_SCOPE_SPEC,
  filters: checkedByCaller<MemoryFilters>(),
  limit: withDefault(int(1, 100_000), 100),
  offset: withDefault(int(0), 0),
} satisfies OptionsSpec<GetAllOptions>;

/** The checks of {@link DeleteAllOptions}; `filters` is compiled with the call's scope. */
const DELETE_ALL_OPTIONS_SPEC = {
  ...MEMORY_SCOPE_SPEC,
  filters: checkedByCaller<MemoryFilters>(),
} satisfies OptionsSpec<DeleteAllOptions>;

/** The checks of an {@link update} change given as an object (at least one of them). */
function changeSpec(maxContentBytes: number) {
  return {
    text: optional(nonEmptyText(maxContentBytes)),
    metadata: optional(metadata(maxContentBytes)),
  } satisfies OptionsSpec<MemoryChange>;
}

/** A scope object (userId / agentId / runId, nothing else), checked. */
export function parseScope(scope: unknown, field = 'scope'): Scope {
  return definedOnly(checkOptions(field, scope, MEMORY_SCOPE_SPEC));
}

/** The scope fields of checked options that hold a value. */
function scopeOf(checked: Checked<typeof MEMORY_SCOPE_SPEC>): Scope {
  const scope: Scope = {};
  for (const k of MEMORY_SCOPE_FIELDS) if (checked[k] !== undefined) scope[k] = checked[k];
  return scope;
}

/** Texts to store from a string or chat messages (system messages are skipped). */
/** The long-term memories to add: each text in the scope, its role (when given) beside the metadata. */
function memoryInputsOf(
  texts: readonly { text: string; role?: string }[],
  scope: Scope,
  metadata: Metadata,
): MemoryInput[] {
  return texts.map(({ text, role }) => ({
    text,
    tier: 'long_term',
    scope,
    metadata: role === undefined ? metadata : { ...metadata, role },
  }));
}

/** A scored memory as a search result: the item, its score, and the parts of the score the search had. */
function searchResultOf(h: ScoredMemory): SearchResult {
  return {
    ...toItem(h.row),
    score: h.score,
    ...(h.similarity === undefined ? {} : { similarity: h.similarity }),
    ...(h.keywordScore === undefined ? {} : { keywordScore: h.keywordScore }),
    ...(h.keywordRelevance === undefined ? {} : { keywordRelevance: h.keywordRelevance }),
  };
}

function textsOf(input: unknown, maxBytes: number): { text: string; role?: string }[] {
  if (typeof input === 'string') return [{ text: requireText('text', input, maxBytes) }];
  if (Array.isArray(input) && input.length > 0 && input.every((m) => isPlainObject(m) && m['role'] === 'system')) {
    throw new ValidationError('messages', 'has only system messages; nothing to remember');
  }
  if (!Array.isArray(input) || input.length === 0)
    throw new ValidationError('messages', 'must be a non-empty string or a non-empty array of messages');
  return input
    .map((m: unknown, i) => {
      if (!isPlainObject(m)) throw new ValidationError(`messages[${i}]`, 'must be an object with role and content');
      const role = requireOneOf(`messages[${i}].role`, m['role'], ROLES);
      return { text: requireText(`messages[${i}].content`, m['content'], maxBytes), role };
    })
    .filter((m) => m.role !== 'system');
}

/**
 * mem0-style long-term memory over the engine.
 * @example
 * await engram.add('Ana is allergic to peanuts', { userId: 'ana' })
 * const { results } = await engram.search('food allergies', { userId: 'ana' })
 */
export class LongTermMemory {
  readonly #core: EngineStore;
  readonly #semantic: SemanticIndex;
  readonly #model: ChatModel | undefined;

  constructor(core: EngineStore, semantic: SemanticIndex, model?: ChatModel) {
    this.#core = core;
    this.#semantic = semantic;
    this.#model = model;
  }

  /**
   * Stores a text, or each non-system message of a conversation, as memories.
   * With `infer`, stores the facts the LLM extracts instead; if the LLM fails the
   * raw input is stored and `error` says why.
   */
  async add(input: string | readonly ChatMessage[], options: AddOptions = {}): Promise<AddOutcome> {
    this.#core.assertOpen();
    const o = checkOptions('options', options, addOptionsSpec(this.#core.settings.maxContentBytes));
    const scope = scopeOf(o);
    const metadata = o.metadata ?? {};
    const texts = textsOf(input, this.#core.settings.maxContentBytes);
    const { timeoutMs, dedupe, signal } = o;
    if (timeoutMs !== undefined && o.infer !== true)
      throw new ValidationError('options.timeoutMs', 'applies to infer: true only');
    if (o.infer === true) {
      if (this.#model === undefined)
        throw new ValidationError('options.infer', 'needs an llm: open engram with { llm }');
      const conversation = texts.map((t) => ({ role: t.role ?? 'user', content: t.text }));
      return inferAndApply(this.#core, this.#semantic, this.#model, conversation, scope, metadata, {
        ...(signal === undefined ? {} : { signal }),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
    }
    const inputs = memoryInputsOf(texts, scope, metadata);
    const added = await addMemories(this.#core, this.#semantic, inputs, signal, dedupe);
    return { results: added.map(({ item, added: isNew }) => ({ ...item, event: isNew ? 'ADD' : 'NONE' })) };
  }

  /** Finds memories by meaning and keywords within a scope. */
  async search(query: string, options: SearchOptions = {}): Promise<{ results: SearchResult[] }> {
    this.#core.assertOpen();
    const text = requireText('query', query, this.#core.settings.maxContentBytes);
    const o = checkOptions('options', options, SEARCH_OPTIONS_SPEC);
    const filter = compileFilters(o.filters, scopeOf(o), 'options.filters');
    const { limit, mode, threshold, signal } = o;
    const hits = await searchMemories(this.#core, this.#semantic, text, {
      filter,
      limit,
      mode,
      ...(threshold === undefined ? {} : { threshold }),
      ...(signal === undefined ? {} : { signal }),
    });
    return { results: hits.map(searchResultOf) };
  }

  /**
   * The least relevance at which a search result counts as recalled by default
   * (PersistentMemory.retrieve, the agent's recall): the embedding model's
   * measured `minRelevance` (lib/search/retrieval-profile.ts). Loads the embedder.
   */
  async minRelevance(): Promise<number> {
    this.#core.assertOpen();
    const { embedder } = await this.#semantic.ready();
    return retrievalProfile(embedder.id).minRelevance;
  }

  /** One memory, or undefined when missing or deleted. */
  async get(id: string): Promise<MemoryItem | undefined> {
    this.#core.assertOpen();
    const row = await getLive(this.#core, requireId('id', id));
    return row === undefined ? undefined : toItem(row);
  }

  /** Memories of a scope, newest first, paged, with the total. */
  async getAll(options: GetAllOptions = {}): Promise<{ results: MemoryItem[]; total: number }> {
    this.#core.assertOpen();
    const o = checkOptions('options', options, GET_ALL_OPTIONS_SPEC);
    const filter = compileFilters(o.filters, scopeOf(o), 'options.filters');
    const { items, total } = await listMemories(this.#core, filter, o.offset, o.limit);
    return { results: items, total };
  }

  /** Changes a memory's text (re-embedded) and/or metadata; bumps its version and records history. */
  async update(id: string, change: string | MemoryChange): Promise<MemoryItem> {
    this.#core.assertOpen();
    requireId('id', id);
    const patch: MemoryPatch = {};
    if (typeof change === 'string') patch.text = requireText('text', change, this.#core.settings.maxContentBytes);
    else {
      // A change's fields are named bare (`text`, `metadata`), as when the text is given as a string.
      const c = checkOptions('change', change, changeSpec(this.#core.settings.maxContentBytes), undefined, '');
      if (c.text !== undefined) patch.text = c.text;
      if (c.metadata !== undefined) patch.metadata = c.metadata;
      if (patch.text === undefined && patch.metadata === undefined)
        throw new ValidationError('change', 'must give text or metadata');
    }
    return updateMemory(this.#core, this.#semantic, id, patch);
  }

  /** Deletes a memory (a tombstone stays for sync). Returns false when there was none. */
  async delete(id: string): Promise<boolean> {
    this.#core.assertOpen();
    return (await deleteMemories(this.#core, this.#semantic, [requireId('id', id)])) === 1;
  }

  /** Deletes every memory of a scope (at least one of userId, agentId, runId or a filter). */
  async deleteAll(options: DeleteAllOptions): Promise<number> {
    this.#core.assertOpen();
    const o = checkOptions('options', options, DELETE_ALL_OPTIONS_SPEC);
    const filter = compileFilters(o.filters, scopeOf(o), 'options.filters');
    if (filter.empty)
      throw new ValidationError(
        'scope',
        'deleteAll needs at least one scope field or filter; use reset() to delete everything',
      );
    return deleteMatching(this.#core, this.#semantic, filter);
  }

  /** A memory's changes, oldest first. */
  async history(id: string): Promise<MemoryHistoryEntry[]> {
    this.#core.assertOpen();
    return memoryHistory(this.#core, requireId('id', id));
  }
}
