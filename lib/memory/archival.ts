/**
 * Archival memory (MemGPT): an agent's long-term passages, inserted one at a
 * time and searched by meaning, paged, in MemGPT's result shape.
 */
import type { Metadata } from '../store/rows.js';
import { checkOptions, definedOnly, id, int, optional, withDefault, type OptionsSpec } from '../util/options.js';
import type { LongTermMemory } from './long-term.js';

/** One archival search result. */
export interface ArchivalResult {
  id: string;
  /** ISO 8601 time the passage was stored. */
  timestamp: string;
  content: string;
}

/** Results 1000 deep at most are ranked for paging. */
const MAX_RANKED = 1000;

/** Options of {@link Engram.archival}. */
export interface ArchivalOptions {
  /**
   * The user whose passages these are: inserts carry the user, searches see only
   * that user's passages of the agent. Without it, inserts belong to no user and
   * searches see every passage of the agent.
   * @example 'ana'
   */
  userId?: string;
}

/** Paging of {@link Archival.search}. */
export interface ArchivalSearchOptions {
  /** Results per page (at most 1000). @default 10 */
  count?: number;
  /** Results to skip (below 1000). @default 0 */
  start?: number;
}

/** The checks of {@link ArchivalOptions}. */
const ARCHIVAL_OPTIONS_SPEC = { userId: optional(id) } satisfies OptionsSpec<ArchivalOptions>;

/** The checks of {@link ArchivalSearchOptions}. */
const ARCHIVAL_SEARCH_OPTIONS_SPEC = {
  count: withDefault(int(1, MAX_RANKED), 10),
  start: withDefault(int(0, MAX_RANKED - 1), 0),
} satisfies OptionsSpec<ArchivalSearchOptions>;

/** Checks the options of an archival face at the door. */
export function parseArchivalOptions(options: unknown): { userId?: string } {
  return definedOnly(checkOptions('options', options, ARCHIVAL_OPTIONS_SPEC));
}

/**
 * An agent's archival memory, or one user's part of it.
 * @example
 * const archive = engram.archival('helper', { userId: 'ana' })
 * await archive.insert('The user’s dog is called Pixel.')
 * const { results, total } = await archive.search('pets', { count: 5 })
 */
export class Archival {
  readonly agentId: string;
  readonly userId: string | undefined;
  readonly #memory: LongTermMemory;
  readonly #scope: { agentId: string; userId?: string };

  constructor(memory: LongTermMemory, agentId: string, options: { userId?: string } = {}) {
    this.#memory = memory;
    this.agentId = agentId;
    this.userId = options.userId;
    this.#scope = options.userId === undefined ? { agentId } : { agentId, userId: options.userId };
  }

  /** Stores a passage; returns its id (the standing one when the same text is already archived). */
  async insert(text: string, metadata?: Metadata): Promise<string> {
    const { results } = await this.#memory.add(text, {
      ...this.#scope,
      ...(metadata === undefined ? {} : { metadata }),
    });
    return results[0]!.id;
  }

  /** Passages ranked by relevance to `query`; `total` is how many were ranked. */
  async search(
    query: string,
    options: ArchivalSearchOptions = {},
  ): Promise<{ results: ArchivalResult[]; total: number }> {
    const { count, start } = checkOptions('options', options, ARCHIVAL_SEARCH_OPTIONS_SPEC);
    const { total: stored } = await this.#memory.getAll({ ...this.#scope, limit: 1 });
    const { results } = await this.#memory.search(query, {
      ...this.#scope,
      limit: Math.min(MAX_RANKED, Math.max(stored, 1)),
    });
    return {
      total: results.length,
      results: results
        .slice(start, start + count)
        .map((r) => ({ id: r.id, timestamp: new Date(r.createdAt).toISOString(), content: r.memory })),
    };
  }
}
