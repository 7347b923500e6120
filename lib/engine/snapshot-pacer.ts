/**
 * When an index cache (vector-state.ts, keyword-state.ts) writes its next
 * snapshot into `meta`. The log stays the source of truth: a snapshot only
 * shortens the replay on the next open, so a crash between snapshots costs time,
 * never data.
 */
import type { EngineStore } from './engine-store.js';

/** The writer has paused when no write of this instance was applied for this long. */
export const IDLE_MS = 50;
/** A snapshot follows the last one after at least this many times the last one's duration. */
const SNAPSHOT_SPACING = 10;

/** What the pacer calls on its cache. */
export interface PacedCache {
  /** Writes the snapshot. */
  snapshot(): Promise<void>;
  /** Checks again whether one is due (the cache's own maybeSnapshot): called when a held-back one's wait is over. */
  maybeSnapshot(): Promise<void>;
}

/** Where a cache stands against its last snapshot. */
export interface SnapshotDebt {
  /** Entries in the cache (the index's vectors, or both corpora's documents). */
  size: number;
  /** Changes applied since the last snapshot; Infinity when there is none yet. */
  unsnapshotted: number;
  /** The last snapshot was dropped (by a deletion): one is due however few changes followed. */
  dropped?: boolean;
}

/**
 * A snapshot is due when max(1000, a tenth of `size`) changes are not in the
 * last one, or it was dropped. It follows the last one after at least
 * SNAPSHOT_SPACING times that one's duration, so snapshots take at most about a
 * tenth of the time while writing goes on (a large store's snapshot costs
 * seconds). While this instance writes (a write under way, or one applied within
 * IDLE_MS), a snapshot of fewer changes than EngineStore.busySnapshotMin, or a
 * dropped one, waits for the pause. A snapshot held back runs once the spacing
 * has passed (and the pause come), from one timer at a time.
 */
export class SnapshotPacer {
  readonly #core: Pick<EngineStore, 'writing' | 'busySnapshotMin'>;
  readonly #cache: PacedCache;
  /** How long the last snapshot took and when it ended (performance.now()). */
  #cost = 0;
  #ended = -Infinity;
  /** When (performance.now()) a write of this instance was last applied to the cache. */
  #ownApplied = -Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(core: Pick<EngineStore, 'writing' | 'busySnapshotMin'>, cache: PacedCache) {
    this.#core = core;
    this.#cache = cache;
  }

  /** A write of this instance was applied to the cache now. */
  ownApplied(): void {
    this.#ownApplied = performance.now();
  }

  /** A snapshot begun at `started` (performance.now()) has ended: the spacing counts from now. */
  ended(started: number): void {
    this.#ended = performance.now();
    this.#cost = this.#ended - started;
  }

  /**
   * Writes the cache's snapshot now when one is due and may run; when it is due and must wait,
   * asks the cache again (its maybeSnapshot) once the wait is over.
   */
  async pace(debt: SnapshotDebt): Promise<void> {
    const dropped = debt.dropped === true;
    if (!dropped && debt.unsnapshotted < Math.max(1000, debt.size / 10)) return;
    const wait = this.#wait(dropped || debt.unsnapshotted < this.#core.busySnapshotMin(debt.size));
    if (wait <= 0) {
      await this.#cache.snapshot();
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#cache.maybeSnapshot().catch(() => undefined);
    }, wait);
  }

  /** Cancels a held-back snapshot's timer. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** How long a due snapshot waits: the spacing, and at least IDLE_MS while this instance writes if it `waitsForPause`. */
  #wait(waitsForPause: boolean): number {
    const spacing = this.#ended + SNAPSHOT_SPACING * this.#cost - performance.now();
    const writing = this.#core.writing || performance.now() - this.#ownApplied < IDLE_MS;
    return writing && waitsForPause ? Math.max(IDLE_MS, spacing) : spacing;
  }
}
