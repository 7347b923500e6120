/**
 * What a pull refused, and why. A server is not trusted: a point it serves that
 * does not open with the collection's key, that engram could not have written,
 * that breaks this store's limits, or that would roll a record back to a version
 * older than the one held, is skipped (never applied, never fatal) and counted
 * here; `engram.syncStatus().refused` shows the counts and the latest ones.
 */
import type { PointKind } from './sync-target.js';

/**
 * Why a pulled point was refused:
 * - `unauthenticated`: in an encrypted collection, its seal does not open with the
 *   key and its readable fields (one of them was changed, or the point was forged);
 * - `malformed`: not a point engram writes (shape, types, ids, a plain point in an
 *   encrypted collection, a sealed one in a plain collection);
 * - `over-limit`: its record breaks this store's limits, the same as `add()`'s
 *   (maxContentBytes, id length, vector length and finite numbers);
 * - `rollback`: a version older than the one this store holds, which no honest
 *   server serves (a concurrent edit made here is a conflict, not a refusal);
 * - `unrequested`: a kind this sync did not ask for (messages when `include` has none).
 */
export type RefusalReason = 'unauthenticated' | 'malformed' | 'over-limit' | 'rollback' | 'unrequested';

/** Every refusal reason, in a fixed order. */
export const REFUSAL_REASONS: readonly RefusalReason[] = [
  'unauthenticated',
  'malformed',
  'over-limit',
  'rollback',
  'unrequested',
];

/** One refused point. The detail never holds the record's text. */
export interface SyncRefusal {
  reason: RefusalReason;
  /** The point's id on the server. */
  pointId: string;
  /** What the point claimed to be, when it said. */
  kind?: PointKind;
  detail: string;
  /** When it was refused (epoch ms). */
  at: number;
}

/** Refusals of this store's syncs since it was opened. */
export interface SyncRefusals {
  total: number;
  byReason: Record<RefusalReason, number>;
  /** The latest refusals, oldest first (at most {@link RECENT_REFUSALS}). */
  recent: SyncRefusal[];
}

/** Refusals kept in `recent`. */
export const RECENT_REFUSALS = 50;

/** Counts refusals and keeps the latest. */
export class RefusalLog {
  #total = 0;
  readonly #byReason = Object.fromEntries(REFUSAL_REASONS.map((r) => [r, 0])) as Record<RefusalReason, number>;
  readonly #recent: SyncRefusal[] = [];

  add(refusal: SyncRefusal): void {
    this.#total += 1;
    this.#byReason[refusal.reason] += 1;
    this.#recent.push(refusal);
    if (this.#recent.length > RECENT_REFUSALS) this.#recent.shift();
  }

  snapshot(): SyncRefusals {
    return { total: this.#total, byReason: { ...this.#byReason }, recent: this.#recent.map((r) => ({ ...r })) };
  }
}
