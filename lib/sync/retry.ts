/**
 * Retrying one request of a sync: transient failures (unreachable, timeout,
 * rate-limited, 5xx, a garbled answer) are tried again after a growing pause,
 * or after the pause the server asked for; the last failure is rethrown.
 */
import { AbortError, SyncError, throwIfAborted } from '../errors.js';

/** How a sync retries a failed request. */
export interface RetryPolicy {
  /**
   * Tries per request, the first included.
   * @default 4
   */
  attempts: number;
  /**
   * Pause before the first retry, in ms; it doubles for each further retry.
   * @default 250
   */
  baseDelayMs: number;
  /**
   * Longest pause, in ms (also caps the server's Retry-After).
   * @default 10000
   */
  maxDelayMs: number;
}

/** The default policy. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 250, maxDelayMs: 10_000 };

/** Waits `ms`, or rejects with AbortError when the signal fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(new AbortError('sync aborted', { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortError('sync aborted', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The pause before retry number `retry` (1-based) after `error`. */
export function retryDelay(policy: RetryPolicy, retry: number, error: SyncError): number {
  const backoff = policy.baseDelayMs * 2 ** (retry - 1);
  return Math.min(policy.maxDelayMs, Math.max(backoff, error.retryAfterMs ?? 0));
}

/**
 * Runs `work`, retrying transient SyncErrors under `policy`.
 * @example
 * await withRetry(() => target.upsert(points), DEFAULT_RETRY, signal)
 */
export async function withRetry<T>(
  work: () => Promise<T>,
  policy: RetryPolicy,
  signal?: AbortSignal,
  onRetry?: (error: SyncError, delayMs: number) => void,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(signal);
    try {
      return await work();
    } catch (e) {
      if (!(e instanceof SyncError) || !e.transient || attempt >= policy.attempts) throw e;
      const delay = retryDelay(policy, attempt, e);
      onRetry?.(e, delay);
      await sleep(delay, signal);
    }
  }
}
