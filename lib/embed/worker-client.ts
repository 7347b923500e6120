/**
 * Page side of the embedding worker: starts `embed-worker.ts`, matches answers
 * to requests by id, and turns worker failures back into typed engram errors.
 */

import { EmbeddingError, ModelLoadError } from '../errors.js';
import { untilAborted } from '../util/abort.js';
import type { LoadedExtractor, ModelLoadProgress, RuntimeConfig } from './transformers-runtime.js';
import type { SerializedError, WorkerRequest, WorkerResponse } from './worker-protocol.js';

/** A request before it gets its id (distributes over the union, unlike a plain Omit). */
type Unsent<T> = T extends unknown ? Omit<T, 'id'> : never;

type Pending = {
  resolve: (response: WorkerResponse) => void;
  reject: (error: Error) => void;
  onProgress?: ((p: ModelLoadProgress) => void) | undefined;
};

/** A cause that keeps the worker-side name, message and stack. */
function causeOf(error: SerializedError): SerializedError {
  return { ...error };
}

/**
 * Starts the worker and loads the model in it. The returned extractor's `run`
 * accepts a signal: an abort rejects at once with AbortError (the batch in the
 * worker completes and is discarded).
 * @example
 * const extractor = await startWorkerExtractor({ model: 'engram-glove-100d', localModelPath: '/models/', allowRemoteModels: false });
 */
export async function startWorkerExtractor(
  config: RuntimeConfig,
  onProgress?: (p: ModelLoadProgress) => void,
): Promise<LoadedExtractor & { run(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array> }> {
  let worker: Worker;
  try {
    worker = new Worker(new URL('./embed-worker.ts', import.meta.url), { type: 'module', name: 'engram-embed' });
  } catch (e) {
    throw new ModelLoadError('could not start the embedding worker', { cause: e });
  }

  let nextId = 1;
  let loaded = false;
  let dead: Error | undefined;
  const pending = new Map<number, Pending>();

  const fail = (error: Error): void => {
    dead = error;
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };

  worker.addEventListener('message', (event: MessageEvent<WorkerResponse>) => {
    const response = event.data;
    const p = pending.get(response.id);
    if (p === undefined) return;
    if (response.type === 'progress') {
      p.onProgress?.(response.progress);
      return;
    }
    pending.delete(response.id);
    p.resolve(response);
  });
  worker.addEventListener('error', (event: ErrorEvent) => {
    event.preventDefault();
    const message = `the embedding worker failed: ${event.message || 'could not load its script'}`;
    fail(
      loaded
        ? new EmbeddingError(message, { cause: event.error })
        : new ModelLoadError(message, { cause: event.error }),
    );
  });
  worker.addEventListener('messageerror', () => {
    fail(new EmbeddingError('the embedding worker sent a message that could not be read'));
  });

  const request = (
    message: Unsent<WorkerRequest>,
    progress?: (p: ModelLoadProgress) => void,
  ): Promise<WorkerResponse> => {
    if (dead !== undefined) return Promise.reject(dead);
    const id = nextId++;
    return new Promise<WorkerResponse>((resolve, reject) => {
      pending.set(id, { resolve, reject, onProgress: progress });
      const full: WorkerRequest = { ...message, id };
      worker.postMessage(full);
    });
  };

  let dimensions: number;
  try {
    const answer = await request({ type: 'load', config }, onProgress);
    if (answer.type === 'error') {
      throw new ModelLoadError(answer.error.message, { cause: causeOf(answer.error) });
    }
    if (answer.type !== 'loaded') throw new ModelLoadError(`unexpected answer "${answer.type}" to load`);
    dimensions = answer.dimensions;
    loaded = true;
  } catch (e) {
    worker.terminate();
    throw e;
  }

  const run = (texts: readonly string[], signal?: AbortSignal): Promise<Float32Array> => {
    const answer = request({ type: 'embed', texts: [...texts] }).then((response) => {
      if (response.type === 'error') {
        throw new EmbeddingError(response.error.message, { cause: causeOf(response.error) });
      }
      if (response.type !== 'embedded') throw new EmbeddingError(`unexpected answer "${response.type}" to embed`);
      return response.data;
    });
    return untilAborted(answer, signal);
  };

  const dispose = async (): Promise<void> => {
    try {
      if (dead === undefined) await request({ type: 'dispose' });
    } catch {
      // The worker is going away either way.
    } finally {
      worker.terminate();
      fail(new EmbeddingError('the embedding worker was disposed'));
    }
  };

  return { dimensions, run, dispose };
}
