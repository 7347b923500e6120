/**
 * The options of `engram.sync()` and `engram.startAutoSync()`, and their check
 * at the door: every field is validated once, here, with a ValidationError
 * naming it.
 */
import { ValidationError } from '../errors.js';
import { isPlainObject, requireId, requireInt, requireOptions } from '../util/validate.js';
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

const SYNC_KEYS = [
  'url',
  'apiKey',
  'collection',
  'include',
  'encryption',
  'signal',
  'onProgress',
  'timeoutMs',
  'batchSize',
  'target',
  'retry',
  'kdfIterations',
] as const;
const AUTO_KEYS = [
  ...SYNC_KEYS.filter((k) => k !== 'signal' && k !== 'onProgress'),
  'intervalMs',
  'maxBackoffMs',
  'onSync',
  'onError',
] as const;

/** Qdrant collection names: letters, digits, `_` and `-` (a safe subset of what Qdrant allows). */
const COLLECTION_NAME = /^[A-Za-z0-9_-]{1,255}$/;

function checkFunction(field: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') throw new ValidationError(field, 'must be a function');
}

function parseRetry(value: unknown): RetryPolicy {
  if (value === undefined) return DEFAULT_RETRY;
  requireOptions('options.retry', value, ['attempts', 'baseDelayMs', 'maxDelayMs']);
  return {
    attempts:
      value['attempts'] === undefined
        ? DEFAULT_RETRY.attempts
        : requireInt('options.retry.attempts', value['attempts'], 1, 20),
    baseDelayMs:
      value['baseDelayMs'] === undefined
        ? DEFAULT_RETRY.baseDelayMs
        : requireInt('options.retry.baseDelayMs', value['baseDelayMs'], 0, 600_000),
    maxDelayMs:
      value['maxDelayMs'] === undefined
        ? DEFAULT_RETRY.maxDelayMs
        : requireInt('options.retry.maxDelayMs', value['maxDelayMs'], 0, 3_600_000),
  };
}

function parseCommon(o: Record<string, unknown>): ParsedSyncOptions {
  const target = o['target'];
  if (target !== undefined && !isPlainObject(target) && typeof target !== 'object')
    throw new ValidationError('options.target', 'must be a SyncTarget');
  if (target !== undefined && typeof (target as { upsert?: unknown }).upsert !== 'function')
    throw new ValidationError('options.target', 'must be a SyncTarget');
  const url = o['url'];
  if (target === undefined && url === undefined)
    throw new ValidationError('options.url', 'is required (the Qdrant REST URL, e.g. http://127.0.0.1:6333)');
  if (target !== undefined && url !== undefined)
    throw new ValidationError('options.url', 'give either url or target, not both');
  if (url !== undefined && (typeof url !== 'string' || !/^https?:\/\/[^\s]+$/.test(url) || !URL.canParse(url)))
    throw new ValidationError('options.url', 'must be an http(s) URL');
  const apiKey = o['apiKey'];
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey === ''))
    throw new ValidationError('options.apiKey', 'must be a non-empty string');
  const collection = o['collection'] === undefined ? 'engram' : requireId('options.collection', o['collection']);
  if (!COLLECTION_NAME.test(collection))
    throw new ValidationError('options.collection', 'may hold letters, digits, _ and - only');
  const include = o['include'] ?? ['memories', 'blocks'];
  if (!Array.isArray(include) || include.length === 0)
    throw new ValidationError('options.include', "must be a non-empty array of 'memories', 'blocks', 'messages'");
  const kinds: PointKind[] = [];
  for (const item of include as unknown[]) {
    if (typeof item !== 'string' || !(item in INCLUDE_KIND))
      throw new ValidationError(
        'options.include',
        `unknown entry ${JSON.stringify(item)}; use 'memories', 'blocks' or 'messages'`,
      );
    const kind = INCLUDE_KIND[item as SyncInclude];
    if (!kinds.includes(kind)) kinds.push(kind);
  }
  return {
    url,
    apiKey,
    collection,
    kinds,
    encryption: parseEncryption(o['encryption'], 'options.encryption'),
    signal: undefined,
    onProgress: undefined,
    timeoutMs: o['timeoutMs'] === undefined ? 30_000 : requireInt('options.timeoutMs', o['timeoutMs'], 1, 3_600_000),
    batchSize: o['batchSize'] === undefined ? 128 : requireInt('options.batchSize', o['batchSize'], 1, 256),
    target: target as SyncTarget | undefined,
    retry: parseRetry(o['retry']),
    kdfIterations:
      o['kdfIterations'] === undefined
        ? DEFAULT_KDF_ITERATIONS
        : requireInt('options.kdfIterations', o['kdfIterations'], MIN_KDF_ITERATIONS, MAX_KDF_ITERATIONS),
  };
}

/** Checks the options of a sync. */
export function parseSyncOptions(options: unknown): ParsedSyncOptions {
  requireOptions('options', options, SYNC_KEYS, 'must be an object with a url');
  const parsed = parseCommon(options);
  const signal = options['signal'];
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new ValidationError('options.signal', 'must be an AbortSignal');
  parsed.signal = signal;
  checkFunction('options.onProgress', options['onProgress']);
  parsed.onProgress = options['onProgress'] as ParsedSyncOptions['onProgress'];
  return parsed;
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
  requireOptions('options', options, AUTO_KEYS, 'must be an object with a url and intervalMs');
  const intervalMs = requireInt('options.intervalMs', options['intervalMs'], 10, 86_400_000);
  checkFunction('options.onSync', options['onSync']);
  checkFunction('options.onError', options['onError']);
  return {
    sync: parseCommon(options),
    intervalMs,
    maxBackoffMs:
      options['maxBackoffMs'] === undefined
        ? Math.max(300_000, intervalMs)
        : requireInt('options.maxBackoffMs', options['maxBackoffMs'], intervalMs, 86_400_000),
    onSync: options['onSync'] as ParsedAutoSyncOptions['onSync'],
    onError: options['onError'] as ParsedAutoSyncOptions['onError'],
  };
}
