/**
 * Archival memory (MemGPT): an agent's long-term passages, inserted one at a
 * time and searched by meaning, paged, in MemGPT's result shape.
 */
import type { Metadata } from '../store/rows.js';
import { optionalId, requireInt, requireOptions } from '../util/validate.js';
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

/** Checks the options of an archival face at the door. */
export function parseArchivalOptions(options: unknown): { userId?: string } {
  requireOptions('options', options, ['userId']);
  const userId = optionalId('options.userId', (options as ArchivalOptions).userId);
  return userId === undefined ? {} : { userId };
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
    options: { count?: number; start?: number } = {},
  ): Promise<{ results: ArchivalResult[]; total: number }> {
    requireOptions('options', options, ['count', 'start']);
    const count = options.count === undefined ? 10 : requireInt('options.count', options.count, 1, MAX_RANKED);
    const start = options.start === undefined ? 0 : requireInt('options.start', options.start, 0, MAX_RANKED - 1);
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
