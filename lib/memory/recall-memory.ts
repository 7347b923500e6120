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
import { optionalId, requireInt, requireOneOf, requireOptions, requireTime } from '../util/validate.js';

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

const OPTION_KEYS = ['count', 'start', 'threadId', 'agentId', 'userId', 'role'] as const;

function parseOptions(options: unknown): { filter: MessageFilter; start: number; count: number } {
  requireOptions('options', options, OPTION_KEYS);
  const count = options['count'] === undefined ? 10 : requireInt('options.count', options['count'], 1, 10_000);
  const start = options['start'] === undefined ? 0 : requireInt('options.start', options['start'], 0);
  const filter: MessageFilter = {};
  const threadId = optionalId('options.threadId', options['threadId']);
  const agentId = optionalId('options.agentId', options['agentId']);
  const userId = optionalId('options.userId', options['userId']);
  if (threadId !== undefined) filter.threadId = threadId;
  if (agentId !== undefined) filter.agentId = agentId;
  if (userId !== undefined) filter.userId = userId;
  if (options['role'] !== undefined) filter.role = requireOneOf('options.role', options['role'], ROLES);
  return { filter, start, count };
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
