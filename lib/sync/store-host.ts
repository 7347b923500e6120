/**
 * The engine's store as a {@link SyncHost}: reads the change log and the rows it
 * names, and applies pulled records through the one write path (last writer wins,
 * the loser kept in history). Blocks and messages have no origin field, so the
 * version pulled for them is remembered in `meta` (`sync.remote/<kind>/<id>`):
 * that is how a pulled version is told apart from a local edit and never echoed back.
 */
import { SyncError } from '../errors.js';
import { textFreeRow } from '../store/forgetting.js';
import { creationsOf } from '../store/history-rows.js';
import { ROW_CHECKS } from '../store/row-checks.js';
import { rowLimitProblem } from '../store/row-limits.js';
import type { BlockRow, ChangeRow, HistoryRow, Json, MemoryRow, MessageRow, TableName } from '../store/rows.js';
import { readCurrentVectors } from '../store/current-vector.js';
import { readLastSeq } from '../store/change-log.js';
import type { EngramDb } from '../store/schema.js';
import { type RowChange, type WritePlan } from '../store/write.js';
import { blockKey } from '../store/block-key.js';
import { SCOPE_FIELDS } from '../store/scope.js';
import { vectorDefect } from '../vector/vector-checks.js';
import type { SyncRecord } from './point-codec.js';
import { remoteWins, sameVersion, type VersionStamp } from './stamp.js';
import type { ApplyRefusal, ApplyResult, ChangeEntry, SyncHost, SyncState } from './sync-host.js';
import { POINT_KINDS, type PointKind } from './sync-target.js';

/** What sync needs from an open engine; the facade builds it. */
export interface SyncEngineAccess {
  readonly db: EngramDb;
  /** The store's device id: the origin of what it writes. */
  readonly deviceId: string;
  /** The engine's clock (epoch ms). */
  now(): number;
  /** The store's `maxContentBytes`: a pulled record is held to it like any added one. */
  readonly maxContentBytes: number;
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
  /** The message hash or block value it was pulled with ('' for a deletion). */
  content: string;
  /** Set when the version pulled was a deletion: the row is gone, the mark keeps its version. */
  deleted?: true;
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
  memory: ['text', 'tier', ...SCOPE_FIELDS, 'key', 'value', 'metadata', 'hash', 'createdAt', 'expiresAt'],
  block: ['agentId', 'userId', 'shared', 'label', 'value', 'limit'],
  message: [
    'threadId',
    'agentId',
    'userId',
    'role',
    'content',
    'name',
    'toolCallId',
    'createdAt',
    'position',
    'hash',
    'inContext',
    'metadata',
  ],
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
  return blockKey(row.agentId, row.label, row.userId);
}

/** A pulled record that cannot be applied, and why (see refusals.ts). */
class Refused extends SyncError {
  constructor(readonly refusal: Omit<ApplyRefusal, 'index'>) {
    super(refusal.detail, { reason: 'incompatible' });
  }
}

function refuse(reason: ApplyRefusal['reason'], record: SyncRecord, problem: string): Refused {
  return new Refused({ reason, detail: `pulled ${record.kind}: ${problem}` });
}

/**
 * Longest record id accepted: a memory or message id is at most 512 characters (as
 * for add()); a block's record id joins three such ids.
 */
const MAX_RID_CHARS = 2048;

/** Only the fields a body carries (BODY_FIELDS): anything else a body holds is dropped, never stored. */
function pick(kind: PointKind, body: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const k of BODY_FIELDS[kind]) if (Object.hasOwn(body, k)) out[k] = body[k]!;
  return out;
}

/** The local row a pulled live record becomes, checked like a row given to add(): shape, then the store's limits. */
function rowOf(record: SyncRecord, local: LocalRow | undefined, maxContentBytes: number): LocalRow {
  const row = uncheckedRowOf(record, pick(record.kind, record.body!), local);
  checkPulledRow(record, row, maxContentBytes);
  return row;
}

/** The row a pulled body becomes, with the record's id and version (a memory keeps its local access counts). */
function uncheckedRowOf(record: SyncRecord, body: Record<string, Json>, local: LocalRow | undefined): LocalRow {
  if (record.kind === 'memory') {
    const before = local as MemoryRow | undefined;
    const row = {
      ...body,
      id: record.rid,
      updatedAt: record.updatedAt,
      version: record.version,
      origin: record.origin,
      accessCount: before?.accessCount ?? 0,
    } as unknown as MemoryRow;
    if (before?.lastAccessedAt !== undefined) row.lastAccessedAt = before.lastAccessedAt;
    return row;
  }
  if (record.kind === 'block')
    return { ...body, version: record.version, updatedAt: record.updatedAt } as unknown as BlockRow;
  return { ...body, id: record.rid } as unknown as MessageRow;
}

/** Checks a pulled row as add() checks one (throws Refused): shape, a block's key fields, then the store's limits. */
function checkPulledRow(record: SyncRecord, row: LocalRow, maxContentBytes: number): void {
  const fields = row as unknown as Record<string, unknown>;
  const problem = ROW_CHECKS[record.kind](fields);
  if (problem !== undefined) throw refuse('malformed', record, problem);
  if (record.kind === 'block' && blockRid(row as BlockRow) !== record.rid)
    throw refuse('malformed', record, 'agentId, label and userId do not match the record id');
  const over = rowLimitProblem(record.kind, fields, { maxContentBytes });
  if (over !== undefined) throw refuse('over-limit', record, over);
}

/** The vector of a pulled live memory, checked as add() checks an embedding: the store's dimension, finite numbers. */
function vectorOf(record: SyncRecord, dimensions: number): Float32Array {
  const v = record.vector;
  if (v === undefined) throw refuse('malformed', record, 'a live memory without a vector');
  if (v.length !== dimensions)
    throw refuse('malformed', record, `a vector of ${v.length} dimensions, this store's embedder has ${dimensions}`);
  const vector = Float32Array.from(v);
  const defect = vectorDefect(vector, dimensions);
  if (defect !== undefined || v.some((x) => typeof x !== 'number'))
    throw refuse('malformed', record, `the vector is not finite numbers (${defect ?? 'not numbers'})`);
  return vector;
}

/** A pulled version of a block or message, to remember in `meta` once the write is planned. */
interface MarkWrite {
  key: string;
  value: RemoteMark;
}

/** What applying one page of pulled records plans: the row changes, the losing versions and the marks. */
interface ApplyPlan {
  readonly outcome: ApplyResult;
  readonly changes: RowChange[];
  readonly losers: HistoryRow[];
  readonly marks: MarkWrite[];
  /** When the page is applied (the losers' history time). */
  readonly at: number;
  readonly embedder: { id: string; dimensions: number };
  readonly pushedSeq: number;
  /** A memory changed: the vector index must catch up after the write. */
  memoriesTouched: boolean;
}

/** The store of an open engine as a SyncHost. */
export class StoreHost implements SyncHost {
  readonly deviceId: string;
  readonly maxContentBytes: number;
  readonly #engine: SyncEngineAccess;
  readonly #db: EngramDb;

  constructor(engine: SyncEngineAccess) {
    this.#engine = engine;
    this.#db = engine.db;
    this.deviceId = engine.deviceId;
    this.maxContentBytes = engine.maxContentBytes;
  }

  embedder(): Promise<{ id: string; dimensions: number }> {
    return this.#engine.embedder();
  }

  lastSeq(): Promise<number> {
    return readLastSeq(this.#db);
  }

  async changesAfter(seq: number, limit: number): Promise<ChangeEntry[]> {
    const rows = await this.#db.changes.where('seq').above(seq).limit(limit).toArray();
    return rows.map((c) => ({ seq: c.seq!, kind: KIND_OF[c.table], rid: c.recordId, at: c.at }));
  }

  async records(entries: readonly ChangeEntry[], skipEchoes: boolean): Promise<SyncRecord[]> {
    const out: SyncRecord[] = [];
    for (const kind of POINT_KINDS) {
      const mine = entries.filter((e) => e.kind === kind);
      if (mine.length === 0) continue;
      out.push(...(await this.#recordsOfKind(kind, mine, skipEchoes)));
    }
    return out;
  }

  /** The records of change-log entries of one kind: their rows, marks and vectors read at once, then each in order. */
  async #recordsOfKind(kind: PointKind, mine: readonly ChangeEntry[], skipEchoes: boolean): Promise<SyncRecord[]> {
    const { deviceId } = this;
    const out: SyncRecord[] = [];
    const rids = mine.map((e) => e.rid);
    const [rows, marks, vectors] = await Promise.all([
      this.#readRows(kind, rids),
      this.#readMarks(kind, rids),
      this.#vectorsOf(kind, rids),
    ]);
    mine.forEach((entry, i) => {
      const row = rows[i];
      if (row === undefined) {
        out.push(goneRecord(kind, entry, deviceId));
        return;
      }
      const version = this.#versionOf(kind, row, marks[i], entry.at);
      if (skipEchoes && version.origin !== deviceId) return; // pulled from the server: already there
      out.push(recordOf(kind, entry.rid, row, version, vectors[i]));
    });
    return out;
  }

  async allRecords(
    kinds: readonly PointKind[],
    after: string | undefined,
    limit: number,
  ): Promise<{ records: SyncRecord[]; next: string | undefined }> {
    const [startKind, startKey] = after === undefined ? [0, null] : (JSON.parse(after) as [number, string | null]);
    for (let k = startKind; k < POINT_KINDS.length; k++) {
      const kind = POINT_KINDS[k]!;
      if (!kinds.includes(kind)) continue;
      const from = k === startKind && startKey !== null ? startKey : undefined;
      if (kind === 'block' && from !== undefined) continue; // blocks fit one page
      const rows = await this.#pageRows(kind, from, limit);
      const rids = rows.map((row) => ridOf(kind, row));
      if (rows.length === 0) continue;
      const records = await this.#pageRecords(kind, rows, rids);
      const full = kind !== 'block' && rows.length === limit;
      return { records, next: nextPage(k, full, rids.at(-1)) };
    }
    return { records: [], next: undefined };
  }

  /** A page of rows of `kind` in id order, after `from` when set; blocks all at once (they fit one page). */
  #pageRows(kind: PointKind, from: string | undefined, limit: number): Promise<LocalRow[]> {
    const db = this.#db;
    if (kind === 'block') return db.blocks.toArray();
    const table = kind === 'memory' ? db.memories : db.messages;
    return (from === undefined ? table.orderBy('id') : table.where('id').above(from)).limit(limit).toArray();
  }

  /** The records of a page of local rows: each row's version (its mark read) and current vector. */
  async #pageRecords(kind: PointKind, rows: readonly LocalRow[], rids: readonly string[]): Promise<SyncRecord[]> {
    const [marks, vectors] = await Promise.all([this.#readMarks(kind, rids), this.#vectorsOf(kind, rids)]);
    return rows.map((row, i) =>
      recordOf(
        kind,
        rids[i]!,
        row,
        this.#versionOf(kind, row, marks[i], kind === 'message' ? (row as MessageRow).createdAt : 0),
        vectors[i],
      ),
    );
  }

  async apply(
    records: readonly SyncRecord[],
    embedder: { id: string; dimensions: number },
    pushedSeq: number,
  ): Promise<ApplyResult> {
    if (records.length === 0) return { downloaded: 0, deleted: 0, conflicts: 0, refused: [] };
    const touched = { memories: false };
    const result = await this.#engine.write(async (): Promise<WritePlan<ApplyResult>> => {
      const plan = emptyPlan(this.#engine.now(), embedder, pushedSeq);
      for (const kind of POINT_KINDS) await this.#applyKind(plan, kind, records);
      // Bookkeeping in the same transaction: the losing versions and the marks of pulled versions.
      if (plan.losers.length > 0) await this.#db.history.bulkAdd(await this.#withCreations(plan.losers));
      if (plan.marks.length > 0) await this.#db.meta.bulkPut(plan.marks);
      touched.memories = plan.memoriesTouched;
      return { changes: plan.changes, result: plan.outcome };
    });
    if (touched.memories) await this.#engine.afterWrite();
    return result;
  }

  /**
   * `losers` after the add entries of their records that have none stored (created here and never
   * changed since: history-rows.ts), dated by the row here (each loser's `after`).
   */
  async #withCreations(losers: readonly HistoryRow[]): Promise<HistoryRow[]> {
    const ids = [...new Set(losers.map((h) => h.recordId))];
    const counts = await Promise.all(ids.map((id) => this.#db.history.where('recordId').equals(id).count()));
    const stored = new Set(ids.filter((_, i) => counts[i]! > 0));
    return [
      ...creationsOf(
        losers,
        (id) => stored.has(id),
        (e) => e.after,
      ),
      ...losers,
    ];
  }

  /** Applies the page's records of one kind: their rows and marks read at once, then each decided in order. */
  async #applyKind(plan: ApplyPlan, kind: PointKind, records: readonly SyncRecord[]): Promise<void> {
    const indexes = indexesToApply(plan, kind, records);
    if (indexes.length === 0) return;
    const rids = indexes.map((i) => records[i]!.rid);
    const [rows, stored] = await Promise.all([this.#readRows(kind, rids), this.#readMarks(kind, rids)]);
    for (const [i, index] of indexes.entries()) {
      try {
        await this.#applyOne(plan, kind, records[index]!, rows[i], stored[i]);
      } catch (e) {
        if (!(e instanceof Refused)) throw e;
        plan.outcome.refused.push({ index, ...e.refusal });
      }
    }
  }

  async loadState(key: string): Promise<SyncState | undefined> {
    return (await this.#loadStates())[key];
  }

  async saveState(key: string, state: SyncState): Promise<void> {
    const db = this.#db;
    await db.transaction('rw', db.meta, async () => {
      const states = await this.#loadStates();
      states[key] = state;
      const pushed = Math.min(...Object.values(states).map((s) => s.pushedSeq));
      await db.meta.bulkPut([
        { key: SYNC_STATE_KEY, value: states },
        { key: SYNC_PUSHED_SEQ_KEY, value: pushed },
      ]);
    });
  }

  /**
   * Decides one pulled record against the local one, adding to `plan`; throws Refused to skip it.
   * The same version is skipped; an older one is kept in history when this device changed the
   * record since its last push (a conflict this device wins) and refused otherwise (a rollback);
   * a newer one is applied: deleted, added or updated.
   */
  async #applyOne(
    plan: ApplyPlan,
    kind: PointKind,
    remote: SyncRecord,
    local: LocalRow | undefined,
    mark: RemoteMark | undefined,
  ): Promise<void> {
    const held = await this.#heldVersion(plan, kind, remote.rid, local, mark);
    if (held.version !== undefined && sameVersion(held.version, remote)) return;
    // Checked before it can count or be kept: a record add() would refuse is never applied, nor kept in history.
    const pulled = pulledOf(kind, remote, local, this.maxContentBytes, plan.embedder.dimensions);
    const localWins = held.version !== undefined && !remoteWins(remote, held.version);
    // Older than the version held, with nothing changed here since the last push: an
    // honest server never serves it (it keeps the newest), so it is a rollback, refused.
    if (localWins && !held.pendingHere) throw refuse('rollback', remote, 'a version older than the one held here');
    if (held.pendingHere && held.version?.origin === this.deviceId) plan.outcome.conflicts += 1;
    if (localWins) keepLoser(plan, pulled);
    else if (pulled.after === undefined)
      applyDeletion(plan, kind, remote, pulled.id, pulled.goneHere ? undefined : local);
    else applyLive(plan, pulled, pulled.after);
  }

  /**
   * The version this store holds of a record, and whether it changed here since the
   * last push (`pendingHere`). A row gone here (a block or message is deleted outright)
   * still has the version of its deletion: the mark of a pulled deletion, or the
   * deletion logged here.
   */
  async #heldVersion(
    plan: ApplyPlan,
    kind: PointKind,
    rid: string,
    local: LocalRow | undefined,
    mark: RemoteMark | undefined,
  ): Promise<{ version: Version | undefined; pendingHere: boolean }> {
    const last = await this.#lastChange(kind, rid);
    const pendingHere = last !== undefined && last.seq! > plan.pushedSeq;
    if (local !== undefined) return { version: this.#versionOf(kind, local, mark, last?.at ?? 0), pendingHere };
    if (mark?.deleted === true) {
      return { version: { updatedAt: mark.updatedAt, origin: mark.origin, version: mark.version }, pendingHere };
    }
    if (last !== undefined && (pendingHere || last.op === 'delete')) {
      return { version: { updatedAt: last.at, origin: this.deviceId, version: GONE_VERSION }, pendingHere };
    }
    return { version: undefined, pendingHere };
  }

  #readRows(kind: PointKind, rids: readonly string[]): Promise<(LocalRow | undefined)[]> {
    const db = this.#db;
    if (kind === 'memory') return db.memories.bulkGet([...rids]);
    if (kind === 'message') return db.messages.bulkGet([...rids]);
    return Promise.all(rids.map((rid) => db.blocks.get(rid)));
  }

  async #readMarks(kind: PointKind, rids: readonly string[]): Promise<(RemoteMark | undefined)[]> {
    if (kind === 'memory') return rids.map(() => undefined);
    const rows = await this.#db.meta.bulkGet(rids.map((rid) => markKey(kind, rid)));
    return rows.map((r) => r?.value as RemoteMark | undefined);
  }

  /** The last change-log entry of a record, if any. */
  async #lastChange(kind: PointKind, rid: string): Promise<ChangeRow | undefined> {
    const entries = await this.#db.changes.where('recordId').equals(rid).toArray();
    return entries.filter((c) => c.table === TABLE_OF[kind]).at(-1);
  }

  /** Which device made the local version of a row, and when. */
  #versionOf(kind: PointKind, row: LocalRow, mark: RemoteMark | undefined, fallbackAt: number): Version {
    if (kind === 'memory')
      return {
        updatedAt: (row as MemoryRow).updatedAt,
        origin: (row as MemoryRow).origin,
        version: (row as MemoryRow).version,
      };
    const pulled =
      mark !== undefined &&
      mark.deleted !== true &&
      mark.content === contentOf(kind, row) &&
      (kind === 'message' || mark.updatedAt === (row as BlockRow).updatedAt);
    if (pulled) return { updatedAt: mark.updatedAt, origin: mark.origin, version: mark.version };
    if (kind === 'block')
      return { updatedAt: (row as BlockRow).updatedAt, origin: this.deviceId, version: (row as BlockRow).version };
    return { updatedAt: fallbackAt, origin: this.deviceId, version: 1 };
  }

  async #vectorsOf(kind: PointKind, rids: readonly string[]): Promise<(Float32Array | undefined)[]> {
    if (kind !== 'memory') return rids.map(() => undefined);
    // The current vector: after a re-embed's switch, a row's staged vector of the recorded model (current-vector.ts).
    return (await readCurrentVectors(this.#db, rids)).map((v) => v?.vector);
  }

  async #loadStates(): Promise<Record<string, SyncState>> {
    return ((await this.#db.meta.get(SYNC_STATE_KEY))?.value as Record<string, SyncState> | undefined) ?? {};
  }
}

/** The page's indexes of the records of `kind`, but for those refused for an over-long record id. */
function indexesToApply(plan: ApplyPlan, kind: PointKind, records: readonly SyncRecord[]): number[] {
  const indexes: number[] = [];
  records.forEach((r, index) => {
    if (r.kind !== kind) return;
    if (r.rid.length > MAX_RID_CHARS)
      plan.outcome.refused.push({
        index,
        reason: 'over-limit',
        detail: `pulled ${r.kind}: a record id of ${r.rid.length} characters`,
      });
    else indexes.push(index);
  });
  return indexes;
}

/** A plan with nothing decided yet, for a page applied at `at`. */
function emptyPlan(at: number, embedder: { id: string; dimensions: number }, pushedSeq: number): ApplyPlan {
  return {
    outcome: { downloaded: 0, deleted: 0, conflicts: 0, refused: [] },
    changes: [],
    losers: [],
    marks: [],
    at,
    embedder,
    pushedSeq,
    memoriesTouched: false,
  };
}

/** A pulled record checked (see {@link pulledOf}) and set against the local row. */
interface Pulled {
  readonly kind: PointKind;
  readonly remote: SyncRecord;
  /** The record's id here: a block's from the key fields of its local row. */
  readonly id: string;
  readonly local: LocalRow | undefined;
  /** The row the record becomes, checked like a row given to add(); undefined for a deletion. */
  readonly after: LocalRow | undefined;
  /** A live memory's vector, checked like an embedding given to add(). */
  readonly vector: Float32Array | undefined;
  /** No live row here: none, or a memory's tombstone. */
  readonly goneHere: boolean;
}

/** A pulled record checked as add() checks its input (throws Refused), set against the local row. */
function pulledOf(
  kind: PointKind,
  remote: SyncRecord,
  local: LocalRow | undefined,
  maxContentBytes: number,
  dimensions: number,
): Pulled {
  const id = kind === 'block' && local !== undefined ? blockRid(local as BlockRow) : remote.rid;
  const after = remote.deleted ? undefined : rowOf(remote, local, maxContentBytes);
  const vector = after !== undefined && kind === 'memory' ? vectorOf(remote, dimensions) : undefined;
  const goneHere = local === undefined || (kind === 'memory' && (local as MemoryRow).deletedAt !== undefined);
  return { kind, remote, id, local, after, vector, goneHere };
}

/**
 * A concurrent edit this device wins (its version will be pushed): the server's version is
 * kept in history, without its text when the record is deleted here (deletions are text-free).
 */
function keepLoser(plan: ApplyPlan, pulled: Pulled): void {
  const table = TABLE_OF[pulled.kind];
  const { after, goneHere } = pulled;
  plan.losers.push({
    table,
    recordId: pulled.id,
    op: pulled.remote.deleted ? 'delete' : 'update',
    before: after === undefined ? null : goneHere ? textFreeRow(table, after) : after,
    after: pulled.local ?? null,
    at: plan.at,
  });
}

/** A pulled live version that wins: the row added (none live here) or updated; a block's or message's version marked. */
function applyLive(plan: ApplyPlan, pulled: Pulled, after: LocalRow): void {
  plan.outcome.downloaded += 1;
  plan.changes.push(liveChange(pulled, after, plan.embedder.id));
  if (pulled.kind === 'memory') {
    plan.memoriesTouched = true;
    return;
  }
  plan.marks.push(markOf(pulled.kind, pulled.remote, contentOf(pulled.kind, after)));
}

/** The row change of a pulled live version: added when no live row is here, else updated (a memory with its vector). */
function liveChange({ kind, id, local, vector, goneHere }: Pulled, after: LocalRow, embedderId: string): RowChange {
  const op = goneHere ? 'add' : 'update';
  if (kind === 'memory') {
    const row = { id, vector: vector!, embedderId };
    return local === undefined
      ? { table: 'memories', op, id, after: after as MemoryRow, vector: row }
      : { table: 'memories', op, id, before: local as MemoryRow, after: after as MemoryRow, vector: row };
  }
  if (kind === 'block') {
    return local === undefined
      ? { table: 'blocks', op, id, after: after as BlockRow }
      : { table: 'blocks', op, id, before: local as BlockRow, after: after as BlockRow };
  }
  return local === undefined
    ? { table: 'messages', op, id, after: after as MessageRow }
    : { table: 'messages', op, id, before: local as MessageRow, after: after as MessageRow };
}

/** The mark of a pulled version of a block or message (`content` '' and `deleted` for a deletion). */
function markOf(kind: PointKind, remote: SyncRecord, content: string, deleted?: true): MarkWrite {
  const value: RemoteMark = { origin: remote.origin, updatedAt: remote.updatedAt, version: remote.version, content };
  if (deleted) value.deleted = true;
  return { key: markKey(kind, remote.rid), value };
}

/**
 * A pulled deletion: a block's or message's mark keeps its version (the row itself goes);
 * `live`, the local row when it is still live here, is deleted (a memory becomes a tombstone).
 */
function applyDeletion(
  plan: ApplyPlan,
  kind: PointKind,
  remote: SyncRecord,
  id: string,
  live: LocalRow | undefined,
): void {
  if (kind !== 'memory') plan.marks.push(markOf(kind, remote, '', true));
  if (live === undefined) return;
  plan.outcome.deleted += 1;
  plan.changes.push(deletionChange(kind, id, live, remote));
  if (kind === 'memory') plan.memoriesTouched = true;
}

/** The row change of a pulled deletion of a live row: a memory becomes a tombstone, a block or message goes. */
function deletionChange(kind: PointKind, id: string, live: LocalRow, remote: SyncRecord): RowChange {
  if (kind === 'memory') {
    const before = live as MemoryRow;
    const gone: MemoryRow = {
      ...before,
      deletedAt: remote.updatedAt,
      updatedAt: remote.updatedAt,
      version: remote.version,
      origin: remote.origin,
    };
    return { table: 'memories', op: 'delete', id, before, after: gone };
  }
  if (kind === 'block') return { table: 'blocks', op: 'delete', id, before: live as BlockRow };
  return { table: 'messages', op: 'delete', id, before: live as MessageRow };
}

/** A local row's record id: a block's from its key fields, a memory's or message's its id. */
function ridOf(kind: PointKind, row: LocalRow): string {
  return kind === 'block' ? blockRid(row as BlockRow) : (row as MemoryRow | MessageRow).id;
}

/** The cursor after a page of kind number `k`: further in that kind when the page was full, else the next kind. */
function nextPage(k: number, full: boolean, lastRid: string | undefined): string | undefined {
  if (full) return JSON.stringify([k, lastRid]);
  return k + 1 < POINT_KINDS.length ? JSON.stringify([k + 1, null]) : undefined;
}

/** The tombstone of a record gone for good here (a hard delete): made now, by this device. */
function goneRecord(kind: PointKind, entry: ChangeEntry, deviceId: string): SyncRecord {
  return { kind, rid: entry.rid, updatedAt: entry.at, origin: deviceId, version: GONE_VERSION, deleted: true };
}

/** The record a local row's version becomes: a tombstone for a deleted memory, else its body (and vector). */
function recordOf(
  kind: PointKind,
  rid: string,
  row: LocalRow,
  version: Version,
  vector: Float32Array | undefined,
): SyncRecord {
  const deleted = kind === 'memory' && (row as MemoryRow).deletedAt !== undefined;
  const record: SyncRecord = {
    kind,
    rid,
    updatedAt: version.updatedAt,
    origin: version.origin,
    version: version.version,
    deleted,
  };
  if (!deleted) {
    record.body = bodyOf(kind, row);
    if (vector !== undefined) record.vector = Array.from(vector);
  }
  return record;
}
