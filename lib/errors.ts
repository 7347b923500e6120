/**
 * Typed errors. Every failure engram reports is an {@link EngramError} with a
 * literal `code`; `isEngramError()` checks `name`/`code` rather than
 * `instanceof`, because class identity is lost across workers and Electron's bridge.
 */

/** Every error code engram can report, in one list: the type and isEngramError() both read it. */
const ERROR_CODES = [
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
] as const;

/** Every error code engram can report. */
export type EngramErrorCode = (typeof ERROR_CODES)[number];

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

/**
 * The one shape of a failure domain's class: an {@link EngramError} of the literal `code`, named `name` (set here,
 * not read from the class, which a minifier may rename). A class with fields extends it and sets only its fields.
 */
function errorClass<const C extends EngramErrorCode>(name: string, code: C) {
  return class extends EngramError {
    declare readonly code: C;
    constructor(message: string, options?: { cause?: unknown }) {
      super(code, message, options);
      this.name = name;
    }
  };
}

/** Bad input: names the offending field. Nothing was written. */
export class ValidationError extends errorClass('ValidationError', 'VALIDATION') {
  readonly field: string;
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(`${field}: ${message}`, options);
    this.field = field;
  }
}

/** The store was closed; open a new instance. */
export class ClosedError extends errorClass('ClosedError', 'CLOSED') {
  constructor(what = 'engram') {
    super(`${what} is closed`);
  }
}

/** A record that was asked for by id does not exist. */
export class NotFoundError extends errorClass('NotFoundError', 'NOT_FOUND') {
  constructor(what: string, id: string) {
    super(`${what} not found: ${id}`);
  }
}

/** A write would exceed a limit (a core memory block's character limit, for example). */
export class LimitExceededError extends errorClass('LimitExceededError', 'LIMIT_EXCEEDED') {
  readonly limit: number;
  readonly attempted: number;
  constructor(what: string, limit: number, attempted: number) {
    super(`${what}: ${attempted} exceeds the limit of ${limit}`);
    this.limit = limit;
    this.attempted = attempted;
  }
}

/** Vectors of a different length than the store or index expects. */
export class DimensionMismatchError extends errorClass('DimensionMismatchError', 'DIMENSION_MISMATCH') {
  readonly expected: number;
  readonly actual: number;
  constructor(expected: number, actual: number, detail = '') {
    super(`expected dimension ${expected}, got ${actual}${detail ? ` (${detail})` : ''}`);
    this.expected = expected;
    this.actual = actual;
  }
}

/** The embedding model could not be loaded. */
export class ModelLoadError extends errorClass('ModelLoadError', 'MODEL_LOAD') {}

/** The embedder failed or returned vectors of the wrong shape. */
export class EmbeddingError extends errorClass('EmbeddingError', 'EMBEDDING') {}

/** The vector index failed (capacity, corrupt snapshot, WASM fault). */
export class IndexError extends errorClass('IndexError', 'INDEX') {}

/** The browser refused to store more data. */
export class QuotaExceededError extends errorClass('QuotaExceededError', 'QUOTA_EXCEEDED') {}

/** IndexedDB failed for a reason other than quota. */
export class StoreError extends errorClass('StoreError', 'STORE') {}

/** Long work was cancelled through its AbortSignal. */
export class AbortError extends errorClass('AbortError', 'ABORTED') {
  constructor(message = 'aborted', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** An import file is malformed; `line` is 1-based. The store is unchanged. */
export class ImportError extends errorClass('ImportError', 'IMPORT') {
  readonly line: number;
  constructor(line: number, message: string, options?: { cause?: unknown }) {
    super(`line ${line}: ${message}`, options);
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
export class LlmError extends errorClass('LlmError', 'LLM') {
  readonly reason: LlmFailure;
  constructor(message: string, options?: { cause?: unknown; reason?: LlmFailure }) {
    super(message, options);
    this.reason = options?.reason ?? 'failed';
  }
}

/**
 * A memory tool called by a model could not run: bad arguments, an unknown tool,
 * a block that does not exist. The message is written for the model to read and
 * correct its call (the framework adapters hand it back as the tool's error).
 */
export class ToolCallError extends errorClass('ToolCallError', 'TOOL_CALL') {
  /** The tool the model called. */
  readonly tool: string;
  constructor(tool: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
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
export class SyncError extends errorClass('SyncError', 'SYNC') {
  readonly reason: SyncFailure;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options?: { cause?: unknown; reason?: SyncFailure; retryAfterMs?: number }) {
    super(message, options);
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
export class HubError extends errorClass('HubError', 'HUB') {
  readonly reason: HubFailure;
  constructor(reason: HubFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
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
export class KeyError extends errorClass('KeyError', 'KEY') {
  readonly reason: KeyFailure;
  constructor(reason: KeyFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/**
 * Another instance on the same store (a second tab, a second Engram) is re-embedding it:
 * its lease names the model it moves to and when the lease runs out unless renewed (a
 * run that died leaves it to expire). Nothing was embedded or written; try again once
 * that run has finished, or after `expiresAt`.
 */
export class ReembedBusyError extends errorClass('ReembedBusyError', 'REEMBED_BUSY') {
  /** The embedder id the other run moves the store to. */
  readonly target: string;
  /** When the other run's lease runs out unless it renews it (epoch ms, the store's clock). */
  readonly expiresAt: number;
  constructor(target: string, expiresAt: number) {
    super(
      `another instance is re-embedding this store with "${target}" (its lease runs until ${new Date(expiresAt).toISOString()} unless renewed); try again when it has finished`,
    );
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
export class EmbedderChangedError extends errorClass('EmbedderChangedError', 'EMBEDDER_CHANGED') {
  /** The embedder id the store holds now. */
  readonly recorded: string;
  /** The embedder id of this instance. */
  readonly current: string;
  constructor(recorded: string, current: string) {
    super(
      `another instance re-embedded this store with "${recorded}"; this engram uses "${current}": keyword search still works, reopen with "${recorded}" for vector and hybrid search`,
    );
    this.recorded = recorded;
    this.current = current;
  }
}

const CODES: ReadonlySet<string> = new Set<string>(ERROR_CODES);

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
