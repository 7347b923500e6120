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
import type { MemoryRow, TableName } from '../store/rows.js';
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
  const field = (['userId', 'agentId', 'runId', 'projectId'] as const).find((k) => scope[k] !== undefined)!;
  return core.write(async () => {
    const memories = (await db.memories.where(field).equals(scope[field]!).toArray()).filter((m) => inScope(m, scope));
    // Messages carry agent and user only; blocks agent and user; traces project only.
    const messages =
      scope.runId !== undefined || scope.projectId !== undefined
        ? []
        : await db.messages.filter((m) => inScope(m, scope)).toArray();
    const blocks =
      scope.runId !== undefined || scope.projectId !== undefined
        ? []
        : await db.blocks.filter((b) => inScope(b, scope)).toArray();
    const traces =
      scope.userId !== undefined || scope.agentId !== undefined || scope.runId !== undefined
        ? []
        : await db.traces.filter((t) => inScope(t, scope)).toArray();
    const now = core.now();
    const changes: RowChange[] = [];
    let live = 0;
    let tombstones = 0;
    for (const before of memories) {
      if (before.deletedAt === undefined) {
        live++;
        const after: MemoryRow = {
          ...before,
          deletedAt: now,
          updatedAt: Math.max(now, before.updatedAt),
          version: before.version + 1,
          origin: core.settings.deviceId,
        };
        changes.push({ table: 'memories', op: 'delete', id: before.id, before, after });
      } else if (tombstoneHoldsText(before)) {
        tombstones++;
        changes.push({
          table: 'memories',
          op: 'update',
          id: before.id,
          before,
          after: textFreeTombstone(before),
          quiet: true,
        });
      }
    }
    for (const before of messages) changes.push({ table: 'messages', op: 'delete', id: before.id, before });
    for (const before of blocks)
      changes.push({
        table: 'blocks',
        op: 'delete',
        id: blockKey(before.agentId, before.label, before.userId),
        before,
      });
    for (const before of traces) changes.push({ table: 'traces', op: 'delete', id: before.id, before });

    const records = [
      ...memories.map((m) => ({ table: 'memories' as const, id: m.id })),
      ...messages.map((m) => ({ table: 'messages' as const, id: m.id })),
      ...changes.filter((c) => c.table === 'blocks' || c.table === 'traces').map((c) => ({ table: c.table, id: c.id })),
    ];
    const ids = [...new Set(records.map((r) => r.id))];
    const history = ids.length === 0 ? 0 : await db.history.where('recordId').anyOf(ids).delete();
    const liveIds = memories.filter((m) => m.deletedAt === undefined).map((m) => m.id);
    const vectors = (await db.vectors.bulkGet(liveIds)).filter((v) => v !== undefined).length;
    const termKeys: [string, string][] = [
      ...liveIds.map((id): [string, string] => [MEMORY_CORPUS, id]),
      ...messages.map((m): [string, string] => [MESSAGE_CORPUS, m.id]),
    ];
    const terms = (await db.terms.bulkGet(termKeys)).filter((t) => t !== undefined).length;
    await db.meta.bulkDelete(options.metaKeysOf?.(records) ?? []);
    // With their chunks and position rows.
    for (const key of SNAPSHOT_KEYS) await deleteSnapshot(db, key);
    await bumpGeneration(db);
    const result: ForgetResult = {
      memories: live,
      tombstones,
      messages: messages.length,
      blocks: blocks.length,
      traces: traces.length,
      history,
      vectors,
      terms,
    };
    // The write path removes the rows, vectors and terms and logs each removal; history of the scope is gone already.
    return { changes, result, withoutHistory: true };
  });
}
