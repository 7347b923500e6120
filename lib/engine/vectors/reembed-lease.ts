/**
 * One re-embed per store at a time, across instances (tabs, workers, Engrams on the
 * same name). Two runs at once would undo each other's staging: each overwrites the
 * other's staged vectors, and the switch of one finds rows staged for the other model.
 * A run takes a lease, a `meta` row naming its owner, the model it moves to and when
 * the lease runs out, written in a transaction that first reads the row: a live lease
 * of another owner refuses the run with ReembedBusyError (the caller decides whether
 * to retry; a run that waited could hold a tab's model in memory for minutes without
 * progress). The running run renews its lease every LEASE_MS / 3, and every staging
 * and the switch check it in their own transactions, so a run whose lease was taken
 * over (it stalled past the expiry, a frozen background tab) stops before it writes.
 * A run that ends (done, stopped, failed, its engram closed) releases the lease; one that
 * dies with its tab leaves it to expire.
 * Expiry is on the store's clock (`core.now()`, the clock tests inject).
 */
import { ReembedBusyError } from '../../errors.js';
import type { EngramDb } from '../../store/schema.js';
import { storeError } from '../../store/store-error.js';
import { newId } from '../../util/id.js';
import type { EngineStore } from '../engine-store.js';

/** The `meta` key of the lease. */
export const REEMBED_LEASE_KEY = 'reembed.lease';
/** How long a lease holds without renewal: a crashed run blocks the next one at most this long. */
export const LEASE_MS = 30_000;

/** The lease row's value. */
interface LeaseValue {
  owner: string;
  target: string;
  expiresAt: number;
}

/** The lease's value when `value` is a well-formed one (a damaged row counts as none). */
function leaseOf(value: unknown): LeaseValue | undefined {
  const v = value as Partial<LeaseValue> | null;
  return typeof v === 'object' &&
    v !== null &&
    typeof v.owner === 'string' &&
    typeof v.target === 'string' &&
    typeof v.expiresAt === 'number'
    ? { owner: v.owner, target: v.target, expiresAt: v.expiresAt }
    : undefined;
}

/** This run's lease was taken over by another run (it stalled past its expiry): it stops, writing nothing more. */
export class LeaseLost extends ReembedBusyError {}

/** A re-embed's hold on the store; see the file's comment. */
export class ReembedLease {
  readonly #core: EngineStore;
  readonly #owner = newId();
  readonly #target: string;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Set when a renewal found another owner's lease: the run's next check throws it. */
  #lost: LeaseLost | undefined;

  private constructor(core: EngineStore, target: string) {
    this.#core = core;
    this.#target = target;
  }

  /** Takes the store's lease for a run to `target`, or rejects with ReembedBusyError while another run holds it. */
  static async acquire(core: EngineStore, target: string): Promise<ReembedLease> {
    const lease = new ReembedLease(core, target);
    const { db } = core;
    let held: LeaseValue | undefined;
    try {
      held = await db.transaction('rw', db.meta, async () => {
        const other = leaseOf((await db.meta.get(REEMBED_LEASE_KEY))?.value);
        if (other !== undefined && other.expiresAt > core.now()) return other;
        await lease.#put(db);
        return undefined;
      });
    } catch (e) {
      throw storeError(e, 'taking the re-embed lease');
    }
    if (held !== undefined) throw new ReembedBusyError(held.target, held.expiresAt);
    lease.#timer = setInterval(() => {
      lease.#renew().catch(() => undefined);
    }, LEASE_MS / 3);
    return lease;
  }

  #put(db: EngramDb): Promise<unknown> {
    const value: LeaseValue = { owner: this.#owner, target: this.#target, expiresAt: this.#core.now() + LEASE_MS };
    return db.meta.put({ key: REEMBED_LEASE_KEY, value });
  }

  async #renew(): Promise<void> {
    if (this.#lost !== undefined || this.#core.closed) return;
    const { db } = this.#core;
    await db.transaction('rw', db.meta, async () => {
      if (this.#lostTo(await db.meta.get(REEMBED_LEASE_KEY)) === undefined) await this.#put(db);
    });
  }

  /** The other run's lease when the row is no longer this run's, remembered as lost. */
  #lostTo(row: { value: unknown } | undefined): LeaseLost | undefined {
    if (this.#lost !== undefined) return this.#lost;
    const now = leaseOf(row?.value);
    if (now?.owner === this.#owner) return undefined;
    // Gone (another run took it over and finished) or another owner's.
    this.#lost = new LeaseLost(now?.target ?? this.#target, now?.expiresAt ?? this.#core.now());
    return this.#lost;
  }

  /** True once a renewal or a check found the lease taken over (known without reading the store). */
  get lost(): boolean {
    return this.#lost !== undefined;
  }

  /**
   * Throws LeaseLost when the lease is no longer this run's. Call it inside the transaction
   * that writes (it needs `meta` in scope), so nothing lands after a takeover.
   */
  async check(): Promise<void> {
    const lost = this.#lostTo(await this.#core.db.meta.get(REEMBED_LEASE_KEY));
    if (lost !== undefined) throw lost;
  }

  /**
   * Stops renewing and deletes the lease if it is still this run's. A run its engram's close()
   * stopped releases it too while the database is still open (close() closes it last); if not,
   * or if the tab died, the lease expires by itself LEASE_MS after its last renewal.
   */
  async release(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    try {
      const { db } = this.#core;
      await db.transaction('rw', db.meta, async () => {
        if (leaseOf((await db.meta.get(REEMBED_LEASE_KEY))?.value)?.owner === this.#owner)
          await db.meta.delete(REEMBED_LEASE_KEY);
      });
    } catch {
      // The database is closed or failing: the lease expires by itself.
    }
  }
}
