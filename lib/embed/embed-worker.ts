/**
 * Web Worker entry of `TransformersEmbedder` in browsers: loads the
 * transformers.js pipeline off the page's main thread and answers embed
 * requests one at a time (see worker-protocol.ts). Created by worker-client.ts
 * with `new Worker(new URL('./embed-worker.ts', import.meta.url), { type: 'module' })`
 * so that Vite bundles it.
 *
 * ONNX Runtime Web's files are served by the app itself (ort-wasm-paths.ts),
 * never fetched from a CDN.
 */

import { EmbeddingError } from '../errors.js';
import { SerialQueue } from '../util/serial-queue.js';
import { loadExtractor } from './transformers-runtime.js';
import type { LoadedExtractor, RuntimeConfig } from './transformers-runtime.js';
import { localWasmPaths } from './ort-wasm-paths.js';
import { serializeError } from './worker-protocol.js';
import type { WorkerRequest, WorkerResponse } from './worker-protocol.js';

/** The part of DedicatedWorkerGlobalScope used here (the project's DOM lib types `self` as a Window). */
interface WorkerScope {
  postMessage(message: WorkerResponse, transfer?: Transferable[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<WorkerRequest>) => void): void;
  close(): void;
}

const scope = self as unknown as WorkerScope;
let extractor: LoadedExtractor | undefined;
/** Requests are handled one at a time, in the order they came (handle() never rejects). */
const requests = new SerialQueue();

async function handle(request: WorkerRequest): Promise<void> {
  const { id } = request;
  try {
    switch (request.type) {
      case 'load': {
        const config: RuntimeConfig = {
          ...request.config,
          wasmPaths: request.config.wasmPaths ?? (await localWasmPaths()),
          // One thread: no SharedArrayBuffer, so no cross-origin isolation needed; a lookup model gains nothing from more.
          numThreads: request.config.numThreads ?? 1,
        };
        await extractor?.dispose();
        extractor = await loadExtractor(config, (progress) => {
          scope.postMessage({ type: 'progress', id, progress });
        });
        scope.postMessage({ type: 'loaded', id, dimensions: extractor.dimensions });
        return;
      }
      case 'embed': {
        if (extractor === undefined) throw new EmbeddingError('the worker has no model loaded');
        const data = await extractor.run(request.texts);
        scope.postMessage({ type: 'embedded', id, data }, [data.buffer]);
        return;
      }
      case 'dispose': {
        await extractor?.dispose();
        extractor = undefined;
        scope.postMessage({ type: 'disposed', id });
        return;
      }
    }
  } catch (e) {
    scope.postMessage({ type: 'error', id, error: serializeError(e) });
  }
}

scope.addEventListener('message', (event) => {
  const request = event.data;
  void requests.run(() => handle(request));
});
