/**
 * The exact in-memory twin of `QdrantTarget`: the same semantics (conditional
 * upsert, stamp order, id order within a stamp, insert-only header) without a
 * network. For unit tests and for comparing against the real target.
 */
import { SyncError } from '../errors.js';
import { headerPayload, readHeaderPayload } from './header-codec.js';
import {
  FIELD,
  HEADER_POINT_ID,
  type CollectionHeader,
  type PointKind,
  type PullCursors,
  type SyncPoint,
  type SyncTarget,
} from './sync-target.js';

function copy(point: SyncPoint): SyncPoint {
  return structuredClone(point);
}

function stampOf(point: SyncPoint): number {
  const stamp = point.payload[FIELD.stamp];
  return typeof stamp === 'number' ? stamp : Number.NaN;
}

/** Whether `point` replaces the one stored: none, an older one, or the same stamp from the same origin (a retry). */
function replaces(point: SyncPoint, stored: SyncPoint | undefined): boolean {
  if (stored === undefined) return true;
  const older = stampOf(stored) < stampOf(point);
  const retry = stampOf(stored) === stampOf(point) && stored.payload[FIELD.origin] === point.payload[FIELD.origin];
  return older || retry;
}

/**
 * A {@link SyncTarget} held in memory.
 * @example
 * const target = new MemoryTarget()
 */
export class MemoryTarget implements SyncTarget {
  #dimensions: number | undefined;
  readonly #points = new Map<string, SyncPoint>();
  /** Requests served, by method: lets tests check that work follows the changes. */
  readonly calls = new Map<string, number>();

  #count(method: string): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
  }

  ensureCollection(dimensions: number): Promise<{ created: boolean }> {
    this.#count('ensureCollection');
    if (this.#dimensions === undefined) {
      this.#dimensions = dimensions;
      return Promise.resolve({ created: true });
    }
    if (this.#dimensions !== dimensions) {
      return Promise.reject(
        new SyncError(`collection holds vectors of ${this.#dimensions} dimensions, engram needs ${dimensions}`, {
          reason: 'incompatible',
        }),
      );
    }
    return Promise.resolve({ created: false });
  }

  readHeader(): Promise<CollectionHeader | undefined> {
    this.#count('readHeader');
    const point = this.#points.get(HEADER_POINT_ID);
    return Promise.resolve(point === undefined ? undefined : readHeaderPayload(point.payload));
  }

  writeHeader(header: CollectionHeader): Promise<CollectionHeader> {
    this.#count('writeHeader');
    if (!this.#points.has(HEADER_POINT_ID))
      this.#points.set(HEADER_POINT_ID, { id: HEADER_POINT_ID, payload: headerPayload(header) });
    return Promise.resolve(readHeaderPayload(this.#points.get(HEADER_POINT_ID)!.payload));
  }

  upsert(points: readonly SyncPoint[]): Promise<void> {
    this.#count('upsert');
    const mismatch = this.#dimensionMismatch(points);
    if (mismatch !== undefined) return Promise.reject(mismatch);
    for (const point of points) {
      if (replaces(point, this.#points.get(point.id))) this.#points.set(point.id, copy(point));
    }
    return Promise.resolve();
  }

  /** The refusal of the first point whose vector is not of the collection's dimension, if any. */
  #dimensionMismatch(points: readonly SyncPoint[]): SyncError | undefined {
    const wrong = points.find((p) => p.vector !== undefined && p.vector.length !== this.#dimensions);
    if (wrong?.vector === undefined) return undefined;
    return new SyncError(
      `upsert: vector of ${wrong.vector.length} dimensions, the collection has ${this.#dimensions}`,
      {
        reason: 'rejected',
      },
    );
  }

  scrollSince(cursors: PullCursors, kinds: readonly PointKind[], limit: number): Promise<SyncPoint[]> {
    this.#count('scroll');
    const seqOf = (p: SyncPoint): number => Number(p.payload[FIELD.pushSeq]);
    const out = [...this.#points.values()].filter((p) => {
      const kind = p.payload[FIELD.kind];
      if (typeof kind !== 'string' || !(kinds as readonly string[]).includes(kind)) return false;
      const origin = p.payload[FIELD.origin];
      if (typeof origin !== 'string') return false;
      const seen = Object.hasOwn(cursors, origin) ? cursors[origin] : undefined;
      return seen === undefined || seqOf(p) > seen;
    });
    out.sort((a, b) => seqOf(a) - seqOf(b) || (a.id < b.id ? -1 : 1));
    return Promise.resolve(out.slice(0, limit).map(copy));
  }

  maxPushSeq(origin: string): Promise<number> {
    this.#count('scroll');
    let max = 0;
    for (const p of this.#points.values())
      if (p.payload[FIELD.origin] === origin) max = Math.max(max, Number(p.payload[FIELD.pushSeq]));
    return Promise.resolve(max);
  }

  retrieve(ids: readonly string[]): Promise<SyncPoint[]> {
    this.#count('retrieve');
    return Promise.resolve(ids.flatMap((id) => (this.#points.has(id) ? [copy(this.#points.get(id)!)] : [])));
  }

  delete(ids: readonly string[]): Promise<void> {
    this.#count('delete');
    for (const id of ids) this.#points.delete(id);
    return Promise.resolve();
  }

  count(): Promise<number> {
    this.#count('count');
    return Promise.resolve([...this.#points.keys()].filter((id) => id !== HEADER_POINT_ID).length);
  }

  /** Every stored point (header included), for tests that inspect what the server holds. */
  stored(): SyncPoint[] {
    return [...this.#points.values()].map(copy);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
