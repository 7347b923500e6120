/**
 * The embedding model a benchmark runs with (`--model glove|minilm|e5-small`): the
 * offline default, all-MiniLM-L6-v2 or e5-small-v2 (int8), as the Node side names it and as
 * the page receives it (the `model` query parameter). Results of a model other
 * than the default go to `<benchmark>-<model>.json`, beside the default's.
 */
import {
  DEFAULT_EMBEDDING_MODEL,
  E5_SMALL_EMBEDDING_MODEL,
  MINILM_EMBEDDING_MODEL,
} from '../../lib/embed/transformers-embedder.js';

export const BENCH_MODELS = {
  glove: { id: DEFAULT_EMBEDDING_MODEL, label: 'offline model' },
  minilm: { id: MINILM_EMBEDDING_MODEL, label: 'MiniLM (all-MiniLM-L6-v2, int8)' },
  'e5-small': { id: E5_SMALL_EMBEDDING_MODEL, label: 'e5-small (e5-small-v2, int8)' },
} as const;

export type BenchModel = keyof typeof BENCH_MODELS;

/**
 * The model named by `value` (default glove); throws on an unknown name.
 * @example benchModelOf(option('model')) // 'minilm'
 */
export function benchModelOf(value: string | null | undefined): BenchModel {
  const name = value ?? 'glove';
  if (!Object.hasOwn(BENCH_MODELS, name))
    throw new RangeError(`unknown model ${name}: one of ${Object.keys(BENCH_MODELS).join(', ')}`);
  return name as BenchModel;
}

/**
 * The result file name of `benchmark` run with `model`.
 * @example resultName('ingest', 'minilm') // 'ingest-minilm'
 */
export function resultName(benchmark: string, model: BenchModel): string {
  return model === 'glove' ? benchmark : `${benchmark}-${model}`;
}
