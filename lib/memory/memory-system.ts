/**
 * The three-tier MemorySystem: short-term (per session, TTL, LRU, reasoning
 * traces), project (per project) and long-term (vector-indexed, scoped
 * `project:<id>` or global, the tier sync carries).
 */
import { ValidationError } from '../errors.js';
import type { EngineStore } from '../engine/engine-store.js';
import { deleteMatching, matchingRows, toItem, type MemoryItem } from '../engine/memories/memories.js';
import { searchMemories, type ScoredMemory } from '../engine/memories/memory-search.js';
import type { SemanticIndex } from '../engine/vectors/semantic-index.js';
import {
  addTrace,
  evictShortTerm,
  expire,
  findKeyed,
  listTraces,
  rememberKeyed,
  touch,
} from '../engine/memories/keyed-memories.js';
import { compileFilters } from '../search/filters.js';
import type { Scope } from '../store/scope.js';
import { TIERS, type Json, type Metadata, type Tier, type TraceRow } from '../store/rows.js';
import { requireId, requireJson, requireText } from '../util/validate.js';
import {
  checkOptions,
  int,
  listOf,
  metadata,
  oneOf,
  optional,
  withDefault,
  type OptionsSpec,
} from '../util/options.js';

/** Settings of a memory system. */
export interface MemorySystemOptions {
  /** Session of the short-term tier. @default a new id */
  sessionId?: string;
  /** Project of the project tier and of project-scoped long-term memories. */
  projectId?: string;
  /** Most short-term entries (and trace steps) kept per session. @default 100 */
  maxEntries?: number;
  /** Life of a short-term entry in milliseconds. @default 3_600_000 (one hour) */
  ttlMs?: number;
}

/** Options of {@link MemorySystem.remember}. */
export interface RememberOptions {
  /** The tier to store in. @default 'short_term' */
  tier?: Tier;
  metadata?: Metadata;
  /** Life of the entry in milliseconds. @default the system's `ttlMs` in the short-term tier, no end in the others */
  ttlMs?: number;
}

/** Options of {@link MemorySystem.recall}. */
export interface SystemRecallOptions {
  /** The one tier to look in. @default short-term, then project, then long-term */
  tier?: Tier;
}

/** Options of {@link MemorySystem.search}. */
export interface TierSearchOptions {
  /** The tiers to search, each in its own scope. @default every tier */
  tiers?: Tier[];
  /** Most hits. @default 10 */
  limit?: number;
}

/** Options of {@link MemorySystem.getContext}. */
export interface SystemContextOptions {
  /** Most entries of each tier and trace steps. @default 10 */
  maxEntries?: number;
}

/** One reasoning step. */
export interface TraceStep {
  step: string;
  thinking: string;
  evidence?: Json;
  confidence?: number;
  at: number;
}

/** What getContext() returns. */
export interface SystemContext {
  sessionId: string;
  projectId?: string;
  recentShortTerm: MemoryItem[];
  recentProject: MemoryItem[];
  reasoningTrace: TraceStep[];
}

/** A search hit across tiers. */
export interface TierHit extends MemoryItem {
  score: number;
}

const RECALL_ORDER: readonly Tier[] = ['short_term', 'project', 'long_term'];

/** The checks of {@link RememberOptions}; metadata is held to the store's `maxContentBytes`. */
function rememberOptionsSpec(maxContentBytes: number) {
  return {
    tier: withDefault(oneOf(TIERS), 'short_term'),
    metadata: metadata(maxContentBytes),
    ttlMs: optional(int(1)),
  } satisfies OptionsSpec<RememberOptions>;
}

/** The checks of {@link SystemRecallOptions}. */
const RECALL_OPTIONS_SPEC = { tier: optional(oneOf(TIERS)) } satisfies OptionsSpec<SystemRecallOptions>;

/** The checks of {@link TierSearchOptions}. */
const SEARCH_OPTIONS_SPEC = {
  tiers: withDefault(listOf(oneOf(TIERS)), [...TIERS]),
  limit: withDefault(int(1, 1000), 10),
} satisfies OptionsSpec<TierSearchOptions>;

/** The checks of {@link SystemContextOptions}. */
const CONTEXT_OPTIONS_SPEC = {
  maxEntries: withDefault(int(0, 10_000), 10),
} satisfies OptionsSpec<SystemContextOptions>;

function toStep(row: TraceRow): TraceStep {
  const step: TraceStep = { step: row.step, thinking: row.thinking, at: row.at };
  if (row.evidence !== undefined) step.evidence = row.evidence;
  if (row.confidence !== undefined) step.confidence = row.confidence;
  return step;
}

/**
 * Memory for one session within one project.
 * @example
 * const mem = engram.system({ sessionId: 's1', projectId: 'apollo' })
 * await mem.remember('goal', 'ship the beta', { tier: 'project' })
 * await mem.recall('goal') // 'ship the beta'
 */
export class MemorySystem {
  readonly sessionId: string;
  readonly projectId: string | undefined;
  readonly maxEntries: number;
  readonly ttlMs: number;
  readonly #core: EngineStore;
  readonly #semantic: SemanticIndex;

  constructor(
    core: EngineStore,
    semantic: SemanticIndex,
    options: Required<Pick<MemorySystemOptions, 'sessionId' | 'maxEntries' | 'ttlMs'>> & { projectId?: string },
  ) {
    this.#core = core;
    this.#semantic = semantic;
    this.sessionId = options.sessionId;
    this.projectId = options.projectId;
    this.maxEntries = options.maxEntries;
    this.ttlMs = options.ttlMs;
  }

  /** The scope each tier's entries live in. */
  scopeOf(tier: Tier): Scope {
    if (tier === 'short_term') return { sessionId: this.sessionId };
    if (tier === 'project') return { projectId: this.#requireProject() };
    return this.projectId === undefined ? {} : { projectId: this.projectId };
  }

  /** Stores `value` under `key` in a tier (short-term by default), replacing what the key held. */
  async remember(key: string, value: Json, options: RememberOptions = {}): Promise<MemoryItem> {
    this.#core.assertOpen();
    requireId('key', key);
    requireJson('value', value);
    if (value === null || value === '') throw new ValidationError('value', 'must not be empty');
    const maxBytes = this.#core.settings.maxContentBytes;
    const { tier, metadata, ttlMs: ttl } = checkOptions('options', options, rememberOptionsSpec(maxBytes));
    requireText('value', typeof value === 'string' ? value : JSON.stringify(value), maxBytes);
    const expiresAt = this.#expiresAt(tier, ttl);
    const item = await rememberKeyed(this.#core, this.#semantic, {
      tier,
      scope: this.scopeOf(tier),
      key,
      value,
      metadata,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    });
    if (tier === 'short_term') await evictShortTerm(this.#core, this.#semantic, this.sessionId, this.maxEntries);
    return item;
  }

  /** When an entry remembered now in `tier` expires: short-term ones always (after `ttl` or the system's), others only with a `ttl`. */
  #expiresAt(tier: Tier, ttl: number | undefined): number | undefined {
    return tier === 'short_term'
      ? this.#core.now() + (ttl ?? this.ttlMs)
      : ttl === undefined
        ? undefined
        : this.#core.now() + ttl;
  }

  /** The value under `key`: in `tier`, or the first of short-term, project, long-term. Counts the access. */
  async recall(key: string, options: SystemRecallOptions = {}): Promise<Json | undefined> {
    this.#core.assertOpen();
    requireId('key', key);
    const { tier: only } = checkOptions('options', options, RECALL_OPTIONS_SPEC);
    const tiers = only === undefined ? RECALL_ORDER : [only];
    for (const tier of tiers) {
      if (tier === 'project' && this.projectId === undefined) continue;
      const scope = this.scopeOf(tier);
      const row = await findKeyed(this.#core, tier, scope, key);
      if (row !== undefined) {
        await touch(this.#core, row);
        return row.value;
      }
      await this.#expireKey(tier, scope, key);
    }
    return undefined;
  }

  /** Records one reasoning step of this session (bounded like the entries). */
  async addTrace(step: string, thinking: string, evidence?: Json, confidence?: number): Promise<TraceStep> {
    this.#core.assertOpen();
    requireText('step', step, this.#core.settings.maxContentBytes);
    if (typeof thinking !== 'string') throw new ValidationError('thinking', 'must be a string');
    if (evidence !== undefined) requireJson('evidence', evidence);
    if (confidence !== undefined && (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1))) {
      throw new ValidationError('confidence', 'must be a number between 0 and 1');
    }
    const row = await addTrace(
      this.#core,
      {
        sessionId: this.sessionId,
        step,
        thinking,
        ...(this.projectId === undefined ? {} : { projectId: this.projectId }),
        ...(evidence === undefined ? {} : { evidence }),
        ...(confidence === undefined ? {} : { confidence }),
      },
      this.maxEntries,
    );
    return toStep(row);
  }

  /** This session's reasoning trace, oldest first. */
  async getTrace(): Promise<TraceStep[]> {
    this.#core.assertOpen();
    return (await listTraces(this.#core, this.sessionId)).map(toStep);
  }

  /** Every project entry, newest first. */
  async retrieveAllProject(): Promise<MemoryItem[]> {
    this.#core.assertOpen();
    const rows = await matchingRows(this.#core, compileFilters({ tier: 'project' }, this.scopeOf('project')));
    return rows.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1)).map(toItem);
  }

  /** Project entries by keyword and meaning. */
  async searchProject(query: string, options: Omit<TierSearchOptions, 'tiers'> = {}): Promise<TierHit[]> {
    this.#core.assertOpen();
    return this.search(query, { tiers: ['project'], ...options });
  }

  /** Deletes every project entry; returns how many. */
  async deleteProject(): Promise<number> {
    this.#core.assertOpen();
    return deleteMatching(this.#core, this.#semantic, compileFilters({ tier: 'project' }, this.scopeOf('project')));
  }

  /** Recent entries and the trace, for a prompt. */
  async getContext(options: SystemContextOptions = {}): Promise<SystemContext> {
    this.#core.assertOpen();
    const { maxEntries: max } = checkOptions('options', options, CONTEXT_OPTIONS_SPEC);
    const short = await matchingRows(this.#core, compileFilters({ tier: 'short_term' }, this.scopeOf('short_term')));
    short.sort(
      (a, b) => (b.lastAccessedAt ?? b.updatedAt) - (a.lastAccessedAt ?? a.updatedAt) || (a.id < b.id ? 1 : -1),
    );
    const project = this.projectId === undefined ? [] : await this.retrieveAllProject();
    const trace = await this.getTrace();
    return {
      sessionId: this.sessionId,
      ...(this.projectId === undefined ? {} : { projectId: this.projectId }),
      recentShortTerm: short.slice(0, max).map(toItem),
      recentProject: project.slice(0, max),
      reasoningTrace: max === 0 ? [] : trace.slice(-max),
    };
  }

  /** Searches the given tiers (all by default), each in its own scope, best first. */
  async search(query: string, options: TierSearchOptions = {}): Promise<TierHit[]> {
    this.#core.assertOpen();
    const text = requireText('query', query, this.#core.settings.maxContentBytes);
    const { tiers, limit } = checkOptions('options', options, SEARCH_OPTIONS_SPEC);
    const hits: ScoredMemory[] = [];
    for (const tier of tiers) {
      if (tier === 'project' && this.projectId === undefined) continue;
      hits.push(
        ...(await searchMemories(this.#core, this.#semantic, text, {
          filter: compileFilters({ tier }, this.scopeOf(tier)),
          limit,
          mode: 'hybrid',
        })),
      );
    }
    hits.sort((a, b) => b.score - a.score);
    return hits.slice(0, limit).map((h) => ({ ...toItem(h.row), score: h.score }));
  }

  #requireProject(): string {
    if (this.projectId === undefined)
      throw new ValidationError('projectId', 'this memory system has no project; open it with system({ projectId })');
    return this.projectId;
  }

  async #expireKey(tier: Tier, scope: Scope, key: string): Promise<void> {
    const now = this.#core.now();
    const rows = await matchingRows(this.#core, {
      ...compileFilters({ tier }, scope),
      matches: (r) => r.key === key && r.deletedAt === undefined && r.expiresAt !== undefined && r.expiresAt <= now,
    });
    for (const row of rows) await expire(this.#core, this.#semantic, row);
  }
}
