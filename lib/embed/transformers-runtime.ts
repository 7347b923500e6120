/**
 * The one place that drives transformers.js: configure its environment, load a
 * feature-extraction pipeline, run mean-pooled, normalised batches. Used
 * in-thread by `TransformersEmbedder` (Node) and by `embed-worker.ts` (browsers).
 * `@huggingface/transformers` is imported lazily, inside `loadExtractor()`.
 */

import type { DataType, FeatureExtractionPipeline } from '@huggingface/transformers';
import { EmbeddingError, ModelLoadError } from '../errors.js';

/**
 * Where the ONNX Runtime Web files come from (browser only): a folder URL, or the factory and binary.
 * @example { mjs: '/ort/ort-wasm-simd-threaded.asyncify.mjs', wasm: '/ort/ort-wasm-simd-threaded.asyncify.wasm' }
 */
export type WasmPaths = string | { mjs?: string; wasm: string };

/**
 * Everything a load needs; plain data, so it can be posted to a worker.
 * @example { model: 'engram-glove-100d', localModelPath: '/models/', allowRemoteModels: false }
 */
export interface RuntimeConfig {
  model: string;
  localModelPath: string;
  allowRemoteModels: boolean;
  dtype?: DataType | undefined;
  /** Browser only: never left to transformers.js' CDN default. */
  wasmPaths?: WasmPaths | undefined;
  /** Browser only. */
  numThreads?: number | undefined;
}

/**
 * One model-loading event, as reported by transformers.js (`initiate`,
 * `download`, `progress`, `done`, `ready`, ...), reduced to plain data.
 * @example
 * onProgress: (p) => { if (p.status === 'progress') bar.value = p.progress ?? 0 }
 */
export interface ModelLoadProgress {
  status: string;
  file?: string;
  /** 0..100 for `progress` events. */
  progress?: number;
  loaded?: number;
  total?: number;
}

/**
 * A loaded pipeline.
 * @example
 * const flat = await extractor.run(['a', 'b']); // length 2 * extractor.dimensions
 */
export interface LoadedExtractor {
  readonly dimensions: number;
  /** Row-major `texts.length x dimensions`, every row unit length. */
  run(texts: readonly string[]): Promise<Float32Array>;
  dispose(): Promise<void>;
}

/**
 * transformers.js keeps its settings in one global `env`, read while files are
 * fetched; loads are serialised so that each sees its own settings.
 */
let loadChain: Promise<unknown> = Promise.resolve();
/** transformers.js' own default, before we first touched it. */
let browserCacheAvailable: boolean | undefined;

/**
 * Loads the pipeline and learns the output dimension by embedding one probe text.
 * Rejects with ModelLoadError (cause attached).
 * @example
 * const extractor = await loadExtractor({ model: 'engram-glove-100d', localModelPath: 'models/', allowRemoteModels: false });
 */
export function loadExtractor(config: RuntimeConfig, onProgress?: (p: ModelLoadProgress) => void): Promise<LoadedExtractor> {
  const load = loadChain.then(() => loadNow(config, onProgress));
  loadChain = load.catch(() => undefined);
  return load;
}

async function loadNow(config: RuntimeConfig, onProgress?: (p: ModelLoadProgress) => void): Promise<LoadedExtractor> {
  const where = config.allowRemoteModels ? `${config.localModelPath} or the Hugging Face Hub` : config.localModelPath;
  let extractor: FeatureExtractionPipeline;
  try {
    const { env, pipeline } = await import('@huggingface/transformers');
    env.allowLocalModels = true;
    env.allowRemoteModels = config.allowRemoteModels;
    env.localModelPath = config.localModelPath;
    // The Cache API only pays for downloads; a local model is already where the page serves it.
    browserCacheAvailable ??= env.useBrowserCache;
    env.useBrowserCache = browserCacheAvailable && config.allowRemoteModels;
    const wasm = env.backends.onnx.wasm;
    if (wasm !== undefined) {
      if (config.wasmPaths !== undefined) wasm.wasmPaths = config.wasmPaths;
      if (config.numThreads !== undefined) wasm.numThreads = config.numThreads;
    }
    extractor = await pipeline('feature-extraction', config.model, {
      ...(config.dtype === undefined ? {} : { dtype: config.dtype }),
      progress_callback: (info) => {
        onProgress?.(toProgress(info));
      },
    });
  } catch (e) {
    throw new ModelLoadError(`could not load embedding model "${config.model}" from ${where}: ${messageOf(e)}`, { cause: e });
  }

  const run = async (texts: readonly string[]): Promise<Float32Array> => {
    try {
      const out = await extractor([...texts], { pooling: 'mean', normalize: true });
      const data = out.data instanceof Float32Array ? out.data : Float32Array.from(out.data as ArrayLike<number>);
      out.dispose();
      return data;
    } catch (e) {
      throw new EmbeddingError(`"${config.model}" failed to embed ${texts.length} texts: ${messageOf(e)}`, { cause: e });
    }
  };

  let dimensions: number;
  try {
    const probe = await run(['dimension probe']);
    dimensions = probe.length;
  } catch (e) {
    await extractor.dispose().catch(() => undefined);
    throw new ModelLoadError(`embedding model "${config.model}" loaded but could not embed: ${messageOf(e)}`, { cause: e });
  }
  if (dimensions < 1) {
    await extractor.dispose().catch(() => undefined);
    throw new ModelLoadError(`embedding model "${config.model}" produced empty vectors`);
  }
  return {
    dimensions,
    run,
    dispose: () => extractor.dispose(),
  };
}

function toProgress(info: unknown): ModelLoadProgress {
  const o = (typeof info === 'object' && info !== null ? info : {}) as Record<string, unknown>;
  const p: ModelLoadProgress = { status: typeof o['status'] === 'string' ? o['status'] : 'unknown' };
  if (typeof o['file'] === 'string') p.file = o['file'];
  if (typeof o['progress'] === 'number') p.progress = o['progress'];
  if (typeof o['loaded'] === 'number') p.loaded = o['loaded'];
  if (typeof o['total'] === 'number') p.total = o['total'];
  return p;
}

/**
 * The message of anything thrown.
 * @example messageOf(new TypeError('x')) // 'x'
 */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string') {
    return (e as { message: string }).message;
  }
  return String(e);
}
