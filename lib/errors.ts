/**
 * Typed errors. Every failure engram reports is an {@link EngramError} with a
 * literal `code`; `isEngramError()` checks `name`/`code` rather than
 * `instanceof`, because class identity is lost across workers and Electron's bridge.
 */

/** Every error code engram can report. */
export type EngramErrorCode =
  | 'VALIDATION'
  | 'CLOSED'
  | 'NOT_FOUND'
  | 'LIMIT_EXCEEDED'
  | 'DIMENSION_MISMATCH'
  | 'MODEL_LOAD'
  | 'EMBEDDING'
  | 'INDEX'
  | 'QUOTA_EXCEEDED'
  | 'STORE'
  | 'ABORTED'
  | 'IMPORT'
  | 'LLM'
  | 'SYNC'
  | 'TOOL_CALL'
  | 'HUB'
  | 'KEY'
  | 'REEMBED_BUSY'
  | 'EMBEDDER_CHANGED';

/**
 * Base class of every engram error.
 * @example
 * try { await memory.add('') } catch (e) { if (isEngramError(e)) console.log(e.code) }
 */
export class EngramError extends Error {
  readonly code: EngramErrorCode;
  constructor(code: EngramErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EngramError';
    this.code = code;
  }
}

/** Bad input: names the offending field. Nothing was written. */
export class ValidationError extends EngramError {
  readonly field: string;
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super('VALIDATION', `${field}: ${message}`, options);
    this.name = 'ValidationError';
    this.field = field;
  }
}

/** The store was closed; open a new instance. */
export class ClosedError extends EngramError {
  constructor(what = 'engram') {
    super('CLOSED', `${what} is closed`);
    this.name = 'ClosedError';
  }
}

/** A record that was asked for by id does not exist. */
export class NotFoundError extends EngramError {
  constructor(what: string, id: string) {
    super('NOT_FOUND', `${what} not found: ${id}`);
    this.name = 'NotFoundError';
  }
}

/** A write would exceed a limit (a core memory block's character limit, for example). */
export class LimitExceededError extends EngramError {
  readonly limit: number;
  readonly attempted: number;
  constructor(what: string, limit: number, attempted: number) {
    super('LIMIT_EXCEEDED', `${what}: ${attempted} exceeds the limit of ${limit}`);
    this.name = 'LimitExceededError';
    this.limit = limit;
    this.attempted = attempted;
  }
}

/** Vectors of a different length than the store or index expects. */
export class DimensionMismatchError extends EngramError {
  readonly expected: number;
  readonly actual: number;
  constructor(expected: number, actual: number, detail = '') {
    super('DIMENSION_MISMATCH', `expected dimension ${expected}, got ${actual}${detail ? ` (${detail})` : ''}`);
    this.name = 'DimensionMismatchError';
    this.expected = expected;
    this.actual = actual;
  }
}

/** The embedding model could not be loaded. */
export class ModelLoadError extends EngramError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MODEL_LOAD', message, options);
    this.name = 'ModelLoadError';
  }
}

/** The embedder failed or returned vectors of the wrong shape. */
export class EmbeddingError extends EngramError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('EMBEDDING', message, options);
    this.name = 'EmbeddingError';
  }
}

/** The vector index failed (capacity, corrupt snapshot, WASM fault). */
export class IndexError extends EngramError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INDEX', message, options);
    this.name = 'IndexError';
  }
}

/** The browser refused to store more data. */
export class QuotaExceededError extends EngramError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('QUOTA_EXCEEDED', message, options);
    this.name = 'QuotaExceededError';
  }
}

/** IndexedDB failed for a reason other than quota. */
export class StoreError extends EngramError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE', message, options);
    this.name = 'StoreError';
  }
}

/** Long work was cancelled through its AbortSignal. */
export class AbortError extends EngramError {
  constructor(message = 'aborted', options?: { cause?: unknown }) {
    super('ABORTED', message, options);
    this.name = 'AbortError';
  }
}

/** An import file is malformed; `line` is 1-based. The store is unchanged. */
export class ImportError extends EngramError {
  readonly line: number;
  constructor(line: number, message: string, options?: { cause?: unknown }) {
    super('IMPORT', `line ${line}: ${message}`, options);
    this.name = 'ImportError';
    this.line = line;
  }
}

/**
 * Why a language-model call failed: `unreachable` (no connection), `status` (an HTTP
 * error), `timeout` (the call's deadline passed), `stalled` (the server stopped sending
 * for longer than allowed), `malformed` (an answer that is not what the protocol says),
 * `too-large` (an answer over the size allowed), `failed` (anything else, e.g. a model
 * function that threw).
 */
export type LlmFailure = 'unreachable' | 'status' | 'timeout' | 'stalled' | 'malformed' | 'too-large' | 'failed';

/** A language-model call failed or answered in an unusable shape; `reason` says which. */
export class LlmError extends EngramError {
  readonly reason: LlmFailure;
  constructor(message: string, options?: { cause?: unknown; reason?: LlmFailure }) {
    super('LLM', message, options);
    this.name = 'LlmError';
    this.reason = options?.reason ?? 'failed';
  }
}

/**
 * A memory tool called by a model could not run: bad arguments, an unknown tool,
 * a block that does not exist. The message is written for the model to read and
 * correct its call (the framework adapters hand it back as the tool's error).
 */
export class ToolCallError extends EngramError {
  /** The tool the model called. */
  readonly tool: string;
  constructor(tool: string, message: string, options?: { cause?: unknown }) {
    super('TOOL_CALL', message, options);
    this.name = 'ToolCallError';
    this.tool = tool;
  }
}

/**
 * Why a sync failed. `unreachable`, `timeout`, `rate-limited`, `server` and
 * `bad-response` (a garbled or cut answer) are transient: sync retries them, and
 * auto-sync backs off and tries again. The others need a person; `too-large` is an
 * answer larger than the request allowed (a pull asks again for fewer points).
 */
export type SyncFailure =
  | 'unreachable'
  | 'timeout'
  | 'rate-limited'
  | 'server'
  | 'bad-response'
  | 'rejected'
  | 'incompatible'
  | 'wrong-passphrase'
  | 'encryption'
  | 'too-large';

const TRANSIENT_SYNC_FAILURES: ReadonlySet<SyncFailure> = new Set<SyncFailure>([
  'unreachable',
  'timeout',
  'rate-limited',
  'server',
  'bad-response',
]);

/** Sync with the remote target failed; `reason` says why, `retryAfterMs` when the server asked to wait. */
export class SyncError extends EngramError {
  readonly reason: SyncFailure;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options?: { cause?: unknown; reason?: SyncFailure; retryAfterMs?: number }) {
    super('SYNC', message, options);
    this.name = 'SyncError';
    this.reason = options?.reason ?? 'server';
    this.retryAfterMs = options?.retryAfterMs;
  }

  /** True when trying again later may succeed. */
  get transient(): boolean {
    return TRANSIENT_SYNC_FAILURES.has(this.reason);
  }
}

/** Why a call through the desktop hub (an MCP client's request routed to the app's window) failed. */
export type HubFailure = 'no-window' | 'timeout' | 'renderer' | 'closed';

/**
 * A call from a local agent (MCP) could not be answered by the app: no window
 * holds the store, it did not answer in time, or it failed; `reason` says which.
 */
export class HubError extends EngramError {
  readonly reason: HubFailure;
  constructor(reason: HubFailure, message: string, options?: { cause?: unknown }) {
    super('HUB', message, options);
    this.name = 'HubError';
    this.reason = reason;
  }
}

/**
 * Why a store's encryption at rest, or an encrypted export file, refused: `wrong-key`
 * (the key or passphrase does not open this store or file), `key-needed` (an encrypted
 * store or export opened without one), `not-encrypted` (a plain store or export given
 * one), `unsupported` (no WebCrypto, or a key header this engram cannot read),
 * `already-encrypted` (a store `Engram.encryptStore` was asked to encrypt is encrypted).
 */
export type KeyFailure = 'wrong-key' | 'key-needed' | 'not-encrypted' | 'unsupported' | 'already-encrypted';

/**
 * The store's encryption at rest refused to open it, or import() refused an export's
 * passphrase; `reason` says why. Nothing was read or written.
 */
export class KeyError extends EngramError {
  readonly reason: KeyFailure;
  constructor(reason: KeyFailure, message: string, options?: { cause?: unknown }) {
    super('KEY', message, options);
    this.name = 'KeyError';
    this.reason = reason;
  }
}

/**
 * Another instance on the same store (a second tab, a second Engram) is re-embedding it:
 * its lease names the model it moves to and when the lease runs out unless renewed (a
 * run that died leaves it to expire). Nothing was embedded or written; try again once
 * that run has finished, or after `expiresAt`.
 */
export class ReembedBusyError extends EngramError {
  /** The embedder id the other run moves the store to. */
  readonly target: string;
  /** When the other run's lease runs out unless it renews it (epoch ms, the store's clock). */
  readonly expiresAt: number;
  constructor(target: string, expiresAt: number) {
    super(
      'REEMBED_BUSY',
      `another instance is re-embedding this store with "${target}" (its lease runs until ${new Date(expiresAt).toISOString()} unless renewed); try again when it has finished`,
    );
    this.name = 'ReembedBusyError';
    this.target = target;
    this.expiresAt = expiresAt;
  }
}

/**
 * Another instance switched the store to another embedding model (a re-embed) while
 * this one was open on the old one. Vector and hybrid search are refused (keyword
 * search still works); memories this instance writes are stored without a vector,
 * and an instance on the store's model embeds them. Reopen with `recorded`'s model.
 */
export class EmbedderChangedError extends EngramError {
  /** The embedder id the store holds now. */
  readonly recorded: string;
  /** The embedder id of this instance. */
  readonly current: string;
  constructor(recorded: string, current: string) {
    super(
      'EMBEDDER_CHANGED',
      `another instance re-embedded this store with "${recorded}"; this engram uses "${current}": keyword search still works, reopen with "${recorded}" for vector and hybrid search`,
    );
    this.name = 'EmbedderChangedError';
    this.recorded = recorded;
    this.current = current;
  }
}

const CODES: ReadonlySet<string> = new Set<EngramErrorCode>([
  'VALIDATION',
  'CLOSED',
  'NOT_FOUND',
  'LIMIT_EXCEEDED',
  'DIMENSION_MISMATCH',
  'MODEL_LOAD',
  'EMBEDDING',
  'INDEX',
  'QUOTA_EXCEEDED',
  'STORE',
  'ABORTED',
  'IMPORT',
  'LLM',
  'SYNC',
  'TOOL_CALL',
  'HUB',
  'KEY',
  'REEMBED_BUSY',
  'EMBEDDER_CHANGED',
]);

/**
 * True for any engram error, including one that crossed a worker or IPC boundary.
 * @example
 * if (isEngramError(e) && e.code === 'VALIDATION') showFieldError(e.message)
 */
export function isEngramError(e: unknown): e is EngramError {
  if (typeof e !== 'object' || e === null) return false;
  const { name, code } = e as { name?: unknown; code?: unknown };
  return typeof name === 'string' && name.endsWith('Error') && typeof code === 'string' && CODES.has(code);
}

/** Throws {@link AbortError} when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortError('aborted', { cause: signal.reason });
}
