/**
 * The `engram/sync` subpath: the remote side of sync for those who want to hold
 * it themselves (a `QdrantTarget` with its own options, the in-memory twin for
 * tests, a target of their own behind the `SyncTarget` seam). `engram.sync()`
 * needs none of this; it loads the Qdrant client on first use.
 *
 * lib/sync owns sync: the SyncTarget seam (only qdrant-target.ts imports the
 * Qdrant client), end-to-end encryption, and the push/pull run over the store's
 * one write path. It must not import the engine, the faces or the facade: the
 * facade hands it a `SyncEngineAccess`.
 */
export { QdrantTarget } from './qdrant-target.js';
export type { QdrantTargetOptions } from './qdrant-target.js';
export { MemoryTarget } from './memory-target.js';
export { FIELD, HEADER_POINT_ID, POINT_KINDS, VECTOR_NAME } from './sync-target.js';
export type {
  CollectionHeader,
  Payload,
  PointKind,
  PullCursors,
  ScrollOptions,
  SyncPoint,
  SyncTarget,
  TargetCallOptions,
} from './sync-target.js';
export { DEFAULT_KDF_ITERATIONS, MAX_KDF_ITERATIONS, MIN_KDF_ITERATIONS } from './encryption.js';
export { REFUSAL_REASONS } from './refusals.js';
export type { RefusalReason, SyncRefusal, SyncRefusals } from './refusals.js';
export type { EncryptionOptions } from './encryption.js';
export { SYNC_PUSHED_SEQ_KEY, SYNC_STATE_KEY } from './store-host.js';
export type { AutoSyncOptions, SyncInclude, SyncOptions } from './sync-options.js';
export type { SyncProgress, SyncResult } from './sync-run.js';
export type { SyncStatus } from './sync-controller.js';
export type { SyncState } from './sync-host.js';
export { DEFAULT_RETRY } from './retry.js';
export type { RetryPolicy } from './retry.js';
