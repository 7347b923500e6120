/**
 * The one place that drives transformers.js: configure its environment, load a
 * feature-extraction pipeline, run pooled (mean, or the [CLS] token when the
 * model folder's config.json says `engram.pooling: 'cls'`), normalised batches. Used
 * in-thread by `TransformersEmbedder` (Node) and by `embed-worker.ts` (browsers).
 * `@huggingface/transformers` is imported lazily, inside `loadExtractor()`.
 */

import type {
  DataType,
  env as transformersEnv,
  FeatureExtractionPipeline,
  mean_pooling,
  Tensor,
} from '@huggingface/transformers';
import { EmbeddingError, ModelLoadError } from '../errors.js';
import { SerialQueue } from '../util/serial-queue.js';

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
const loads = new SerialQueue();
/** transformers.js' own default, before we first touched it. */
let browserCacheAvailable: boolean | undefined;

/** transformers.js' environment settings object. */
type TransformersEnv = typeof transformersEnv;

/**
 * Loads the pipeline and learns the output dimension by embedding one probe text.
 * Rejects with ModelLoadError (cause attached).
 * @example
 * const extractor = await loadExtractor({ model: 'engram-glove-100d', localModelPath: 'models/', allowRemoteModels: false });
 */
export function loadExtractor(
  config: RuntimeConfig,
  onProgress?: (p: ModelLoadProgress) => void,
): Promise<LoadedExtractor> {
  return loads.run(() => loadNow(config, onProgress));
}

async function loadNow(config: RuntimeConfig, onProgress?: (p: ModelLoadProgress) => void): Promise<LoadedExtractor> {
  const extractor = await loadPipeline(config, onProgress);
  const { mean_pooling } = await import('@huggingface/transformers');
  const parts = extractor as unknown as TokenizerAndModel;
  const shape = await disposedOnFailure(extractor, () => modelShape(parts, config.model));
  const run = pooledRun(parts, { ...shape, meanPooling: mean_pooling }, config.model);
  const dimensions = await disposedOnFailure(extractor, () => probeDimensions(run, config.model));
  return { dimensions, run, dispose: () => extractor.dispose() };
}

/** transformers.js' environment set for this load, and its pipeline loaded; ModelLoadError says from where. */
async function loadPipeline(
  config: RuntimeConfig,
  onProgress?: (p: ModelLoadProgress) => void,
): Promise<FeatureExtractionPipeline> {
  try {
    const { env, pipeline } = await import('@huggingface/transformers');
    configureEnv(env, config);
    return await pipeline('feature-extraction', config.model, {
      ...(config.dtype === undefined ? {} : { dtype: config.dtype }),
      progress_callback: (info) => {
        onProgress?.(toProgress(info));
      },
    });
  } catch (e) {
    const where = config.allowRemoteModels ? `${config.localModelPath} or the Hugging Face Hub` : config.localModelPath;
    throw new ModelLoadError(`could not load embedding model "${config.model}" from ${where}: ${messageOf(e)}`, {
      cause: e,
    });
  }
}

/** Sets transformers.js' environment for this load: where models come from, the browser cache, the WASM backend. */
function configureEnv(env: TransformersEnv, config: RuntimeConfig): void {
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
}

/** Runs a step of a load; when it throws, the loaded pipeline is disposed (its session freed) and the error passes on. */
async function disposedOnFailure<T>(extractor: FeatureExtractionPipeline, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    await extractor.dispose().catch(() => undefined);
    throw e;
  }
}

/** How a loaded model's texts are encoded and pooled. */
interface ModelShape {
  pooling: Pooling;
  /** The token the tokenizer's template closes every text with, put back on truncated rows. */
  closing: bigint | undefined;
}

/** The pooling the model folder asks for and its tokenizer's closing token; ModelLoadError when either fails. */
function modelShape(parts: TokenizerAndModel, model: string): ModelShape {
  let pooling: Pooling;
  try {
    pooling = poolingOf(parts.model.config);
  } catch (e) {
    throw new ModelLoadError(`embedding model "${model}": ${messageOf(e)}`, { cause: e });
  }
  try {
    return { pooling, closing: closingToken(parts.tokenizer) };
  } catch (e) {
    throw new ModelLoadError(`embedding model "${model}" loaded but its tokenizer failed: ${messageOf(e)}`, {
      cause: e,
    });
  }
}

/** The output dimension, learnt by embedding one probe text; ModelLoadError when it fails or is empty. */
async function probeDimensions(run: LoadedExtractor['run'], model: string): Promise<number> {
  let dimensions: number;
  try {
    dimensions = (await run(['dimension probe'])).length;
  } catch (e) {
    throw new ModelLoadError(`embedding model "${model}" loaded but could not embed: ${messageOf(e)}`, { cause: e });
  }
  if (dimensions < 1) throw new ModelLoadError(`embedding model "${model}" produced empty vectors`);
  return dimensions;
}

/** transformers.js' own mean pooling, for token states of a shape the fast path does not take. */
type MeanPooling = typeof mean_pooling;

/**
 * What the pipeline's own call does (tokenize, run, take the token states), pooled
 * here; EmbeddingError when a batch fails. The model's output tensors are freed
 * after each batch.
 */
function pooledRun(
  parts: TokenizerAndModel,
  shape: ModelShape & { meanPooling: MeanPooling },
  model: string,
): LoadedExtractor['run'] {
  return async (texts) => {
    try {
      const inputs = parts.tokenizer([...texts], { padding: true, truncation: true });
      if (shape.closing !== undefined) closeTruncatedRows(inputs.input_ids, inputs.attention_mask, shape.closing);
      const outputs = await parts.model(inputs);
      try {
        return poolStates(tokenStates(outputs), inputs.attention_mask, shape.pooling, shape.meanPooling);
      } finally {
        for (const tensor of Object.values(outputs)) tensor?.dispose();
      }
    } catch (e) {
      throw new EmbeddingError(`"${model}" failed to embed ${texts.length} texts: ${messageOf(e)}`, { cause: e });
    }
  };
}

/** The model's token states, under whichever name its outputs give them. */
function tokenStates(outputs: Record<string, Tensor | undefined>): Tensor {
  const states = outputs['last_hidden_state'] ?? outputs['logits'] ?? outputs['token_embeddings'];
  if (states === undefined)
    throw new EmbeddingError('the model gave no token states (last_hidden_state, logits or token_embeddings)');
  return states;
}

/** Token states (batch × tokens × dims) pooled into unit sentence vectors, row-major. */
function poolStates(states: Tensor, mask: Tensor, pooling: Pooling, meanPooling: MeanPooling): Float32Array {
  const [batch, tokens, dims] = states.dims;
  if (pooling === 'cls') {
    if (states.dims.length !== 3) throw new EmbeddingError(`token states of shape [${states.dims.join(', ')}]`);
    return clsPooledUnit(float32(states.data), batch!, tokens!, dims!);
  }
  if (
    states.data instanceof Float32Array &&
    states.dims.length === 3 &&
    mask.dims.length === 2 &&
    mask.dims[0] === batch &&
    mask.dims[1] === tokens
  ) {
    return meanPooledUnit(states.data, batch!, tokens!, dims!, mask.data as ArrayLike<bigint | number>);
  }
  // Any other shape: transformers.js' own pooling, as its pipeline would.
  return float32(meanPooling(states, mask).normalize(2, -1).data);
}

/** A tensor's data as float32 (copied only when it is another type). */
function float32(data: Tensor['data']): Float32Array {
  return data instanceof Float32Array ? data : Float32Array.from(data as ArrayLike<number>);
}

/** The parts of a feature-extraction pipeline its call uses. */
interface TokenizerAndModel {
  tokenizer: Tokenize;
  model: {
    (inputs: Record<string, Tensor>): Promise<Record<string, Tensor | undefined>>;
    /** The folder's config.json, as transformers.js read it. */
    readonly config?: unknown;
  };
}

/** How token states become a sentence vector: their mean over the text's tokens, or the first ([CLS]) token's state. */
type Pooling = 'mean' | 'cls';

/**
 * The pooling a model folder asks for in its config.json (`engram.pooling`,
 * written by scripts/sentence-models.mjs; bge models are trained with [CLS]
 * pooling): mean when it says nothing, as for a folder of another origin.
 */
function poolingOf(config: unknown): Pooling {
  const engram = (config as { engram?: unknown } | undefined)?.engram;
  const pooling = typeof engram === 'object' && engram !== null ? (engram as { pooling?: unknown }).pooling : undefined;
  if (pooling === undefined || pooling === 'mean') return 'mean';
  if (pooling === 'cls') return 'cls';
  throw new TypeError(`config.json asks for pooling ${JSON.stringify(pooling)}; engram knows "mean" and "cls"`);
}

/** A transformers.js tokenizer, called as the pipeline calls it. */
interface Tokenize {
  (
    texts: string[],
    options: { padding: boolean; truncation: boolean },
  ): Record<string, Tensor> & { input_ids: Tensor; attention_mask: Tensor };
  readonly all_special_ids: readonly number[];
}

/**
 * The special token the tokenizer's template ends every text with (BERT's
 * `[SEP]`), or undefined when the template ends with the text itself: the last
 * id of the empty text's encoding, when that has more than one id and is special.
 */
function closingToken(tokenizer: Tokenize): bigint | undefined {
  const { input_ids: ids } = tokenizer([''], { padding: true, truncation: true });
  const length = ids.dims[1] ?? 0;
  if (length < 2) return undefined;
  const last = Number((ids.data as ArrayLike<bigint | number>)[length - 1]);
  return tokenizer.all_special_ids.includes(last) ? BigInt(last) : undefined;
}

/**
 * Puts the template's closing token back at the end of every truncated row.
 * transformers.js truncates by cutting the encoded row (`[CLS] t1 … t255`),
 * while Hugging Face's tokenizers, and so sentence-transformers, cut the text
 * and keep the template (`[CLS] t1 … t254 [SEP]`). A row that fills the batch
 * and does not end with the closing token can only be a cut one: a whole
 * encoding always ends with it.
 */
export function closeTruncatedRows(ids: Tensor, mask: Tensor, closing: bigint): void {
  const [rows, length] = ids.dims;
  if (rows === undefined || length === undefined || length < 2) return;
  const idData = ids.data as BigInt64Array;
  const maskData = mask.data as ArrayLike<bigint | number>;
  for (let i = 0; i < rows; i++) {
    const last = i * length + length - 1;
    if (Number(maskData[last]) !== 0 && idData[last] !== closing) idData[last] = closing;
  }
}

/**
 * Each text's token states (`states`, batch × tokens × dims, row-major)
 * averaged over the tokens `mask` keeps, then scaled to unit length: the
 * arithmetic of transformers.js' `mean_pooling` and `Tensor.normalize(2, -1)`
 * step for step (sums in doubles in token order, each average stored as
 * float32, the squared norm summed in float32), so the vectors are the same
 * bit for bit. transformers.js reads the int64 mask element by element once
 * per dimension, as BigInts, and walks the states with a stride; here the
 * mask is read once per text and the states in order (what that gained:
 * bench/results/REPORT.md, "Measurements cited by the code").
 */
export function meanPooledUnit(
  states: Float32Array,
  batch: number,
  tokens: number,
  dims: number,
  mask: ArrayLike<bigint | number>,
): Float32Array {
  const out = new Float32Array(batch * dims);
  const sums = new Float64Array(dims);
  const weight = new Float64Array(tokens);
  for (let i = 0; i < batch; i++) {
    let count = 0;
    for (let j = 0; j < tokens; j++) {
      weight[j] = Number(mask[i * tokens + j]);
      count += weight[j]!;
    }
    sums.fill(0);
    for (let j = 0; j < tokens; j++) {
      const w = weight[j]!;
      const row = (i * tokens + j) * dims;
      for (let k = 0; k < dims; k++) sums[k] = sums[k]! + states[row + k]! * w;
    }
    const at = i * dims;
    let norm = 0;
    for (let k = 0; k < dims; k++) {
      out[at + k] = sums[k]! / count;
      norm = Math.fround(norm + out[at + k]! ** 2);
    }
    norm = Math.fround(norm ** (1 / 2));
    for (let k = 0; k < dims; k++) out[at + k] = out[at + k]! / norm;
  }
  return out;
}

/**
 * Each text's first token state (BERT's [CLS]; `states` is batch × tokens ×
 * dims, row-major) scaled to unit length, as sentence-transformers' CLS
 * pooling with normalisation does.
 */
export function clsPooledUnit(states: Float32Array, batch: number, tokens: number, dims: number): Float32Array {
  const out = new Float32Array(batch * dims);
  for (let i = 0; i < batch; i++) {
    const row = i * tokens * dims;
    let norm = 0;
    for (let k = 0; k < dims; k++) norm += states[row + k]! ** 2;
    norm = Math.sqrt(norm);
    for (let k = 0; k < dims; k++) out[i * dims + k] = states[row + k]! / norm;
  }
  return out;
}

/** A progress report as transformers.js gives it: any field may be missing or of another type. */
type ReportedProgress = { [K in keyof ModelLoadProgress]?: unknown };

/** The type each optional field of {@link ModelLoadProgress} must have to be kept from a report. */
const PROGRESS_FIELD_TYPES = {
  file: 'string',
  progress: 'number',
  loaded: 'number',
  total: 'number',
} as const satisfies { [K in Exclude<keyof ModelLoadProgress, 'status'>]-?: 'string' | 'number' };

/** transformers.js' progress report as a {@link ModelLoadProgress}: the fields of the right type, the rest left out. */
function toProgress(info: unknown): ModelLoadProgress {
  const given: ReportedProgress = typeof info === 'object' && info !== null ? info : {};
  const fields = Object.keys(PROGRESS_FIELD_TYPES) as (keyof typeof PROGRESS_FIELD_TYPES)[];
  const kept = fields.filter((key) => typeof given[key] === PROGRESS_FIELD_TYPES[key]);
  const optional = Object.fromEntries(kept.map((key) => [key, given[key]])) as Omit<ModelLoadProgress, 'status'>;
  return { status: typeof given.status === 'string' ? given.status : 'unknown', ...optional };
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
