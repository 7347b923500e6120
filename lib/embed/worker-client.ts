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
  const channel = new WorkerChannel(spawnWorker());
  const dimensions = await loadModel(channel, config, onProgress);
  return {
    dimensions,
    run: (texts: readonly string[], signal?: AbortSignal) => untilAborted(embed(channel, texts), signal),
    dispose: () => dispose(channel),
  };
}

function spawnWorker(): Worker {
  try {
    return new Worker(new URL('./embed-worker.ts', import.meta.url), { type: 'module', name: 'engram-embed' });
  } catch (e) {
    throw new ModelLoadError('could not start the embedding worker', { cause: e });
  }
}

/**
 * Requests to the worker, each answered by the response with its id (progress
 * events on the way go to the request's listener). Once the worker fails, every
 * request waiting and every later one rejects with that failure.
 */
class WorkerChannel {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #dead: Error | undefined;
  /** The model is loaded: a worker failure from now on is an EmbeddingError, before it a ModelLoadError. */
  loaded = false;

  constructor(worker: Worker) {
    this.#worker = worker;
    worker.addEventListener('message', (event: MessageEvent<WorkerResponse>) => {
      this.#answer(event.data);
    });
    worker.addEventListener('error', (event: ErrorEvent) => {
      event.preventDefault();
      const message = `the embedding worker failed: ${event.message || 'could not load its script'}`;
      this.fail(
        this.loaded
          ? new EmbeddingError(message, { cause: event.error })
          : new ModelLoadError(message, { cause: event.error }),
      );
    });
    worker.addEventListener('messageerror', () => {
      this.fail(new EmbeddingError('the embedding worker sent a message that could not be read'));
    });
  }

  get dead(): boolean {
    return this.#dead !== undefined;
  }

  request(message: Unsent<WorkerRequest>, progress?: (p: ModelLoadProgress) => void): Promise<WorkerResponse> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    const id = this.#nextId++;
    return new Promise<WorkerResponse>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, onProgress: progress });
      const full: WorkerRequest = { ...message, id };
      this.#worker.postMessage(full);
    });
  }

  /** Rejects every request waiting and every later one with `error`. */
  fail(error: Error): void {
    this.#dead = error;
    for (const p of this.#pending.values()) p.reject(error);
    this.#pending.clear();
  }

  terminate(): void {
    this.#worker.terminate();
  }

  #answer(response: WorkerResponse): void {
    const p = this.#pending.get(response.id);
    if (p === undefined) return;
    if (response.type === 'progress') {
      p.onProgress?.(response.progress);
      return;
    }
    this.#pending.delete(response.id);
    p.resolve(response);
  }
}

/** Loads the model in the worker; returns its dimension. A failed load ends the worker. */
async function loadModel(
  channel: WorkerChannel,
  config: RuntimeConfig,
  onProgress?: (p: ModelLoadProgress) => void,
): Promise<number> {
  try {
    const answer = await channel.request({ type: 'load', config }, onProgress);
    if (answer.type === 'error') throw new ModelLoadError(answer.error.message, { cause: causeOf(answer.error) });
    if (answer.type !== 'loaded') throw new ModelLoadError(`unexpected answer "${answer.type}" to load`);
    channel.loaded = true;
    return answer.dimensions;
  } catch (e) {
    channel.terminate();
    throw e;
  }
}

/** One batch embedded in the worker (the request is posted at once). */
async function embed(channel: WorkerChannel, texts: readonly string[]): Promise<Float32Array> {
  const response = await channel.request({ type: 'embed', texts: [...texts] });
  if (response.type === 'error') throw new EmbeddingError(response.error.message, { cause: causeOf(response.error) });
  if (response.type !== 'embedded') throw new EmbeddingError(`unexpected answer "${response.type}" to embed`);
  return response.data;
}

/** Frees the model in the worker (when it still runs) and ends it; later requests reject. */
async function dispose(channel: WorkerChannel): Promise<void> {
  try {
    if (!channel.dead) await channel.request({ type: 'dispose' });
  } catch {
    // The worker is going away either way.
  } finally {
    channel.terminate();
    channel.fail(new EmbeddingError('the embedding worker was disposed'));
  }
}
