/**
 * Messages between `TransformersEmbedder` (page side, `worker-client.ts`) and
 * `embed-worker.ts`. Plain, structured-cloneable data only: errors travel as
 * {@link SerializedError} because class identity does not survive postMessage.
 */

import type { ModelLoadProgress, RuntimeConfig } from './transformers-runtime.js';

/**
 * Page -> worker. Every request carries an id that its answer repeats.
 * @example { type: 'embed', id: 7, texts: ['hello'] }
 */
export type WorkerRequest =
  | { type: 'load'; id: number; config: RuntimeConfig }
  | { type: 'embed'; id: number; texts: string[] }
  | { type: 'dispose'; id: number };

/**
 * Worker -> page.
 * @example { type: 'loaded', id: 1, dimensions: 100 }
 */
export type WorkerResponse =
  | { type: 'progress'; id: number; progress: ModelLoadProgress }
  | { type: 'loaded'; id: number; dimensions: number }
  /** `data` is row-major count x dimensions; its buffer is transferred. */
  | { type: 'embedded'; id: number; data: Float32Array }
  | { type: 'disposed'; id: number }
  | { type: 'error'; id: number; error: SerializedError };

/**
 * An error flattened for postMessage.
 * @example { name: 'ModelLoadError', message: 'could not load …', code: 'MODEL_LOAD' }
 */
export interface SerializedError {
  name: string;
  message: string;
  code?: string;
  stack?: string;
}

/**
 * Flattens anything thrown into a {@link SerializedError}.
 * @example
 * scope.postMessage({ type: 'error', id, error: serializeError(e) })
 */
export function serializeError(e: unknown): SerializedError {
  if (typeof e === 'object' && e !== null) {
    const { name, message, code, stack } = e as { name?: unknown; message?: unknown; code?: unknown; stack?: unknown };
    const out: SerializedError = {
      name: typeof name === 'string' ? name : 'Error',
      message: typeof message === 'string' ? message : describe(e),
    };
    if (typeof code === 'string') out.code = code;
    if (typeof stack === 'string') out.stack = stack;
    return out;
  }
  return { name: 'Error', message: String(e) };
}

function describe(o: object): string {
  try {
    return JSON.stringify(o);
  } catch {
    return Object.prototype.toString.call(o);
  }
}
