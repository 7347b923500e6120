/**
 * PersistentMemory (MassGen on mem0): developer-controlled `record` / `retrieve`
 * and the agent tools `saveToMemory` / `recallFromMemory`, scoped to an agent,
 * user and run.
 */
import { ValidationError } from '../errors.js';
import { MAX_FACTS_PER_SAVE, MAX_KEYWORDS_PER_RECALL } from './persistent-limits.js';
import { isPlainObject, requireInt } from '../util/validate.js';
import { checkOptions, finiteNumber, int, optional, withDefault, type OptionsSpec } from '../util/options.js';
import type { ChatMessage, LongTermMemory, SearchResult } from './long-term.js';
import type { MemoryScope } from '../store/scope.js';

/** Options of {@link PersistentMemory.retrieve}. */
export interface RetrieveOptions {
  /** Most memories in the context. @default 5 */
  limit?: number;
  /**
   * Minimum relevance (the search score, in [0, 1]) for a memory to count; where the model's
   * fusion is relative to the query, a memory also needs a keyword match or the model's
   * `minSimilarity` (hasEvidence, lib/search/retrieval-profile.ts).
   * @default the embedding model's `minRelevance` (lib/search/retrieval-profile.ts, measured in bench/eval)
   */
  minSimilarity?: number;
}

/** The checks of {@link RetrieveOptions} (no minimum given: the model's, read when needed). */
const RETRIEVE_OPTIONS_SPEC = {
  limit: withDefault(int(1, 100), 5),
  minSimilarity: optional(finiteNumber),
} satisfies OptionsSpec<RetrieveOptions>;

/** What the agent tools answer. */
export interface ToolAnswer {
  success: boolean;
  message: string;
  memories?: string[];
}

export { MAX_FACTS_PER_SAVE, MAX_KEYWORDS_PER_RECALL } from './persistent-limits.js';

/**
 * Memory an agent keeps across runs.
 * @example
 * const memory = engram.persistent({ agentId: 'helper', userId: 'ana' })
 * await memory.record([{ role: 'user', content: 'I am vegetarian' }])
 * const context = await memory.retrieve('what should I cook tonight?')
 */
export class PersistentMemory {
  readonly scope: MemoryScope;
  readonly #memory: LongTermMemory;

  constructor(memory: LongTermMemory, scope: MemoryScope) {
    this.#memory = memory;
    this.scope = scope;
  }

  /** Stores the turns of a conversation (system messages are skipped). */
  async record(messages: readonly ChatMessage[]): Promise<number> {
    const { results } = await this.#memory.add(messages, { ...this.scope, metadata: { source: 'record' } });
    return results.filter((r) => r.event === 'ADD').length;
  }

  /**
   * A context block for a system prompt with the memories relevant to `query`
   * (or to the user messages among `messages`); '' when nothing is relevant.
   */
  async retrieve(query: string | readonly ChatMessage[], options: RetrieveOptions = {}): Promise<string> {
    const { limit, minSimilarity } = checkOptions('options', options, RETRIEVE_OPTIONS_SPEC);
    const threshold = minSimilarity ?? (await this.#memory.minRelevance());
    const text = typeof query === 'string' ? query : queryOf(query);
    if (text.trim() === '') return '';
    // Hybrid search's threshold also asks for evidence where the model's fusion is per query (hasEvidence).
    const { results } = await this.#memory.search(text, { ...this.scope, limit, threshold });
    return formatContext(results);
  }

  /** Agent tool: saves each content string as a memory. */
  async saveToMemory(args: { thinking?: string; content: string[] }): Promise<ToolAnswer> {
    if (!isPlainObject(args) || !Array.isArray(args.content) || args.content.length === 0) {
      throw new ValidationError('content', 'must be a non-empty array of strings');
    }
    if (args.content.length > MAX_FACTS_PER_SAVE) {
      throw new ValidationError(
        'content',
        `holds ${args.content.length} facts, more than the ${MAX_FACTS_PER_SAVE} one call may save; save the most important ones, or split them over several calls`,
      );
    }
    const { results } = await this.#memory.add(
      args.content.map((content) => ({ role: 'assistant', content })),
      { ...this.scope, metadata: { source: 'agent' } },
    );
    const saved = results.filter((r) => r.event === 'ADD').length;
    return {
      success: true,
      message: `Saved ${saved} new memor${saved === 1 ? 'y' : 'ies'} (${results.length - saved} already known).`,
    };
  }

  /** Agent tool: recalls memories for each keyword, most relevant first, without repeats. */
  async recallFromMemory(args: { keywords: string[]; limit?: number }): Promise<ToolAnswer> {
    const limit = checkRecallArgs(args);
    const seen = new Set<string>();
    const memories: string[] = [];
    for (const keyword of args.keywords) {
      const { results } = await this.#memory.search(keyword, { ...this.scope, limit });
      for (const r of results) {
        if (seen.has(r.id)) continue;
        seen.add(r.id);
        memories.push(r.memory);
      }
    }
    return {
      success: true,
      message:
        memories.length === 0
          ? 'No memories found.'
          : `Found ${memories.length} memor${memories.length === 1 ? 'y' : 'ies'}.`,
      memories,
    };
  }
}

/** Checks recallFromMemory()'s keywords (a non-empty array, within the cap); returns the limit per keyword. */
function checkRecallArgs(args: { keywords: string[]; limit?: number }): number {
  if (!isPlainObject(args) || !Array.isArray(args.keywords) || args.keywords.length === 0) {
    throw new ValidationError('keywords', 'must be a non-empty array of strings');
  }
  if (args.keywords.length > MAX_KEYWORDS_PER_RECALL) {
    throw new ValidationError(
      'keywords',
      `holds ${args.keywords.length} keywords, more than the ${MAX_KEYWORDS_PER_RECALL} one call may search for`,
    );
  }
  return args.limit === undefined ? 5 : requireInt('limit', args.limit, 1, 100);
}

function queryOf(input: readonly ChatMessage[]): string {
  if (!Array.isArray(input)) throw new ValidationError('query', 'must be a string or an array of messages');
  const messages: readonly ChatMessage[] = input;
  const users = messages.filter((m) => m.role === 'user').map((m) => m.content);
  return (users.length > 0 ? users.slice(-2) : messages.slice(-1).map((m) => m.content)).join('\n');
}

/** The context block retrieve() returns. */
export function formatContext(results: readonly SearchResult[]): string {
  if (results.length === 0) return '';
  return ['Relevant memories:', ...results.map((r) => `- ${r.memory}`)].join('\n');
}
