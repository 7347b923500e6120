/**
 * Engine side of the three-tier memory system: key/value memories (upserted by
 * key within tier and scope), access bookkeeping, least-recently-used eviction
 * of short-term entries, and bounded reasoning traces.
 */
import { isLive, type Json, type MemoryRow, type Metadata, type Tier, type TraceRow } from '../../store/rows.js';
import type { RowChange } from '../../store/write.js';
import { MAX_KEY, MIN_KEY } from '../../store/write.js';
import { compileFilters } from '../../search/filters.js';
import type { Scope } from '../../store/scope.js';
import { newId } from '../../util/id.js';
import type { EngineStore } from '../engine-store.js';
import {
  addMemories,
  deleteMemories,
  matchingRows,
  memoryHash,
  updateMemory,
  type MemoryInput,
  type MemoryItem,
} from './memories.js';
import type { SemanticIndex } from '../vectors/semantic-index.js';

/** The text a key/value memory is searched by. */
export function keyedText(key: string, value: Json): string {
  return `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`;
}

/** The live row holding `key` in a tier and scope, if any. */
export async function findKeyed(
  core: EngineStore,
  tier: Tier,
  scope: Scope,
  key: string,
): Promise<MemoryRow | undefined> {
  const hash = memoryHash(tier, scope, '', key);
  const now = core.now();
  const rows = await core.db.memories.where('hash').equals(hash).toArray();
  return rows.find((r) => r.key === key && r.tier === tier && isLive(r, now));
}

/** Stores or replaces the value under `key` in a tier and scope. */
export async function rememberKeyed(
  core: EngineStore,
  semantic: SemanticIndex,
  input: { tier: Tier; scope: Scope; key: string; value: Json; metadata: Metadata; expiresAt?: number },
): Promise<MemoryItem> {
  const text = keyedText(input.key, input.value);
  const existing = await findKeyed(core, input.tier, input.scope, input.key);
  if (existing !== undefined) {
    return updateMemory(core, semantic, existing.id, {
      text,
      value: input.value,
      metadata: input.metadata,
      ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
    });
  }
  const [added] = await addMemories(core, semantic, [keyedInput(input, text)]);
  return added!.item;
}

/** The memory that stores `input`'s value under its key, as add() takes it. */
function keyedInput(input: Parameters<typeof rememberKeyed>[2], text: string): MemoryInput {
  return {
    text,
    tier: input.tier,
    scope: input.scope,
    key: input.key,
    value: input.value,
    metadata: input.metadata,
    ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
  };
}

/** Counts a read: access count and time, without history or change-log noise. */
export async function touch(core: EngineStore, row: MemoryRow): Promise<MemoryRow> {
  return core.write(async () => {
    const before = await core.db.memories.get(row.id);
    if (before === undefined) return { changes: [], result: row };
    const after: MemoryRow = { ...before, accessCount: before.accessCount + 1, lastAccessedAt: core.now() };
    const change: RowChange = { table: 'memories', op: 'update', id: row.id, before, after, quiet: true };
    return { changes: [change], result: after };
  });
}

/** Removes an expired row for good (a tombstone, so other devices learn of it too). */
export async function expire(core: EngineStore, semantic: SemanticIndex, row: MemoryRow): Promise<void> {
  await deleteMemories(core, semantic, [row.id]);
}

/** Keeps at most `max` short-term entries in a session, evicting the least recently used. */
export async function evictShortTerm(
  core: EngineStore,
  semantic: SemanticIndex,
  sessionId: string,
  max: number,
): Promise<number> {
  const rows = await matchingRows(core, compileFilters({ tier: 'short_term' }, { sessionId }));
  if (rows.length <= max) return 0;
  rows.sort((a, b) => (a.lastAccessedAt ?? a.updatedAt) - (b.lastAccessedAt ?? b.updatedAt) || (a.id < b.id ? -1 : 1));
  return deleteMemories(
    core,
    semantic,
    rows.slice(0, rows.length - max).map((r) => r.id),
  );
}

/** Appends a reasoning step and drops the oldest beyond `max`. */
export async function addTrace(core: EngineStore, trace: Omit<TraceRow, 'id' | 'at'>, max: number): Promise<TraceRow> {
  return core.write(async () => {
    const at = core.now();
    const row: TraceRow = { ...trace, id: newId(at), at };
    const existing = await core.db.traces
      .where('[sessionId+at]')
      .between([trace.sessionId, MIN_KEY], [trace.sessionId, MAX_KEY])
      .toArray();
    const drop = existing.slice(0, Math.max(0, existing.length + 1 - max));
    const changes: RowChange[] = [
      ...drop.map((before): RowChange => ({ table: 'traces', op: 'delete', id: before.id, before })),
      { table: 'traces', op: 'add', id: row.id, after: row },
    ];
    return { changes, result: row };
  });
}

/** A session's reasoning trace, oldest first. */
export async function listTraces(core: EngineStore, sessionId: string): Promise<TraceRow[]> {
  return core.db.traces.where('[sessionId+at]').between([sessionId, MIN_KEY], [sessionId, MAX_KEY]).toArray();
}
