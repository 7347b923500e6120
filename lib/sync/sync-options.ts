/**
 * The options of `engram.sync()` and `engram.startAutoSync()`, and their check
 * at the door: every field is validated once, here, with a ValidationError
 * naming it.
 */
import { ValidationError } from '../errors.js';
import {
  abortSignal,
  checkedByCaller,
  checkOptions,
  func,
  int,
  nested,
  optional,
  withDefault,
  type Check,
  type Checked,
  type OptionsSpec,
} from '../util/options.js';
import { requireId, requireInt } from '../util/validate.js';
import {
  DEFAULT_KDF_ITERATIONS,
  MAX_KDF_ITERATIONS,
  MIN_KDF_ITERATIONS,
  parseEncryption,
  type EncryptionOptions,
} from './encryption.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
import type { SyncProgress, SyncResult } from './sync-run.js';
import type { PointKind, SyncTarget } from './sync-target.js';

/** What a sync can carry besides nothing: the default is memories and core memory blocks. */
export type SyncInclude = 'memories' | 'blocks' | 'messages';

const INCLUDE_KIND: Record<SyncInclude, PointKind> = { memories: 'memory', blocks: 'block', messages: 'message' };

/** Options of `engram.sync()`. */
export interface SyncOptions {
  /**
   * Base URL of the Qdrant REST API (one node, or any node of a cluster).
   * Required unless `target` is given.
   * @example 'http://127.0.0.1:6333'
   */
  url?: string;
  /**
   * Qdrant API key (sent as the `api-key` header; use https when you set one).
   * @example 'my-secret-key'
   */
  apiKey?: string;
  /**
   * Collection name. One collection per person (or team) whose devices share memory.
   * @default 'engram'
   */
  collection?: string;
  /**
   * What to sync besides long-term memories and core memory blocks.
   * @default ['memories', 'blocks']
   * @example ['memories', 'blocks', 'messages']
   */
  include?: readonly SyncInclude[];
  /**
   * End-to-end encryption: text and metadata are sealed on the device before they
   * leave it. Fixed per collection when it is created.
   * @example { passphrase: 'correct horse battery staple' }
   */
  encryption?: EncryptionOptions;
  /** Stops the sync; cursors keep what was done, the next sync does the rest. */
  signal?: AbortSignal;
  /** Progress per phase (connect, pull, push). */
  onProgress?: (progress: SyncProgress) => void;
  /**
   * Milliseconds before one request is given up (then retried).
   * @default 30000
   */
  timeoutMs?: number;
  /**
   * Points per upsert request, 1 to 256.
   * @default 128
   */
  batchSize?: number;
  /**
   * Another remote side instead of a Qdrant URL (an in-memory `MemoryTarget` in tests).
   * @example new MemoryTarget()
   */
  target?: SyncTarget;
  /**
   * How failed requests are retried within one sync.
   * @default { attempts: 4, baseDelayMs: 250, maxDelayMs: 10000 }
   */
  retry?: Partial<RetryPolicy>;
  /**
   * PBKDF2 iterations when this sync creates an encrypted collection, 1000 to
   * 10,000,000. Lower only in tests.
   * @default 600000
   */
  kdfIterations?: number;
}

/** Options of `engram.startAutoSync()`: a sync's options plus its rhythm. */
export interface AutoSyncOptions extends Omit<SyncOptions, 'signal' | 'onProgress'> {
  /**
   * Milliseconds between syncs.
   * @example 60000
   */
  intervalMs: number;
  /**
   * Longest pause after repeated failures: the pause doubles per failure (while the
   * server is unreachable, say) up to this.
   * @default 300000
   */
  maxBackoffMs?: number;
  /** Called after each successful sync. */
  onSync?: (result: SyncResult) => void;
  /** Called after each failed sync (auto-sync keeps going after transient failures). */
  onError?: (error: unknown) => void;
}

/** A sync's options after the door. */
export interface ParsedSyncOptions {
  url: string | undefined;
  apiKey: string | undefined;
  collection: string;
  kinds: PointKind[];
  encryption: EncryptionOptions | undefined;
  signal: AbortSignal | undefined;
  onProgress: ((progress: SyncProgress) => void) | undefined;
  timeoutMs: number;
  batchSize: number;
  target: SyncTarget | undefined;
  retry: RetryPolicy;
  kdfIterations: number;
}

/** Qdrant collection names: letters, digits, `_` and `-` (a safe subset of what Qdrant allows). */
const COLLECTION_NAME = /^[A-Za-z0-9_-]{1,255}$/;

const RETRY_SPEC = {
  attempts: withDefault(int(1, 20), DEFAULT_RETRY.attempts),
  baseDelayMs: withDefault(int(0, 600_000), DEFAULT_RETRY.baseDelayMs),
  maxDelayMs: withDefault(int(0, 3_600_000), DEFAULT_RETRY.maxDelayMs),
} satisfies OptionsSpec<RetryPolicy>;

const target: Check<SyncTarget> = (field, value) => {
  if (typeof value !== 'object' || value === null || typeof (value as { upsert?: unknown }).upsert !== 'function')
    throw new ValidationError(field, 'must be a SyncTarget');
  return value as SyncTarget;
};

const url: Check<string> = (field, value) => {
  if (typeof value !== 'string' || !/^https?:\/\/[^\s]+$/.test(value) || !URL.canParse(value))
    throw new ValidationError(field, 'must be an http(s) URL');
  return value;
};

const apiKey: Check<string> = (field, value) => {
  if (typeof value !== 'string' || value === '') throw new ValidationError(field, 'must be a non-empty string');
  return value;
};

const collection: Check<string> = (field, value) => {
  const name = requireId(field, value);
  if (!COLLECTION_NAME.test(name)) throw new ValidationError(field, 'may hold letters, digits, _ and - only');
  return name;
};

/** An `include` list: known entries only. */
const include: Check<SyncInclude[]> = (field, value) => {
  if (!Array.isArray(value) || value.length === 0)
    throw new ValidationError(field, "must be a non-empty array of 'memories', 'blocks', 'messages'");
  for (const item of value as unknown[]) {
    if (typeof item !== 'string' || !(item in INCLUDE_KIND))
      throw new ValidationError(field, `unknown entry ${JSON.stringify(item)}; use 'memories', 'blocks' or 'messages'`);
  }
  return value as SyncInclude[];
};

/**
 * The checks of what a sync and an auto-sync share, in the order they run: `target`
 * before `url` (which of the two is given is checked after, by `commonOf`).
 */
const COMMON_SPEC = {
  target: optional(target),
  url: optional(url),
  apiKey: optional(apiKey),
  collection: withDefault(collection, 'engram'),
  include: withDefault(include, ['memories', 'blocks']),
  encryption: (field: string, value: unknown) => parseEncryption(value, field),
  timeoutMs: withDefault(int(1, 3_600_000), 30_000),
  batchSize: withDefault(int(1, 256), 128),
  retry: withDefault(nested(RETRY_SPEC), DEFAULT_RETRY),
  kdfIterations: withDefault(int(MIN_KDF_ITERATIONS, MAX_KDF_ITERATIONS), DEFAULT_KDF_ITERATIONS),
} satisfies OptionsSpec<Omit<SyncOptions, 'signal' | 'onProgress'>>;

const SYNC_SPEC = {
  ...COMMON_SPEC,
  signal: optional(abortSignal),
  onProgress: optional(func<(progress: SyncProgress) => void>()),
} satisfies OptionsSpec<SyncOptions>;

const AUTO_SYNC_SPEC = {
  ...COMMON_SPEC,
  intervalMs: int(10, 86_400_000),
  // At least intervalMs: checked by parseAutoSyncOptions.
  maxBackoffMs: checkedByCaller<number>(),
  onSync: optional(func<(result: SyncResult) => void>()),
  onError: optional(func<(error: unknown) => void>()),
} satisfies OptionsSpec<AutoSyncOptions>;

/** A sync's options from the checked common fields: exactly one of url and target. */
function commonOf(o: Checked<typeof COMMON_SPEC>): ParsedSyncOptions {
  if (o.target === undefined && o.url === undefined)
    throw new ValidationError('options.url', 'is required (the Qdrant REST URL, e.g. http://127.0.0.1:6333)');
  if (o.target !== undefined && o.url !== undefined)
    throw new ValidationError('options.url', 'give either url or target, not both');
  return {
    url: o.url,
    apiKey: o.apiKey,
    collection: o.collection,
    kinds: [...new Set(o.include.map((item) => INCLUDE_KIND[item]))],
    encryption: o.encryption,
    signal: undefined,
    onProgress: undefined,
    timeoutMs: o.timeoutMs,
    batchSize: o.batchSize,
    target: o.target,
    retry: o.retry,
    kdfIterations: o.kdfIterations,
  };
}

/** Checks the options of a sync. */
export function parseSyncOptions(options: unknown): ParsedSyncOptions {
  const o = checkOptions('options', options, SYNC_SPEC, 'must be an object with a url');
  return { ...commonOf(o), signal: o.signal, onProgress: o.onProgress };
}

/** An auto-sync's options after the door. */
export interface ParsedAutoSyncOptions {
  sync: ParsedSyncOptions;
  intervalMs: number;
  maxBackoffMs: number;
  onSync: ((result: SyncResult) => void) | undefined;
  onError: ((error: unknown) => void) | undefined;
}

/** Checks the options of an auto-sync. */
export function parseAutoSyncOptions(options: unknown): ParsedAutoSyncOptions {
  const o = checkOptions('options', options, AUTO_SYNC_SPEC, 'must be an object with a url and intervalMs');
  const { intervalMs } = o;
  return {
    sync: commonOf(o),
    intervalMs,
    // The longest pause is never shorter than the interval.
    maxBackoffMs:
      o.maxBackoffMs === undefined
        ? Math.max(300_000, intervalMs)
        : requireInt('options.maxBackoffMs', o.maxBackoffMs, intervalMs, 86_400_000),
    onSync: o.onSync,
    onError: o.onError,
  };
}
