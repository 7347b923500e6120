/**
 * The engine's store as a {@link SyncHost}: reads the change log and the rows it
 * names, and applies pulled records through the one write path (last writer wins,
 * the loser kept in history). Blocks and messages have no origin field, so the
 * version pulled for them is remembered in `meta` (`sync.remote/<kind>/<id>`):
 * that is how a pulled version is told apart from a local edit and never echoed back.
 */
import { SyncError } from '../errors.js';
import { textFreeRow } from '../store/forgetting.js';
import { ROW_CHECKS } from '../store/row-checks.js';
import type { BlockRow, ChangeRow, HistoryRow, Json, MemoryRow, MessageRow, TableName } from '../store/rows.js';
import type { EngramDb } from '../store/schema.js';
import { blockRecordId, type RowChange, type WritePlan } from '../store/write.js';
import type { SyncRecord } from './point-codec.js';
import { remoteWins, sameVersion, type VersionStamp } from './stamp.js';
import type { ApplyResult, SyncHost, SyncState } from './sync-host.js';
import { POINT_KINDS, type PointKind } from './sync-target.js';

/** What sync needs from an open engine; the facade builds it. */
export interface SyncEngineAccess {
  readonly db: EngramDb;
  /** The store's device id: the origin of what it writes. */
  readonly deviceId: string;
  /** The engine's clock (epoch ms). */
  now(): number;
  /** The one write path (the engine's `EngineStore.write`). */
  write<R>(plan: () => Promise<WritePlan<R>>): Promise<R>;
  /** The embedder's id and dimension (loads it when needed). */
  embedder(): Promise<{ id: string; dimensions: number }>;
  /** Brings what is derived from the change log (the vector index) up to date. */
  afterWrite(): Promise<void>;
}

/** `meta` key of sync's state, per collection. */
export const SYNC_STATE_KEY = 'sync.state';

/**
 * `meta` key of the change-log position every collection this store syncs with has
 * pushed up to. Compaction of the change log must keep every entry after it.
 */
export const SYNC_PUSHED_SEQ_KEY = 'sync.pushedSeq';

const MARK_PREFIX = 'sync.remote/';

/**
 * The version of a tombstone made for a row that is gone (a hard delete, whose
 * last version is no longer known): it wins over any write of the same millisecond.
 */
const GONE_VERSION = 2 ** 31 - 1;

/** The version pulled for a block or message, remembered to recognise it later. */
interface RemoteMark {
  origin: string;
  updatedAt: number;
  version: number;
  /** The message hash or block value it was pulled with. */
  content: string;
}

const TABLE_OF: Record<PointKind, TableName> = { memory: 'memories', block: 'blocks', message: 'messages' };
const KIND_OF: Partial<Record<TableName, PointKind>> = { memories: 'memory', blocks: 'block', messages: 'message' };

type LocalRow = MemoryRow | BlockRow | MessageRow;

type Version = VersionStamp;

function markKey(kind: PointKind, rid: string): string {
  return `${MARK_PREFIX}${kind}/${rid}`;
}

/** The `meta` keys sync keeps about a record (its remote mark); `engram.forget()` removes them with the record. */
export function syncMetaKeysOf(table: TableName, rid: string): string[] {
  const kind = KIND_OF[table];
  return kind === undefined ? [] : [markKey(kind, rid)];
}

/** Row fields that travel in a point's body; the rest is the point's own (id, version) or stays on the device. */
const BODY_FIELDS: Record<PointKind, readonly string[]> = {
  memory: ['text', 'tier', 'userId', 'agentId', 'runId', 'projectId', 'sessionId', 'key', 'value', 'metadata', 'hash', 'createdAt', 'expiresAt'],
  block: ['agentId', 'userId', 'shared', 'label', 'value', 'limit'],
  message: ['threadId', 'agentId', 'userId', 'role', 'content', 'name', 'toolCallId', 'createdAt', 'position', 'hash', 'inContext', 'metadata'],
};

function bodyOf(kind: PointKind, row: LocalRow): Record<string, Json> {
  const fields = row as unknown as Record<string, Json | undefined>;
  const body: Record<string, Json> = {};
  for (const k of BODY_FIELDS[kind]) if (fields[k] !== undefined) body[k] = fields[k];
  return body;
}

function contentOf(kind: PointKind, row: LocalRow): string {
  return kind === 'block' ? (row as BlockRow).value : kind === 'message' ? (row as MessageRow).hash : '';
}

/** A block's record id (its key in its table and the change log): the agent's own or one user's block. */
function blockRid(row: BlockRow): string {
  return blockRecordId(row.agentId, row.label, row.userId);
}

function malformed(record: SyncRecord, problem: string): SyncError {
  return new SyncError(`pulled ${record.kind} ${record.rid}: ${problem}`, { reason: 'incompatible' });
}

/** The local row a pulled live record becomes. */
function rowOf(record: SyncRecord, local: LocalRow | undefined): LocalRow {
  const body = record.body!;
  if (record.kind === 'memory') {
    const before = local as MemoryRow | undefined;
    const row = { ...body, id: record.rid, updatedAt: record.updatedAt, version: record.version, origin: record.origin, accessCount: before?.accessCount ?? 0 } as unknown as MemoryRow;
    if (before?.lastAccessedAt !== undefined) row.lastAccessedAt = before.lastAccessedAt;
    const problem = ROW_CHECKS.memory(row as unknown as Record<string, unknown>);
    if (problem !== undefined) throw malformed(record, problem);
    return row;
  }
  if (record.kind === 'block') {
    const row = { ...body, version: record.version, updatedAt: record.updatedAt } as unknown as BlockRow;
    const problem = ROW_CHECKS.block(row as unknown as Record<string, unknown>);
    if (problem !== undefined) throw malformed(record, problem);
    if (blockRid(row) !== record.rid) throw malformed(record, 'agentId, label and userId do not match the record id');
    return row;
  }
  const row = { ...body, id: record.rid } as unknown as MessageRow;
  const problem = ROW_CHECKS.message(row as unknown as Record<string, unknown>);
  if (problem !== undefined) throw malformed(record, problem);
  return row;
}

/** The store of an open engine as a SyncHost. */
export function storeHost(engine: SyncEngineAccess): SyncHost {
  const { db, deviceId } = engine;

  const readBlock = (rid: string): Promise<BlockRow | undefined> => db.blocks.get(rid);

  const readRows = async (kind: PointKind, rids: readonly string[]): Promise<(LocalRow | undefined)[]> => {
    if (kind === 'memory') return db.memories.bulkGet([...rids]);
    if (kind === 'message') return db.messages.bulkGet([...rids]);
    return Promise.all(rids.map(readBlock));
  };

  const readMarks = async (kind: PointKind, rids: readonly string[]): Promise<(RemoteMark | undefined)[]> => {
    if (kind === 'memory') return rids.map(() => undefined);
    const rows = await db.meta.bulkGet(rids.map((rid) => markKey(kind, rid)));
    return rows.map((r) => r?.value as RemoteMark | undefined);
  };

  /** The last change-log entry of a record, if any. */
  const lastChange = async (kind: PointKind, rid: string): Promise<ChangeRow | undefined> => {
    const entries = await db.changes.where('recordId').equals(rid).toArray();
    return entries.filter((c) => c.table === TABLE_OF[kind]).at(-1);
  };

  /** Which device made the local version of a row, and when. */
  const versionOf = (kind: PointKind, row: LocalRow, mark: RemoteMark | undefined, fallbackAt: number): Version => {
    if (kind === 'memory') return { updatedAt: (row as MemoryRow).updatedAt, origin: (row as MemoryRow).origin, version: (row as MemoryRow).version };
    const pulled = mark !== undefined && mark.content === contentOf(kind, row) && (kind === 'message' || mark.updatedAt === (row as BlockRow).updatedAt);
    if (pulled) return { updatedAt: mark.updatedAt, origin: mark.origin, version: mark.version };
    if (kind === 'block') return { updatedAt: (row as BlockRow).updatedAt, origin: deviceId, version: (row as BlockRow).version };
    return { updatedAt: fallbackAt, origin: deviceId, version: 1 };
  };

  const recordOf = (kind: PointKind, rid: string, row: LocalRow, version: Version, vector: Float32Array | undefined): SyncRecord => {
    const deleted = kind === 'memory' && (row as MemoryRow).deletedAt !== undefined;
    const record: SyncRecord = { kind, rid, updatedAt: version.updatedAt, origin: version.origin, version: version.version, deleted };
    if (!deleted) {
      record.body = bodyOf(kind, row);
      if (vector !== undefined) record.vector = Array.from(vector);
    }
    return record;
  };

  const vectorsOf = async (kind: PointKind, rids: readonly string[]): Promise<(Float32Array | undefined)[]> => {
    if (kind !== 'memory') return rids.map(() => undefined);
    return (await db.vectors.bulkGet([...rids])).map((v) => v?.vector);
  };

  const loadStates = async (): Promise<Record<string, SyncState>> => ((await db.meta.get(SYNC_STATE_KEY))?.value as Record<string, SyncState> | undefined) ?? {};

  return {
    deviceId,

    embedder: () => engine.embedder(),

    async lastSeq() {
      return (await db.changes.orderBy('seq').last())?.seq ?? 0;
    },

    async changesAfter(seq, limit) {
      const rows = await db.changes.where('seq').above(seq).limit(limit).toArray();
      return rows.map((c) => ({ seq: c.seq!, kind: KIND_OF[c.table], rid: c.recordId, at: c.at }));
    },

    async records(entries, skipEchoes) {
      const out: SyncRecord[] = [];
      for (const kind of POINT_KINDS) {
        const mine = entries.filter((e) => e.kind === kind);
        if (mine.length === 0) continue;
        const rids = mine.map((e) => e.rid);
        const [rows, marks, vectors] = await Promise.all([readRows(kind, rids), readMarks(kind, rids), vectorsOf(kind, rids)]);
        mine.forEach((entry, i) => {
          const row = rows[i];
          if (row === undefined) {
            // Gone for good here (a hard delete): a tombstone made now, by this device.
            out.push({ kind, rid: entry.rid, updatedAt: entry.at, origin: deviceId, version: GONE_VERSION, deleted: true });
            return;
          }
          const version = versionOf(kind, row, marks[i], entry.at);
          if (skipEchoes && version.origin !== deviceId) return; // pulled from the server: already there
          out.push(recordOf(kind, entry.rid, row, version, vectors[i]));
        });
      }
      return out;
    },

    async allRecords(kinds, after, limit) {
      const [startKind, startKey] = after === undefined ? [0, null] : (JSON.parse(after) as [number, string | null]);
      for (let k = startKind; k < POINT_KINDS.length; k++) {
        const kind = POINT_KINDS[k]!;
        if (!kinds.includes(kind)) continue;
        const from = k === startKind && startKey !== null ? startKey : undefined;
        let rows: LocalRow[];
        let rids: string[];
        if (kind === 'block') {
          if (from !== undefined) continue; // blocks fit one page
          rows = await db.blocks.toArray();
          rids = rows.map((r) => blockRid(r as BlockRow));
        } else {
          const table = kind === 'memory' ? db.memories : db.messages;
          rows = await (from === undefined ? table.orderBy('id') : table.where('id').above(from)).limit(limit).toArray();
          rids = rows.map((r) => (r as MemoryRow | MessageRow).id);
        }
        if (rows.length === 0) continue;
        const [marks, vectors] = await Promise.all([readMarks(kind, rids), vectorsOf(kind, rids)]);
        const records = rows.map((row, i) => recordOf(kind, rids[i]!, row, versionOf(kind, row, marks[i], kind === 'message' ? (row as MessageRow).createdAt : 0), vectors[i]));
        const full = kind !== 'block' && rows.length === limit;
        const next = full ? JSON.stringify([k, rids.at(-1)]) : k + 1 < POINT_KINDS.length ? JSON.stringify([k + 1, null]) : undefined;
        return { records, next };
      }
      return { records: [], next: undefined };
    },

    async apply(records, embedderId, pushedSeq) {
      if (records.length === 0) return { downloaded: 0, deleted: 0, conflicts: 0 };
      const touched = { memories: false };
      const result = await engine.write(async (): Promise<WritePlan<ApplyResult>> => {
        const outcome: ApplyResult = { downloaded: 0, deleted: 0, conflicts: 0 };
        const changes: RowChange[] = [];
        const losers: HistoryRow[] = [];
        const marks: { key: string; value: RemoteMark }[] = [];
        const at = engine.now();
        for (const kind of POINT_KINDS) {
          const mine = records.filter((r) => r.kind === kind);
          if (mine.length === 0) continue;
          const rids = mine.map((r) => r.rid);
          const [rows, stored] = await Promise.all([readRows(kind, rids), readMarks(kind, rids)]);
          for (const [i, remote] of mine.entries()) {
            const local = rows[i];
            const last = await lastChange(kind, remote.rid);
            const pendingHere = last !== undefined && last.seq! > pushedSeq;
            const localVersion: Version | undefined =
              local === undefined ? (pendingHere ? { updatedAt: last.at, origin: deviceId, version: GONE_VERSION } : undefined) : versionOf(kind, local, stored[i], last?.at ?? 0);
            if (localVersion !== undefined && sameVersion(localVersion, remote)) continue;
            const conflict = pendingHere && localVersion?.origin === deviceId;
            if (conflict) outcome.conflicts += 1;
            const table = TABLE_OF[kind];
            const id = kind === 'block' && local !== undefined ? blockRid(local as BlockRow) : remote.rid;
            if (localVersion !== undefined && !remoteWins(remote, localVersion)) {
              // This device's version wins and will be pushed; the server's is kept in history,
              // without its text when the record is deleted here (deletions are text-free).
              const goneHere = local === undefined || (kind === 'memory' && (local as MemoryRow).deletedAt !== undefined);
              const loser = remote.deleted ? null : goneHere ? textFreeRow(table, rowOf(remote, local)) : rowOf(remote, local);
              losers.push({ table, recordId: id, op: remote.deleted ? 'delete' : 'update', before: loser, after: local ?? null, at });
              continue;
            }
            if (remote.deleted) {
              if (local === undefined || (kind === 'memory' && (local as MemoryRow).deletedAt !== undefined)) continue;
              outcome.deleted += 1;
              if (kind === 'memory') {
                const before = local as MemoryRow;
                const after: MemoryRow = { ...before, deletedAt: remote.updatedAt, updatedAt: remote.updatedAt, version: remote.version, origin: remote.origin };
                changes.push({ table: 'memories', op: 'delete', id, before, after });
                touched.memories = true;
              } else if (kind === 'block') {
                changes.push({ table: 'blocks', op: 'delete', id, before: local as BlockRow });
              } else {
                changes.push({ table: 'messages', op: 'delete', id, before: local as MessageRow });
              }
              continue;
            }
            const after = rowOf(remote, local);
            const op = local === undefined || (kind === 'memory' && (local as MemoryRow).deletedAt !== undefined) ? 'add' : 'update';
            outcome.downloaded += 1;
            if (kind === 'memory') {
              if (remote.vector === undefined) throw malformed(remote, 'a live memory without a vector');
              const vector = { id, vector: Float32Array.from(remote.vector), embedderId };
              changes.push(local === undefined ? { table: 'memories', op, id, after: after as MemoryRow, vector } : { table: 'memories', op, id, before: local as MemoryRow, after: after as MemoryRow, vector });
              touched.memories = true;
            } else if (kind === 'block') {
              changes.push(local === undefined ? { table: 'blocks', op, id, after: after as BlockRow } : { table: 'blocks', op, id, before: local as BlockRow, after: after as BlockRow });
              marks.push({ key: markKey(kind, remote.rid), value: { origin: remote.origin, updatedAt: remote.updatedAt, version: remote.version, content: contentOf(kind, after) } });
            } else {
              changes.push(local === undefined ? { table: 'messages', op, id, after: after as MessageRow } : { table: 'messages', op, id, before: local as MessageRow, after: after as MessageRow });
              marks.push({ key: markKey(kind, remote.rid), value: { origin: remote.origin, updatedAt: remote.updatedAt, version: remote.version, content: contentOf(kind, after) } });
            }
          }
        }
        // Bookkeeping in the same transaction: the losing versions and the marks of pulled versions.
        if (losers.length > 0) await db.history.bulkAdd(losers);
        if (marks.length > 0) await db.meta.bulkPut(marks);
        return { changes, result: outcome };
      });
      if (touched.memories) await engine.afterWrite();
      return result;
    },

    async loadState(key) {
      return (await loadStates())[key];
    },

    async saveState(key, state) {
      await db.transaction('rw', db.meta, async () => {
        const states = await loadStates();
        states[key] = state;
        const pushed = Math.min(...Object.values(states).map((s) => s.pushedSeq));
        await db.meta.bulkPut([
          { key: SYNC_STATE_KEY, value: states },
          { key: SYNC_PUSHED_SEQ_KEY, value: pushed },
        ]);
      });
    },
  };
}

