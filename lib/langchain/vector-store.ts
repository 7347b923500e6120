/**
 * engram's long-term memory as a LangChain `VectorStore`, bound to one scope:
 * documents become memories (their metadata filterable), searches are engram's
 * own (hybrid by default, scores in [0, 1]), and nothing outside the scope is
 * read, returned or deleted.
 */
import { Document, type DocumentInterface } from '@langchain/core/documents';
import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import { VectorStore } from '@langchain/core/vectorstores';
import type { Engram } from '../engram.js';
import type { SearchMode } from '../engine/memories/memory-search.js';
import type { SearchResult } from '../memory/long-term.js';
import type { MemoryScope } from '../store/scope.js';
import type { MemoryFilters } from '../search/filters.js';
import type { Metadata } from '../store/rows.js';
import { ClosedError, ValidationError } from '../errors.js';
import { isPlainObject } from '../util/validate.js';
import {
  checkedByCaller,
  checkOptions,
  definedOnly,
  listOf,
  oneOf,
  optional,
  scopeSpec,
  withDefault,
  id,
  type OptionsSpec,
} from '../util/options.js';

/** What a search may filter on besides the store's scope (which a filter cannot widen). */
export type EngramVectorStoreFilter = Pick<MemoryFilters, 'tier' | 'metadata' | 'createdAt' | 'updatedAt'>;

/** The scope fields of a MemoryScope (an adapter imports no value from the store, only its types). */
const SCOPE_KEYS = ['userId', 'agentId', 'runId'] as const satisfies readonly (keyof MemoryScope)[];

/** The ranking modes of engram's search (an adapter imports no value from the engine either). */
const SEARCH_MODES = ['hybrid', 'vector', 'keyword'] as const satisfies readonly SearchMode[];

/** Options of {@link EngramVectorStore}. */
export interface EngramVectorStoreOptions extends MemoryScope {
  /** How searches rank: engram's fusion of vector and keyword search, or one of them. @default 'hybrid' */
  mode?: SearchMode;
}

/** The parameters of {@link EngramVectorStore.delete} (ids, or a filter, or both). */
export interface EngramVectorStoreDeleteParams {
  ids?: string[];
  filter?: EngramVectorStoreFilter;
}

/** The checks of {@link EngramVectorStoreOptions}. */
const STORE_OPTIONS_SPEC = {
  ...scopeSpec(SCOPE_KEYS),
  mode: withDefault(oneOf(SEARCH_MODES), 'hybrid'),
} satisfies OptionsSpec<EngramVectorStoreOptions>;

/**
 * The keys of a filter: its values are checked where engram compiles it with the
 * store's scope (compileFilters). A filter may come from a model (a self-querying
 * retriever): it narrows, never widens, the scope.
 */
const FILTER_SPEC = {
  tier: checkedByCaller<EngramVectorStoreFilter['tier']>(),
  metadata: checkedByCaller<EngramVectorStoreFilter['metadata']>(),
  createdAt: checkedByCaller<EngramVectorStoreFilter['createdAt']>(),
  updatedAt: checkedByCaller<EngramVectorStoreFilter['updatedAt']>(),
} satisfies OptionsSpec<EngramVectorStoreFilter>;

const FILTER_HINT = `must be an object of ${Object.keys(FILTER_SPEC).join(', ')} (the scope is the store's)`;

/** A filter, checked at the door. */
const checkFilter = optional((field, value) => definedOnly(checkOptions(field, value, FILTER_SPEC, FILTER_HINT)));

/** The checks of {@link EngramVectorStoreDeleteParams}; an id outside the scope deletes nothing. */
const DELETE_PARAMS_SPEC = {
  ids: optional(listOf(id, 'must be an array of ids')),
  filter: checkFilter,
} satisfies OptionsSpec<EngramVectorStoreDeleteParams>;

const VECTORS_UNSUPPORTED =
  'engram computes its own embeddings: pass texts (addDocuments, similaritySearch), not vectors';

/**
 * engram embeds with its own embedder, inside the store; a LangChain `VectorStore`
 * still carries an `embeddings`. This one answers that vectors are not taken.
 */
class EngramEmbedsItself implements EmbeddingsInterface {
  embedQuery(): Promise<number[]> {
    return Promise.reject(new ValidationError('embeddings', VECTORS_UNSUPPORTED));
  }
  embedDocuments(): Promise<number[][]> {
    return Promise.reject(new ValidationError('embeddings', VECTORS_UNSUPPORTED));
  }
}

/**
 * A LangChain vector store over engram's long-term memory in one scope.
 * @example
 * const store = new EngramVectorStore(engram, { userId: 'ana' })
 * await store.addDocuments([{ pageContent: 'Ana is allergic to peanuts', metadata: { topic: 'health' } }])
 * const docs = await store.asRetriever({ k: 3 }).invoke('what should Ana not eat?')
 */
export class EngramVectorStore extends VectorStore {
  declare FilterType: EngramVectorStoreFilter;
  readonly #engram: Engram;
  readonly #scope: MemoryScope;
  readonly #mode: SearchMode;

  /** Binds the store to an open engram and a scope; options are checked here. */
  constructor(engram: Engram, options: EngramVectorStoreOptions = {}) {
    if (engram.closed) throw new ClosedError();
    const { mode, ...scope } = checkOptions('options', options, STORE_OPTIONS_SPEC);
    super(new EngramEmbedsItself(), {});
    this.#engram = engram;
    this.#scope = definedOnly(scope);
    this.#mode = mode;
  }

  /** The scope every call reads and writes in. */
  get scope(): MemoryScope {
    return { ...this.#scope };
  }

  _vectorstoreType(): string {
    return 'engram';
  }

  /**
   * Stores each document's text as a memory in the scope, with its metadata
   * (JSON values, filterable). Answers with the memories' ids, in order; a text
   * the scope already holds answers with the standing memory's id.
   */
  override async addDocuments(documents: DocumentInterface[], options?: { ids?: string[] }): Promise<string[]> {
    if (!Array.isArray(documents)) throw new ValidationError('documents', 'must be an array of documents');
    if (options?.ids !== undefined)
      throw new ValidationError('options.ids', 'engram makes the ids of new memories; read them from the answer');
    const ids: string[] = [];
    for (const [i, doc] of documents.entries()) {
      if (!isPlainObject(doc) && !(doc instanceof Document))
        throw new ValidationError(`documents[${i}]`, 'must be a document with pageContent');
      const metadata: unknown = doc.metadata;
      const hasMetadata = metadata !== undefined && !(isPlainObject(metadata) && Object.keys(metadata).length === 0);
      const { results } = await this.#engram.add(doc.pageContent, {
        ...this.#scope,
        ...(hasMetadata ? { metadata: metadata as Metadata } : {}),
      });
      for (const r of results) ids.push(r.id);
    }
    return ids;
  }

  /** Not taken: engram embeds texts itself. Rejects with a ValidationError. */
  override addVectors(): Promise<string[]> {
    return Promise.reject(new ValidationError('vectors', VECTORS_UNSUPPORTED));
  }

  /** Not taken: engram searches by text. Rejects with a ValidationError. */
  override similaritySearchVectorWithScore(): Promise<[DocumentInterface, number][]> {
    return Promise.reject(new ValidationError('vectors', VECTORS_UNSUPPORTED));
  }

  /** The `k` memories of the scope most relevant to `query`, with engram's score in [0, 1], best first. */
  override async similaritySearchWithScore(
    query: string,
    k = 4,
    filter?: EngramVectorStoreFilter,
  ): Promise<[DocumentInterface, number][]> {
    const filters = checkFilter('filter', filter);
    const { results } = await this.#engram.search(query, {
      ...this.#scope,
      limit: k,
      mode: this.#mode,
      ...(filters === undefined ? {} : { filters }),
    });
    return results.map((r) => [toDocument(r), r.score]);
  }

  /** The `k` memories of the scope most relevant to `query` (what `asRetriever()` calls). */
  override async similaritySearch(
    query: string,
    k = 4,
    filter?: EngramVectorStoreFilter,
  ): Promise<DocumentInterface[]> {
    return (await this.similaritySearchWithScore(query, k, filter)).map(([doc]) => doc);
  }

  /**
   * Deletes memories of the scope: by `ids` (an id outside the scope, or unknown,
   * deletes nothing), or every memory matching `filter`. Deleted means forgotten:
   * no table keeps the text.
   */
  override async delete(params: EngramVectorStoreDeleteParams = {}): Promise<void> {
    const { ids, filter: filters } = checkOptions('params', params, DELETE_PARAMS_SPEC);
    if (ids === undefined && filters === undefined) throw new ValidationError('params', 'give ids or a filter');
    if (ids !== undefined) {
      for (const id of ids) {
        const item = await this.#engram.get(id);
        if (
          item !== undefined &&
          SCOPE_KEYS.every((key) => this.#scope[key] === undefined || item[key] === this.#scope[key])
        )
          await this.#engram.delete(id);
      }
    }
    if (filters !== undefined) await this.#engram.deleteAll({ ...this.#scope, filters });
  }
}

function toDocument(r: SearchResult): Document {
  return new Document({ pageContent: r.memory, metadata: { ...r.metadata }, id: r.id });
}
