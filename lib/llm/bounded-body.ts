/**
 * Reading a model server's answer without trusting it: chunk by chunk, giving up
 * when nothing arrives for `idleMs` (a server that sends its headers and then
 * stalls), when the bytes pass `maxBytes` (a server that never stops), or when the
 * caller's signal fires. Every way out cancels the body, so the connection is freed.
 */
import { AbortError, LlmError } from '../errors.js';

/** The bounds of one answer. */
export interface BodyBounds {
  /** Longest wait for the next chunk, in ms. */
  idleMs: number;
  /** Most bytes the whole answer may have. */
  maxBytes: number;
  /** Ends the read with AbortError (the caller's) or with its reason when that is an EngramError (a deadline). */
  signal?: AbortSignal;
  /** Named in the errors. */
  url: string;
}

/** The error a fired signal stands for: its reason when engram made it (a deadline), else the caller's abort. */
export function abortFailure(signal: AbortSignal, what: string): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof LlmError || reason instanceof AbortError) return reason;
  return new AbortError(`${what} was aborted`, { cause: reason });
}

/** Nothing arrived within the idle bound: the server sent its headers, or part of its answer, and stalled. */
function stalled(bounds: Pick<BodyBounds, 'idleMs' | 'url'>): LlmError {
  return new LlmError(`${bounds.url} sent nothing for ${bounds.idleMs} ms: the model server stalled`, {
    reason: 'stalled',
  });
}

/** Why a read failed with `e`: the caller's signal when it fired (the read ended by it), else the connection. */
function readFailure(bounds: Pick<BodyBounds, 'signal' | 'url'>, e: unknown): Error {
  const { signal } = bounds;
  if (signal?.aborted === true) return abortFailure(signal, 'the model call');
  return new LlmError(`${bounds.url} stopped sending its answer: ${e instanceof Error ? e.message : String(e)}`, {
    cause: e,
    reason: 'unreachable',
  });
}

/**
 * Waits for `promise`, at most `idleMs`, and no longer than `signal` stays quiet.
 * `onGiveUp` runs before the rejection (it cancels whatever the promise waits on).
 */
export function withinIdle<T>(
  promise: Promise<T>,
  bounds: Pick<BodyBounds, 'idleMs' | 'signal' | 'url'>,
  onGiveUp: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const { signal } = bounds;
    const settle = (fail: Error | undefined, value?: T): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (fail === undefined) {
        resolve(value as T);
        return;
      }
      onGiveUp();
      reject(fail);
    };
    const onAbort = (): void => {
      settle(abortFailure(signal!, 'the model call'));
    };
    const timer = setTimeout(() => {
      settle(stalled(bounds));
    }, bounds.idleMs);
    if (signal?.aborted === true) {
      // The promise may still reject (a body ended by the same abort): nobody waits for it any more.
      promise.catch(() => undefined);
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        settle(undefined, value);
      },
      (e: unknown) => {
        settle(readFailure(bounds, e));
      },
    );
  });
}

/**
 * The chunks of `body` in order, each within the idle bound, all together within
 * `maxBytes`; throws LlmError (`stalled`, `too-large`, `unreachable`) or AbortError.
 * @example
 * for await (const chunk of boundedChunks(response.body, { idleMs: 30_000, maxBytes: 4 << 20, url })) decode(chunk)
 */
export async function* boundedChunks(
  body: ReadableStream<Uint8Array>,
  bounds: BodyBounds,
): AsyncGenerator<Uint8Array, void, undefined> {
  const reader = body.getReader();
  const cancel = (): void => {
    reader.cancel().catch(() => undefined);
  };
  let total = 0;
  let done = false;
  try {
    for (;;) {
      const next = await withinIdle(reader.read(), bounds, cancel);
      if (next.done) {
        done = true;
        return;
      }
      total += next.value.byteLength;
      if (total > bounds.maxBytes) {
        throw new LlmError(`${bounds.url} sent more than ${bounds.maxBytes} bytes`, { reason: 'too-large' });
      }
      yield next.value;
    }
  } finally {
    // A consumer that stops early (an error in the stream's content) frees the connection too.
    if (!done) cancel();
    try {
      reader.releaseLock();
    } catch {
      // A runtime that refuses to release a reader with a read pending: the cancel above already ends it.
    }
  }
}

/** The whole body as text, within the bounds. */
export async function boundedText(body: ReadableStream<Uint8Array> | null, bounds: BodyBounds): Promise<string> {
  if (body === null) return '';
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of boundedChunks(body, bounds)) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}
