/**
 * lib/sync owns sync with the user's own Qdrant: the SyncTarget seam, end-to-end
 * encryption and the push/pull run. It uses the parts below the engine (the
 * store's one write path) and takes what it needs of the engine as a
 * `SyncEngineAccess`; it never imports the engine, the faces or the facade.
 * This controller is what `engram.sync()` and friends delegate to: one sync at a
 * time per store, auto-sync with exponential backoff, and the status. The Qdrant
 * client is loaded only when a sync with a URL first runs.
 */
import { AbortError, SyncError, isEngramError } from '../errors.js';
import { SerialQueue } from '../util/serial-queue.js';
import { SYNC_STATE_KEY, StoreHost, type SyncEngineAccess } from './store-host.js';
import {
  parseAutoSyncOptions,
  parseSyncOptions,
  type AutoSyncOptions,
  type ParsedAutoSyncOptions,
  type ParsedSyncOptions,
  type SyncOptions,
} from './sync-options.js';
import type { KeyCache } from './encryption.js';
import { RefusalLog, type SyncRefusals } from './refusals.js';
import { runSync, type SyncResult, type SyncRunOptions } from './sync-run.js';
import type { SyncHost, SyncState } from './sync-host.js';
import type { SyncTarget } from './sync-target.js';

/** Points per scroll page while pulling. */
const PULL_PAGE = 256;

/** Sync's state as `engram.syncStatus()` reports it. */
export interface SyncStatus {
  /** A sync is running now. */
  running: boolean;
  /** Auto-sync is on. */
  auto: boolean;
  /** When the last sync finished (epoch ms). */
  lastSyncAt?: number;
  /** What the last successful sync did. */
  lastResult?: SyncResult;
  /** Why the last sync failed, when it did (cleared by a success). */
  lastError?: { code: string; reason?: string; message: string };
  /** Failed auto-syncs in a row. */
  failures: number;
  /** When auto-sync tries next (epoch ms). */
  nextSyncAt?: number;
  /** Cursors per collection: change-log position pushed, push counter, pull cursor per device. */
  cursors: Record<string, SyncState>;
  /**
   * Points pulls refused since this store was opened (never applied): counts by
   * reason (`RefusalReason`) and the latest ones.
   */
  refused: SyncRefusals;
}

interface Auto {
  options: ParsedAutoSyncOptions;
  controller: AbortController;
  timer: ReturnType<typeof setTimeout> | undefined;
  running: Promise<void> | undefined;
}

/** The key the cursors of one collection are kept under. */
function collectionKey(o: ParsedSyncOptions): string {
  return o.url === undefined ? `target:${o.collection}` : `${o.url.replace(/\/+$/, '')}#${o.collection}`;
}

async function makeTarget(o: ParsedSyncOptions): Promise<{ target: SyncTarget; owned: boolean }> {
  if (o.target !== undefined) return { target: o.target, owned: false };
  const { QdrantTarget } = await import('./qdrant-target.js');
  return {
    target: new QdrantTarget({
      url: o.url!,
      collection: o.collection,
      timeoutMs: o.timeoutMs,
      ...(o.apiKey === undefined ? {} : { apiKey: o.apiKey }),
    }),
    owned: true,
  };
}

/** A failed sync as `syncStatus().lastError` reports it. */
function failureOf(e: unknown): NonNullable<SyncStatus['lastError']> {
  return isEngramError(e)
    ? { code: e.code, message: e.message, ...(e instanceof SyncError ? { reason: e.reason } : {}) }
    : { code: 'SYNC', message: e instanceof Error ? e.message : String(e) };
}

/** Runs syncs for one open store. */
export class SyncController {
  readonly #host: SyncHost;
  readonly #engine: SyncEngineAccess;
  /** Syncs of this store run one after the other. */
  readonly #syncs = new SerialQueue();
  #running = 0;
  #auto: Auto | undefined;
  #failures = 0;
  #nextSyncAt: number | undefined;
  #lastSyncAt: number | undefined;
  #lastResult: SyncResult | undefined;
  #lastError: SyncStatus['lastError'];
  /** Derived encryption keys of this session (see KeyCache). */
  readonly #keys: KeyCache = new Map();
  readonly #refusals = new RefusalLog();

  constructor(engine: SyncEngineAccess) {
    this.#engine = engine;
    this.#host = new StoreHost(engine);
  }

  /** One sync now; waits for a running one first. */
  sync(options: SyncOptions): Promise<SyncResult> {
    return this.#run(parseSyncOptions(options));
  }

  #run(o: ParsedSyncOptions): Promise<SyncResult> {
    return this.#syncs.run(async () => {
      this.#running += 1;
      let made: { target: SyncTarget; owned: boolean } | undefined;
      try {
        // Inside the try: a target that cannot be made (its module, its client) is a failed sync like any other.
        made = await makeTarget(o);
        const result = await runSync(this.#host, this.#runOptions(o, made.target));
        this.#lastResult = result;
        this.#lastError = undefined;
        return result;
      } catch (e) {
        this.#lastError = failureOf(e);
        throw e;
      } finally {
        this.#lastSyncAt = Date.now();
        this.#running -= 1;
        if (made?.owned === true) await made.target.close();
      }
    });
  }

  /** What one sync run needs: the parsed options with `target`, and this store's key cache and refusal log. */
  #runOptions(o: ParsedSyncOptions, target: SyncTarget): SyncRunOptions {
    return {
      target,
      key: collectionKey(o),
      kinds: o.kinds,
      encryption: o.encryption,
      kdfIterations: o.kdfIterations,
      batchSize: o.batchSize,
      pageSize: PULL_PAGE,
      retry: o.retry,
      signal: o.signal,
      onProgress: o.onProgress,
      keys: this.#keys,
      refusals: this.#refusals,
    };
  }

  /** Starts syncing every `intervalMs`; replaces a running auto-sync. */
  async startAutoSync(options: AutoSyncOptions): Promise<void> {
    const parsed = parseAutoSyncOptions(options);
    await this.stopAutoSync();
    const auto: Auto = { options: parsed, controller: new AbortController(), timer: undefined, running: undefined };
    this.#auto = auto;
    this.#failures = 0;
    this.#schedule(auto, 0);
  }

  #schedule(auto: Auto, delayMs: number): void {
    if (this.#auto !== auto || auto.controller.signal.aborted) return;
    this.#nextSyncAt = Date.now() + delayMs;
    auto.timer = setTimeout(() => {
      auto.timer = undefined;
      auto.running = this.#tick(auto);
    }, delayMs);
  }

  async #tick(auto: Auto): Promise<void> {
    const { options } = auto;
    let delay = options.intervalMs;
    try {
      const result = await this.#run({ ...options.sync, signal: auto.controller.signal });
      this.#failures = 0;
      options.onSync?.(result);
    } catch (e) {
      if (auto.controller.signal.aborted) return;
      this.#failures += 1;
      options.onError?.(e);
      if (!(e instanceof SyncError && e.transient)) {
        // A wrong passphrase or an incompatible collection does not mend itself: stop, keep the error.
        if (this.#auto === auto) this.#auto = undefined;
        this.#nextSyncAt = undefined;
        return;
      }
      // Exponential backoff while the server is unreachable or failing.
      delay = Math.min(options.maxBackoffMs, Math.max(options.intervalMs * 2 ** this.#failures, e.retryAfterMs ?? 0));
    }
    this.#schedule(auto, delay);
  }

  /** Stops auto-sync and waits for a sync it started to stop. Idempotent. */
  async stopAutoSync(): Promise<void> {
    const auto = this.#auto;
    if (auto === undefined) return;
    this.#auto = undefined;
    this.#nextSyncAt = undefined;
    if (auto.timer !== undefined) clearTimeout(auto.timer);
    auto.controller.abort(new AbortError('auto-sync stopped'));
    await auto.running;
  }

  /** Sync's state: running, auto, last result or error, cursors. */
  async status(): Promise<SyncStatus> {
    const status: SyncStatus = {
      running: this.#running > 0,
      auto: this.#auto !== undefined,
      failures: this.#failures,
      cursors: ((await this.#engine.db.meta.get(SYNC_STATE_KEY))?.value as Record<string, SyncState> | undefined) ?? {},
      refused: this.#refusals.snapshot(),
    };
    if (this.#lastSyncAt !== undefined) status.lastSyncAt = this.#lastSyncAt;
    if (this.#lastResult !== undefined) status.lastResult = this.#lastResult;
    if (this.#lastError !== undefined) status.lastError = this.#lastError;
    if (this.#nextSyncAt !== undefined && this.#auto !== undefined) status.nextSyncAt = this.#nextSyncAt;
    return status;
  }

  /** Stops auto-sync and waits for running syncs (close() calls it). */
  async close(): Promise<void> {
    await this.stopAutoSync();
    await this.#syncs.idle();
  }
}
