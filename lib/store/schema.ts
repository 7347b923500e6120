/**
 * lib/store owns IndexedDB: the Dexie schema, its migrations and the single
 * write path. It is the only source of truth. It must not import the vector
 * index, the embedder or any face.
 */
import { Dexie, type Table, type Transaction } from 'dexie';
import { blockKey } from './block-key.js';
import { textFreeHistory, textFreeTombstone } from './forgetting.js';
import { rowSealingMiddleware, type RowSealing } from './row-sealing.js';
import type {
  BlockRow,
  ChangeRow,
  HistoryRow,
  MemoryRow,
  MessageRow,
  MetaRow,
  TermsRow,
  TraceRow,
  VectorRow,
} from './rows.js';

/**
 * The schema version engram writes; stored in `meta` and in exports. It names the rows' layout:
 * the Dexie version below may be higher when a version only dropped indexes (v5), which changes
 * no row, so an export stays readable by an engram of this schema version.
 */
export const SCHEMA_VERSION = 4;

/**
 * The Dexie table that holds core memory blocks (the change log and history
 * still call them 'blocks'). Version 2 moved blocks from `blocks`, keyed by
 * [agentId+label], to this table keyed by the block's record id (see
 * `blockKey`), so a block belongs to an agent and, optionally, a user.
 */
export const BLOCKS_TABLE = 'coreBlocks';

/** Every table, for transactions that span the whole store. */
export const ALL_TABLES = [
  'messages',
  'memories',
  'vectors',
  'history',
  BLOCKS_TABLE,
  'traces',
  'changes',
  'meta',
  'terms',
] as const;

/** The blocks stored under another key than `blockKey` of their own fields: by old key, the new key and the row. */
function blockMoves(rows: readonly BlockRow[], keys: readonly string[]): Map<string, { key: string; row: BlockRow }> {
  const moves = new Map<string, { key: string; row: BlockRow }>();
  rows.forEach((row, i) => {
    const key = blockKey(row.agentId, row.label, row.userId);
    if (key !== keys[i]) moves.set(keys[i]!, { key, row });
  });
  return moves;
}

/** The block key of the owner a history entry's row names, or `fallback` when it names none. */
function historyOwnerKey(entry: HistoryRow, fallback: string): string {
  const row = (entry.after ?? entry.before) as Partial<BlockRow> | null | undefined;
  const owned =
    typeof row?.agentId === 'string' &&
    typeof row.label === 'string' &&
    (row.userId === undefined || typeof row.userId === 'string');
  return owned ? blockKey(row.agentId!, row.label!, row.userId) : fallback;
}

/**
 * Moves every block whose key is not `blockKey` of its own fields to that key,
 * with its change-log and history entries (a history entry goes by the owner its
 * row names: under a key two owners shared, each keeps its own). Blocks keyed
 * the way v4 keys them (all but a few) are left alone; nothing is read but the
 * blocks table and the entries of the keys that move.
 */
async function rekeyBlocks(tx: Transaction): Promise<void> {
  const table = tx.table<BlockRow, string>(BLOCKS_TABLE);
  const keys = await table.toCollection().primaryKeys();
  const moves = blockMoves(await table.toArray(), keys);
  if (moves.size === 0) return;
  // Every entry is read before any is written: one block's new key may be another's old one.
  const changes: ChangeRow[] = [];
  const history: HistoryRow[] = [];
  for (const [old, { key }] of moves) {
    for (const c of await tx.table<ChangeRow, number>('changes').where('recordId').equals(old).toArray())
      if (c.table === 'blocks') changes.push({ ...c, recordId: key });
    for (const h of await tx.table<HistoryRow, number>('history').where('recordId').equals(old).toArray())
      if (h.table === 'blocks') history.push({ ...h, recordId: historyOwnerKey(h, key) });
  }
  await table.bulkDelete([...moves.keys()]);
  await table.bulkPut(
    [...moves.values()].map((m) => m.row),
    [...moves.values()].map((m) => m.key),
  );
  if (changes.length > 0) await tx.table('changes').bulkPut(changes);
  if (history.length > 0) await tx.table('history').bulkPut(history);
}

/** Declares every schema version and its upgrade (never edit a version once released; add one). */
function declareVersions(db: Dexie): void {
  // v1: the first schema.
  db.version(1).stores({
    messages:
      'id, [threadId+inContext+position], [threadId+position], [threadId+hash], [threadId+createdAt], createdAt',
    memories: 'id, hash, [tier+key], userId, agentId, runId, projectId, sessionId, createdAt, updatedAt',
    vectors: 'id',
    history: '++seq, recordId',
    blocks: '[agentId+label], agentId',
    traces: 'id, [sessionId+at]',
    changes: '++seq, recordId',
    meta: 'key',
    terms: '[c+d], *k',
  });
  // v2: blocks keyed by agent and user. IndexedDB cannot change a primary key,
  // so they move to a new table; every existing block stays, as the agent's own
  // (not shared with users: sharing is asked for explicitly).
  db.version(2)
    .stores({ [BLOCKS_TABLE]: ', agentId, userId' })
    .upgrade(upgradeToV2);
  // v3: the old table goes (a table can only be dropped a version after it was read).
  db.version(3).stores({ blocks: null });
  // v4: an agent's own block whose `agentId/label` key reads back more than one way gets its unambiguous key (block-key.ts).
  db.version(4).stores({}).upgrade(rekeyBlocks);
  // v5: indexes no query reads are dropped, which the bulk write paid for in every row: the terms
  // rows' multi-entry term index (keyword search ranks from the in-memory postings, built from the
  // rows by primary key) and the memories' createdAt and updatedAt (nothing walks or looks them up).
  // About 10 of the 16 index entries a short memory wrote (bench/results/REPORT.md, peers).
  db.version(5).stores({
    memories: 'id, hash, [tier+key], userId, agentId, runId, projectId, sessionId',
    terms: '[c+d]',
  });
}

/**
 * v2's upgrade: every block moves to the table keyed by agent and user, as the agent's own;
 * and deletion means forgotten from v2 on, so older tombstones and the history of deleted
 * records lose their text.
 */
async function upgradeToV2(tx: Transaction): Promise<void> {
  const old = (await tx.table('blocks').toArray()) as BlockRow[];
  await tx.table(BLOCKS_TABLE).bulkPut(
    old,
    old.map((row) => blockKey(row.agentId, row.label, undefined)),
  );
  const tombstones = ((await tx.table('memories').toArray()) as MemoryRow[]).filter((m) => m.deletedAt !== undefined);
  if (tombstones.length > 0) await tx.table('memories').bulkPut(tombstones.map(textFreeTombstone));
  const history = (await tx.table('history').toArray()) as HistoryRow[];
  const deleted = new Set(history.filter((h) => h.op === 'delete').map((h) => `${h.table}\u0000${h.recordId}`));
  const scrubbed = history.filter((h) => deleted.has(`${h.table}\u0000${h.recordId}`)).map(textFreeHistory);
  if (scrubbed.length > 0) await tx.table('history').bulkPut(scrubbed);
}

/** The Dexie database of one engram store. */
export class EngramDb extends Dexie {
  messages!: Table<MessageRow, string>;
  memories!: Table<MemoryRow, string>;
  vectors!: Table<VectorRow, string>;
  history!: Table<HistoryRow, number>;
  /** Core memory blocks (table `coreBlocks`), keyed by their record id (an outbound key). */
  blocks: Table<BlockRow, string>;
  traces!: Table<TraceRow, string>;
  changes!: Table<ChangeRow, number>;
  meta!: Table<MetaRow, string>;
  terms!: Table<TermsRow, [string, string]>;

  /** The keys of an encrypted store; undefined for a plain one. */
  readonly sealing: RowSealing | undefined;

  /**
   * @param sealing The keys of a store encrypted at rest (row-sealing.ts); absent for a plain
   *   store, and for a test that reads what is stored.
   */
  constructor(name: string, sealing?: RowSealing) {
    super(name);
    this.sealing = sealing;
    if (sealing !== undefined) this.use(rowSealingMiddleware(sealing));
    declareVersions(this);
    this.blocks = this.table(BLOCKS_TABLE);
  }

  /** Closes the database; an encrypted store's keys are wiped from memory. */
  override close(options?: { disableAutoOpen: boolean }): void {
    super.close(options);
    this.sealing?.cipher.wipe();
  }
}
