/**
 * The remote side of sync, as a seam: `QdrantTarget` talks to a Qdrant server
 * over REST, `MemoryTarget` is its exact in-memory twin for unit tests. The
 * sync logic (push, pull, conflicts) depends on this interface only, never on
 * the Qdrant client.
 */
import type { Json } from '../store/rows.js';

/** What a point stands for. */
export type PointKind = 'memory' | 'block' | 'message';

/** Every point kind, in a fixed order. */
export const POINT_KINDS: readonly PointKind[] = ['memory', 'block', 'message'];

/** Payload field names the target filters and orders on; they stay plain text even when encrypted. */
export const FIELD = {
  /** What the point stands for: 'memory', 'block', 'message' (or 'header' for the collection header). */
  kind: 'kind',
  /** The last-writer-wins order key: updatedAt × 1024 + a rank of the origin device. */
  stamp: 'stamp',
  /** The device that wrote this version. */
  origin: 'origin',
  /**
   * The origin device's push counter when it pushed this version. Pulls follow each
   * device's counter, not the clocks, so a version written offline and pushed later
   * is still seen by devices that pulled newer ones in the meantime.
   */
  pushSeq: 'pushSeq',
} as const;

/** The name of the one vector a point may carry (a named vector, so points without one are allowed). */
export const VECTOR_NAME = 'text';

/**
 * The id of the reserved point holding the collection header (embedder, encryption
 * salt and key check). No memory id maps to it: `idToUuid` of a ULID never is all zeros but one.
 */
export const HEADER_POINT_ID = '00000000-0000-0000-0000-000000000001';

/** A JSON object, as stored in a point's payload. */
export type Payload = Record<string, Json>;

/** One point: a UUID, an optional vector and a payload with at least `kind`, `stamp` and `origin`. */
export interface SyncPoint {
  id: string;
  vector?: number[];
  payload: Payload;
}

/** The collection header: what every device must agree on before it reads or writes points. */
export interface CollectionHeader {
  /**
   * Format of the points in this collection: 1 for a plain collection (and for an
   * encrypted one made before engram authenticated point metadata, which engram now
   * refuses), 2 for an end-to-end encrypted one (see point-codec.ts).
   */
  format: 1 | 2;
  /** Id of the embedder that made the vectors. */
  embedderId: string;
  dimensions: number;
  /** Present when the collection is end-to-end encrypted. */
  encryption?: {
    kdf: 'PBKDF2-SHA256';
    iterations: number;
    /** base64 */
    salt: string;
    /** base64: a known text encrypted with the key, to tell a wrong passphrase apart. */
    check: string;
    encryptVectors: boolean;
  };
}

/** How far a device has pulled: for each origin device, the last push counter seen. */
export type PullCursors = Readonly<Record<string, number>>;

/** Per-call options. */
export interface TargetCallOptions {
  signal?: AbortSignal | undefined;
}

/** Options of a scroll. */
export interface ScrollOptions extends TargetCallOptions {
  /**
   * Most bytes the answer may have. A larger one is not read to its end: the call
   * fails with a SyncError whose reason is 'too-large'.
   */
  maxBytes?: number;
}

/**
 * The remote side of sync. Every method either succeeds or throws a `SyncError`
 * whose `reason` tells a transient failure from a permanent one.
 */
export interface SyncTarget {
  /**
   * Creates the collection (a named vector of `dimensions`, cosine distance) and the
   * payload indexes pulling needs, when missing. Throws a `SyncError` with reason
   * 'incompatible' when the collection exists with another vector size.
   */
  ensureCollection(dimensions: number, options?: TargetCallOptions): Promise<{ created: boolean }>;
  /** The collection header, or undefined when none was written yet. */
  readHeader(options?: TargetCallOptions): Promise<CollectionHeader | undefined>;
  /** Writes the header unless one exists (insert only); returns the header that is stored. */
  writeHeader(header: CollectionHeader, options?: TargetCallOptions): Promise<CollectionHeader>;
  /**
   * Writes points in one request. A point that exists is replaced only when the
   * stored one has a smaller stamp, or the same stamp from the same origin: an
   * older version never overwrites a newer one.
   */
  upsert(points: readonly SyncPoint[], options?: TargetCallOptions): Promise<void>;
  /**
   * Up to `limit` points of `kinds` pushed after `cursors` (a point of a known origin
   * with a larger push counter, or any point of an origin not in `cursors`), in push
   * counter order. Reading every page until one comes back short misses no point.
   */
  scrollSince(
    cursors: PullCursors,
    kinds: readonly PointKind[],
    limit: number,
    options?: ScrollOptions,
  ): Promise<SyncPoint[]>;
  /** The largest push counter of `origin` on the server (0 when it has pushed nothing). */
  maxPushSeq(origin: string, options?: TargetCallOptions): Promise<number>;
  /** The points with these ids that exist. */
  retrieve(ids: readonly string[], options?: TargetCallOptions): Promise<SyncPoint[]>;
  /** Removes points by id (absent ids are ignored). */
  delete(ids: readonly string[], options?: TargetCallOptions): Promise<void>;
  /** How many points (header excluded). */
  count(options?: TargetCallOptions): Promise<number>;
  /** Frees connections. Idempotent. */
  close(): Promise<void>;
}
