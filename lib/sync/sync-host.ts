/**
 * What sync needs from the engine, and nothing more: the device id, the
 * embedder's identity, the change log, the records it names, the one write
 * path (to apply what was pulled) and a place to keep its cursors. The engine
 * hands sync an implementation (`StoreHost`); sync never reaches further in.
 */
import type { SyncRecord } from './point-codec.js';
import type { RefusalReason } from './refusals.js';
import type { PointKind, PullCursors } from './sync-target.js';

/** One change-log entry, as sync sees it. */
export interface ChangeEntry {
  seq: number;
  /** undefined for tables that never sync (reasoning traces). */
  kind: PointKind | undefined;
  /** The record id: memory id, message id, or `agentId/label` of a block. */
  rid: string;
  /** When the change was made (epoch ms). */
  at: number;
}

/** What one application of pulled records did. */
export interface ApplyResult {
  /** Records written (added or changed). */
  downloaded: number;
  /** Records deleted. */
  deleted: number;
  /** Records changed on both sides since the last sync; the loser is kept in history. */
  conflicts: number;
  /** Records not applied: they break the store's limits, or would roll a record back. */
  refused: ApplyRefusal[];
}

/** A pulled record apply() refused. */
export interface ApplyRefusal {
  /** Its position in the records given to apply(). */
  index: number;
  reason: RefusalReason;
  detail: string;
}

/** Sync's bookkeeping for one collection, kept in the store's `meta` table. */
export interface SyncState {
  /** Every change-log entry up to this seq is on the server. */
  pushedSeq: number;
  /** Kinds whose first push (every record, not just the change log) finished. */
  seeded: PointKind[];
  /** The last push counter this device used (each pushed point takes the next one). */
  pushCounter: number;
  /**
   * How far this device has pulled, per origin device, for groups of kinds pulled
   * together (a kind added to `include` later starts a group of its own, from the start).
   */
  pull: { kinds: PointKind[]; cursors: PullCursors }[];
}

/** The engine, as sync sees it. */
export interface SyncHost {
  /** This store's device id: the origin of what it writes. */
  readonly deviceId: string;
  /** The store's `maxContentBytes`: what it accepts bounds what a pull reads. */
  readonly maxContentBytes: number;
  /** The embedder's id and dimension (loads it when needed). */
  embedder(): Promise<{ id: string; dimensions: number }>;
  /** The newest change-log seq (0 when empty). */
  lastSeq(): Promise<number>;
  /** Change-log entries after `seq`, oldest first. */
  changesAfter(seq: number, limit: number): Promise<ChangeEntry[]>;
  /**
   * The current local version of records named by changes: live records, or
   * tombstones for records deleted or gone. With `skipEchoes`, records whose
   * current version came from another device (pulled, so already on the server) are left out.
   */
  records(entries: readonly ChangeEntry[], skipEchoes: boolean): Promise<SyncRecord[]>;
  /** Every live record of `kinds`, a page at a time after `after` (a position the previous page returned). */
  allRecords(
    kinds: readonly PointKind[],
    after: string | undefined,
    limit: number,
  ): Promise<{ records: SyncRecord[]; next: string | undefined }>;
  /**
   * Applies pulled records through the one write path, last writer wins; a record
   * with an entry after `pushedSeq` in the change log counts as changed here too.
   * A record is first held to the store's limits, as add() holds its input (shape,
   * sizes, ids, the vector's length and numbers for `embedder`), and refused when it
   * breaks them, or when it is older than the version held with nothing pending here.
   */
  apply(
    records: readonly SyncRecord[],
    embedder: { id: string; dimensions: number },
    pushedSeq: number,
  ): Promise<ApplyResult>;
  /** Reads sync's state for one collection. */
  loadState(key: string): Promise<SyncState | undefined>;
  /** Saves sync's state for one collection (and the change-log position compaction must keep). */
  saveState(key: string, state: SyncState): Promise<void>;
}
