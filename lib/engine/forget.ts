/**
 * Forgetting a whole scope (the right to be forgotten): every memory, message,
 * block and trace of a user, agent, run or project, with their history,
 * keyword terms and vectors, goes in one transaction through the one write
 * path. A memory leaves a text-free tombstone so sync can carry the deletion
 * to other devices; nothing else of the scope stays. The index snapshots in
 * `meta` may hold what was forgotten, so they are dropped and the store
 * generation is bumped: every instance rebuilds its indexes from the store.
 */
import { bumpGeneration } from '../store/generation.js';
import { deleteSnapshot } from '../store/snapshot-chunks.js';
import { textFreeTombstone, tombstoneHoldsText } from '../store/forgetting.js';
import { MEMORY_CORPUS, MESSAGE_CORPUS } from '../store/keyword-terms.js';
import type { BlockRow, MemoryRow, MessageRow, TableName, TraceRow } from '../store/rows.js';
import type { EngramDb } from '../store/schema.js';
import { type RowChange } from '../store/write.js';
import { blockKey } from '../store/block-key.js';
import type { ForgetScope } from '../store/scope.js';
import type { EngineStore } from './engine-store.js';

/** What forget() removed, per kind of record. */
export interface ForgetResult {
  /** Memories removed (live ones; each leaves a text-free tombstone for sync). */
  memories: number;
  /** Tombstones of earlier deletions in the scope, made text-free where they were not. */
  tombstones: number;
  messages: number;
  blocks: number;
  traces: number;
  /** History entries removed. */
  history: number;
  /** Stored vectors removed. */
  vectors: number;
  /** Keyword terms rows removed. */
  terms: number;
}

/** `meta` keys of index snapshots that may hold forgotten terms or vectors. */
const SNAPSHOT_KEYS = ['indexSnapshot', 'keywordSnapshot'];

/** Options of {@link forgetScope}. */
export interface ForgetOptions {
  /** Further `meta` keys that describe a forgotten record (sync's remote marks), removed too. */
  metaKeysOf?: (records: readonly { table: TableName; id: string }[]) => string[];
}

function inScope(row: Partial<Record<keyof ForgetScope, unknown>>, scope: ForgetScope): boolean {
  return (Object.keys(scope) as (keyof ForgetScope)[]).every((k) => row[k] === scope[k]);
}

/** Removes everything of `scope` in one transaction; returns what was removed. */
export async function forgetScope(
  core: EngineStore,
  scope: ForgetScope,
  options: ForgetOptions = {},
): Promise<ForgetResult> {
  const { db } = core;
  return core.write(async () => {
    const rows = await scopeRows(db, scope);
    const memories = memoryRemovals(rows.memories, core.now(), core.settings.deviceId);
    const changes = [...memories.changes, ...otherRemovals(rows)];
    const records = forgottenRecords(rows);
    const history = await deleteHistory(db, records);
    const { vectors, terms } = await indexedRows(db, rows);
    await dropStoreWide(db, options.metaKeysOf?.(records) ?? []);
    const result = forgetResult(rows, memories, { history, vectors, terms });
    // The write path removes the rows, vectors and terms and logs each removal; history of the scope is gone already.
    return { changes, result, withoutHistory: true };
  });
}

/** Deletes the `meta` keys of forgotten records and every cache snapshot, and bumps the generation (in the forget's transaction). */
async function dropStoreWide(db: EngramDb, metaKeys: string[]): Promise<void> {
  await db.meta.bulkDelete(metaKeys);
  // With their chunks and position rows.
  for (const key of SNAPSHOT_KEYS) await deleteSnapshot(db, key);
  await bumpGeneration(db);
}

/** What a forget removed, counted by kind. */
function forgetResult(
  rows: ScopeRows,
  memories: { live: number; tombstones: number },
  removed: { history: number; vectors: number; terms: number },
): ForgetResult {
  return {
    memories: memories.live,
    tombstones: memories.tombstones,
    messages: rows.messages.length,
    blocks: rows.blocks.length,
    traces: rows.traces.length,
    ...removed,
  };
}

/** The rows of a scope, by kind. */
interface ScopeRows {
  memories: MemoryRow[];
  messages: MessageRow[];
  blocks: BlockRow[];
  traces: TraceRow[];
}

/** Every row of `scope`: memories through the index of one given field; messages carry agent and user only, blocks agent and user, traces project only. */
async function scopeRows(db: EngramDb, scope: ForgetScope): Promise<ScopeRows> {
  const field = (['userId', 'agentId', 'runId', 'projectId'] as const).find((k) => scope[k] !== undefined)!;
  const memories = (await db.memories.where(field).equals(scope[field]!).toArray()).filter((m) => inScope(m, scope));
  const agentOrUser = scope.runId === undefined && scope.projectId === undefined;
  const projectOnly = scope.userId === undefined && scope.agentId === undefined && scope.runId === undefined;
  return {
    memories,
    messages: agentOrUser ? await db.messages.filter((m) => inScope(m, scope)).toArray() : [],
    blocks: agentOrUser ? await db.blocks.filter((b) => inScope(b, scope)).toArray() : [],
    traces: projectOnly ? await db.traces.filter((t) => inScope(t, scope)).toArray() : [],
  };
}

/**
 * A live memory becomes a text-free tombstone (a deletion, carried by sync); an
 * earlier tombstone that still holds text is made text-free, quietly.
 */
function memoryRemovals(
  memories: readonly MemoryRow[],
  now: number,
  deviceId: string,
): { changes: RowChange[]; live: number; tombstones: number } {
  const changes: RowChange[] = [];
  let live = 0;
  let tombstones = 0;
  for (const before of memories) {
    if (before.deletedAt === undefined) {
      live++;
      changes.push(deletionOf(before, now, deviceId));
    } else if (tombstoneHoldsText(before)) {
      tombstones++;
      changes.push(textRemovalOf(before));
    }
  }
  return { changes, live, tombstones };
}

/** The deletion of live memory `before` by this device at `now`: marked deleted, its version bumped. */
function deletionOf(before: MemoryRow, now: number, deviceId: string): RowChange {
  const after: MemoryRow = {
    ...before,
    deletedAt: now,
    updatedAt: Math.max(now, before.updatedAt),
    version: before.version + 1,
    origin: deviceId,
  };
  return { table: 'memories', op: 'delete', id: before.id, before, after };
}

/** The quiet update that makes tombstone `before`, which still holds text, text-free. */
function textRemovalOf(before: MemoryRow): RowChange {
  return { table: 'memories', op: 'update', id: before.id, before, after: textFreeTombstone(before), quiet: true };
}

/** Messages, blocks and traces are deleted outright. */
function otherRemovals({ messages, blocks, traces }: ScopeRows): RowChange[] {
  return [
    ...messages.map((before): RowChange => ({ table: 'messages', op: 'delete', id: before.id, before })),
    ...blocks.map((before): RowChange => ({
      table: 'blocks',
      op: 'delete',
      id: blockKey(before.agentId, before.label, before.userId),
      before,
    })),
    ...traces.map((before): RowChange => ({ table: 'traces', op: 'delete', id: before.id, before })),
  ];
}

/** Every record forgotten (tombstones included), by table and id. */
function forgottenRecords({ memories, messages, blocks, traces }: ScopeRows): { table: TableName; id: string }[] {
  return [
    ...memories.map((m) => ({ table: 'memories' as const, id: m.id })),
    ...messages.map((m) => ({ table: 'messages' as const, id: m.id })),
    ...blocks.map((b) => ({ table: 'blocks' as const, id: blockKey(b.agentId, b.label, b.userId) })),
    ...traces.map((t) => ({ table: 'traces' as const, id: t.id })),
  ];
}

/** Deletes the history of the records; returns how many entries. */
async function deleteHistory(db: EngramDb, records: readonly { id: string }[]): Promise<number> {
  const ids = [...new Set(records.map((r) => r.id))];
  return ids.length === 0 ? 0 : db.history.where('recordId').anyOf(ids).delete();
}

/** How many stored vectors and keyword terms rows the write path removes with the rows (live memories and messages). */
async function indexedRows(db: EngramDb, rows: ScopeRows): Promise<{ vectors: number; terms: number }> {
  const liveIds = rows.memories.filter((m) => m.deletedAt === undefined).map((m) => m.id);
  const vectors = (await db.vectors.bulkGet(liveIds)).filter((v) => v !== undefined).length;
  const termKeys: [string, string][] = [
    ...liveIds.map((id): [string, string] => [MEMORY_CORPUS, id]),
    ...rows.messages.map((m): [string, string] => [MESSAGE_CORPUS, m.id]),
  ];
  const terms = (await db.terms.bulkGet(termKeys)).filter((t) => t !== undefined).length;
  return { vectors, terms };
}
