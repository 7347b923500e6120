/**
 * Cancellation that does not depend on the callee: {@link untilAborted} settles
 * as soon as the signal fires, even when the work itself ignores the signal.
 */
import { AbortError } from '../errors.js';

/**
 * Resolves like `promise`, or rejects with AbortError as soon as `signal` fires.
 * The abandoned promise's own rejection is swallowed, so it is never unhandled.
 * @example
 * const vectors = await untilAborted(embedder.embed(texts), signal)
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  promise.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(new AbortError('aborted', { cause: signal.reason }));
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    promise
      .finally(() => {
        signal.removeEventListener('abort', onAbort);
      })
      .then(resolve, reject);
  });
}
