/**
 * The embedding models bench/eval measures, by short name: `glove` (the
 * offline default, always built) and `minilm` (all-MiniLM-L6-v2, measured
 * when its folder is present: `npm run model` assembles it in this repository).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  DEFAULT_EMBEDDING_MODEL,
  MINILM_EMBEDDING_MODEL,
  TransformersEmbedder,
  type Embedder,
} from '../../lib/index.js';

/** A model bench/eval can run. */
export interface EvalModel {
  name: 'glove' | 'minilm';
  /** The embedder id it has (what lib/search/retrieval-profile.ts keys on). */
  id: string;
  create: () => Promise<Embedder>;
}

export const EVAL_MODELS: readonly EvalModel[] = [
  { name: 'glove', id: DEFAULT_EMBEDDING_MODEL, create: () => TransformersEmbedder.create() },
  {
    name: 'minilm',
    id: MINILM_EMBEDDING_MODEL,
    create: () => TransformersEmbedder.create({ model: MINILM_EMBEDDING_MODEL }),
  },
];

/** Whether the model's folder is in the repository's models/ (where engram looks in Node). */
function present(model: EvalModel): boolean {
  return existsSync(resolve(import.meta.dirname, '..', '..', 'models', model.id, 'config.json'));
}

/**
 * The models named by `--model` (`glove`, `minilm`, `all`; default `all`):
 * those present, with a note for each one asked for by name and missing.
 */
export function evalModels(arg: string | undefined): EvalModel[] {
  const wanted = arg === undefined || arg === 'all' || arg === 'true' ? EVAL_MODELS.map((m) => m.name) : arg.split(',');
  for (const w of wanted)
    if (!EVAL_MODELS.some((m) => m.name === w)) throw new RangeError(`--model must be glove, minilm or all, not ${w}`);
  const out: EvalModel[] = [];
  for (const model of EVAL_MODELS.filter((m) => wanted.includes(m.name))) {
    if (present(model)) out.push(model);
    else console.log(`${model.name}: models/${model.id} is missing, not measured (build it with \`npm run model\`)`);
  }
  return out;
}
