/**
 * Recall memory (MemGPT): paged search over every stored message, by text
 * (BM25) and by date, with MemGPT's result shape.
 */
import { ValidationError } from '../errors.js';
import type { EngineStore } from '../engine/engine-store.js';
import {
  searchMessagesByDate,
  searchMessagesByText,
  type MessageFilter,
  type MessagePage,
} from '../engine/conversation/message-search.js';
import { ROLES, type Role } from '../store/rows.js';
import { checkOptions, definedOnly, id, int, oneOf, optional, withDefault, type OptionsSpec } from '../util/options.js';
import { requireTime } from '../util/validate.js';

/** Paging and filters of a recall search. */
export interface RecallSearchOptions {
  /** Results per page. @default 10 */
  count?: number;
  /** Results to skip. @default 0 */
  start?: number;
  threadId?: string;
  agentId?: string;
  userId?: string;
  role?: Role;
}

/** One recall result. */
export interface RecallResult {
  id: string;
  /** ISO 8601 time the message was created. */
  timestamp: string;
  role: Role;
  content: string;
  threadId: string;
}

/** A page of results and the number that matched in all. */
export interface RecallPage {
  results: RecallResult[];
  total: number;
}

/** The checks of {@link RecallSearchOptions}. */
const RECALL_SEARCH_OPTIONS_SPEC = {
  count: withDefault(int(1, 10_000), 10),
  start: withDefault(int(0), 0),
  threadId: optional(id),
  agentId: optional(id),
  userId: optional(id),
  role: optional(oneOf(ROLES)),
} satisfies OptionsSpec<RecallSearchOptions>;

function parseOptions(options: unknown): { filter: MessageFilter; start: number; count: number } {
  const { count, start, ...filter } = checkOptions('options', options, RECALL_SEARCH_OPTIONS_SPEC);
  return { filter: definedOnly(filter), start, count };
}

function toPage(page: MessagePage): RecallPage {
  return {
    total: page.total,
    results: page.rows.map((r) => ({
      id: r.id,
      timestamp: new Date(r.createdAt).toISOString(),
      role: r.role,
      content: r.content,
      threadId: r.threadId,
    })),
  };
}

/**
 * Search over the whole conversation log.
 * @example
 * const { results, total } = await engram.recall.textSearch('dentist appointment', { count: 5 })
 */
export class Recall {
  readonly #core: EngineStore;

  constructor(core: EngineStore) {
    this.#core = core;
  }

  /** Messages ranked by BM25 relevance (case-insensitive, punctuation ignored). */
  async textSearch(query: string, options: RecallSearchOptions = {}): Promise<RecallPage> {
    this.#core.assertOpen();
    if (typeof query !== 'string') throw new ValidationError('query', 'must be a string');
    const { filter, start, count } = parseOptions(options);
    return toPage(await searchMessagesByText(this.#core, query, filter, start, count));
  }

  /** Messages created between `from` and `to` inclusive, oldest first. */
  async dateSearch(
    from: Date | string | number,
    to: Date | string | number,
    options: RecallSearchOptions = {},
  ): Promise<RecallPage> {
    this.#core.assertOpen();
    const fromMs = requireTime('from', from);
    const toMs = requireTime('to', to);
    const { filter, start, count } = parseOptions(options);
    return toPage(await searchMessagesByDate(this.#core, fromMs, toMs, filter, start, count));
  }
}
