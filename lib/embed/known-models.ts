/**
 * The embedding models engram knows, best first: the one ordered list the apps
 * pick from (the first whose folder is there), the desktop build copies from, and
 * people read labels in. The offline model is last: always buildable from the npm
 * registry alone, it is what is left when no better model's folder is present.
 * Imports only its own folder.
 */
import { DEFAULT_EMBEDDING_MODEL, E5_SMALL_EMBEDDING_MODEL, MINILM_EMBEDDING_MODEL } from './transformers-embedder.js';

/** A model of {@link KNOWN_EMBEDDING_MODELS}. */
export interface KnownEmbeddingModel {
  /** What `npx engram-model --model` takes (scripts/sentence-models.mjs lists the same models, in this order). */
  readonly name: 'e5-small' | 'minilm' | 'bge-small' | 'glove';
  /** Its folder under `localModelPath` (`/models/<id>/` in browsers), and the embedder id it gets. */
  readonly id: string;
  /** What people read: the model and what kind it is. */
  readonly label: string;
  /** Length of its vectors. */
  readonly dimensions: number;
}

/** The offline default: last in the list, and what is left when nothing better is present. */
const OFFLINE_MODEL: KnownEmbeddingModel = Object.freeze({
  name: 'glove',
  id: DEFAULT_EMBEDDING_MODEL,
  label: 'offline GloVe word vectors',
  dimensions: 100,
});

/**
 * Every model engram knows, best first (by evidence recall on LoCoMo's tuning
 * half, bench/results/REPORT.md, section eval), the offline default last. How
 * each is searched (e5's "query: " / "passage: " marks, fusion weights) is keyed
 * by its id in lib/search/retrieval-profile.ts and applied by engram itself.
 * @example KNOWN_EMBEDDING_MODELS.map((m) => m.id) // ['Xenova/e5-small-v2', 'Xenova/bge-small-en-v1.5', 'Xenova/all-MiniLM-L6-v2', 'engram-glove-100d']
 */
export const KNOWN_EMBEDDING_MODELS: readonly KnownEmbeddingModel[] = Object.freeze([
  Object.freeze({
    name: 'e5-small',
    id: E5_SMALL_EMBEDDING_MODEL,
    label: 'e5-small-v2 sentence model (int8)',
    dimensions: 384,
  }),
  Object.freeze({
    name: 'bge-small',
    id: 'Xenova/bge-small-en-v1.5',
    label: 'bge-small-en-v1.5 sentence model (int8)',
    dimensions: 384,
  }),
  Object.freeze({
    name: 'minilm',
    id: MINILM_EMBEDDING_MODEL,
    label: 'all-MiniLM-L6-v2 sentence model (int8)',
    dimensions: 384,
  }),
  OFFLINE_MODEL,
]);

/**
 * The known model of this id, or undefined (an id from storage or another program is untrusted).
 * @example knownEmbeddingModel('engram-glove-100d')?.label // 'offline GloVe word vectors'
 */
export function knownEmbeddingModel(id: unknown): KnownEmbeddingModel | undefined {
  return typeof id === 'string' ? KNOWN_EMBEDDING_MODELS.find((m) => m.id === id) : undefined;
}

/**
 * The model to embed with: `preferred` when it is a known model that is present,
 * else the first known model present, else the offline default (whose absence
 * `TransformersEmbedder.create()` then reports). `isPresent` is asked about one
 * model at a time, best first; a presence check that throws counts as absent.
 * @example
 * const model = await pickEmbeddingModel(async (id) => (await fetch(`/models/${id}/config.json`)).ok);
 */
export async function pickEmbeddingModel(
  isPresent: (id: string) => Promise<boolean>,
  preferred?: string,
): Promise<KnownEmbeddingModel> {
  const present = async (model: KnownEmbeddingModel): Promise<boolean> => {
    try {
      return await isPresent(model.id);
    } catch {
      return false;
    }
  };
  const wanted = knownEmbeddingModel(preferred);
  if (wanted !== undefined && (await present(wanted))) return wanted;
  for (const model of KNOWN_EMBEDDING_MODELS) if (model !== wanted && (await present(model))) return model;
  return OFFLINE_MODEL;
}
