/**
 * Which embedding model an app opens its store with, shared by the demo page and
 * the desktop renderer: the known models whose folders are served (`/models/<id>/`),
 * the user's saved choice, and the model the store's vectors were made with.
 * A store opens with its own model while that model is served (re-embedding to a
 * better one is offered, never forced); only when its model is gone does opening
 * re-embed. Everything read here is untrusted: a saved choice is kept only when it
 * names a known model, a folder counts as served only when its config.json is a JSON object.
 */
import {
  Engram,
  KNOWN_EMBEDDING_MODELS,
  knownEmbeddingModel,
  pickEmbeddingModel,
  type AtRestEncryption,
  type EmbedderRecord,
  type KnownEmbeddingModel,
} from '../lib/index.js';

/** Where browsers find model folders (TransformersEmbedder's default `localModelPath`). */
export const MODELS_BASE = '/models/';

/**
 * Whether the folder of model `id` is served under `base`: its config.json answers with a JSON object
 * (a page server's fallback HTML for a missing file does not count).
 * @example await modelServed('Xenova/all-MiniLM-L6-v2') // true when `npm run model` built it
 */
export async function modelServed(id: string, base = MODELS_BASE): Promise<boolean> {
  const response = await fetch(`${base}${id}/config.json`, { cache: 'no-store' });
  if (!response.ok) return false;
  const body: unknown = await response.json().catch(() => undefined);
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

/**
 * The model folders the server lists at `<base>index.json` (ui/serve-models.ts serves it, and a
 * desktop build writes it), or undefined when there is no such listing or it is not one.
 */
async function listedModels(base: string): Promise<Set<string> | undefined> {
  const response = await fetch(`${base}index.json`, { cache: 'no-store' }).catch(() => undefined);
  if (response?.ok !== true) return undefined;
  const body: unknown = await response.json().catch(() => undefined);
  const models = typeof body === 'object' && body !== null ? (body as { models?: unknown }).models : undefined;
  if (!Array.isArray(models) || !models.every((m) => typeof m === 'string')) return undefined;
  return new Set(models);
}

/**
 * The known models whose folders are served, best first: those the server's listing names and
 * whose config.json is there; without a listing, each known model's config.json is asked for
 * (a failed check counts as absent).
 */
export async function servedModels(base = MODELS_BASE): Promise<KnownEmbeddingModel[]> {
  const listed = await listedModels(base);
  const candidates = KNOWN_EMBEDDING_MODELS.filter((m) => listed === undefined || listed.has(m.id));
  const served = await Promise.all(candidates.map((m) => modelServed(m.id, base).catch(() => false)));
  return candidates.filter((_, i) => served[i] === true);
}

/** The model id saved under `key` in localStorage, when it names a known model. */
export function loadModelChoice(key: string): string | undefined {
  let saved: string | null = null;
  try {
    saved = localStorage.getItem(key);
  } catch {
    return undefined;
  }
  return knownEmbeddingModel(saved)?.id;
}

/** Saves the chosen model id under `key` (only a known model's). */
export function saveModelChoice(key: string, id: string): void {
  const model = knownEmbeddingModel(id);
  if (model !== undefined) localStorage.setItem(key, model.id);
}

/** A model id for people: the known model's label and id, or the id alone. */
export function modelName(id: string): string {
  const model = knownEmbeddingModel(id);
  return model === undefined ? id : `${model.label} (${model.id})`;
}

/** What an app opens its store with. */
export interface ModelPlan {
  /** The model the store's vectors were made with; undefined when it never embedded anything. */
  readonly stored: EmbedderRecord | undefined;
  /** The known models served here, best first. */
  readonly served: readonly KnownEmbeddingModel[];
  /** The model the app wants: the saved choice when served, else the best served. */
  readonly picked: KnownEmbeddingModel;
  /** The model to open the store with: the store's own while it is served, else the picked one. */
  readonly open: KnownEmbeddingModel;
  /** True when opening must re-embed: the store's vectors were made by a model not served here. */
  readonly reembedAtOpen: boolean;
}

/** Where {@link planModels} looks. */
export interface PlanOptions {
  /**
   * The store's encryption at rest, as the app opens it: the store's model is read
   * from its sealed rows, so an encrypted store needs its key (a KeyError without it,
   * or with the wrong one, before anything is read or written: the key check).
   */
  readonly encryption?: AtRestEncryption;
  /** Where the model folders are served. @default MODELS_BASE */
  readonly base?: string;
}

/**
 * Plans how to open the store `dbName`, with the choice saved under `choiceKey`.
 * @example
 * const plan = await planModels('engram-desktop', 'engram-desktop:embedding-model', { encryption: { key } });
 * await Engram.open({ name: 'engram-desktop', encryption: { key }, embedder: () => TransformersEmbedder.create({ model: plan.open.id }) });
 */
export async function planModels(dbName: string, choiceKey: string, options: PlanOptions = {}): Promise<ModelPlan> {
  const base = options.base ?? MODELS_BASE;
  const [stored, served] = await Promise.all([
    Engram.storedEmbedder(dbName, options.encryption === undefined ? {} : { encryption: options.encryption }),
    servedModels(base),
  ]);
  const picked = await pickEmbeddingModel(
    (id) => Promise.resolve(served.some((m) => m.id === id)),
    loadModelChoice(choiceKey),
  );
  const own = stored === undefined ? undefined : served.find((m) => m.id === stored.id);
  if (stored === undefined) return { stored, served, picked, open: picked, reembedAtOpen: false };
  if (own !== undefined && own.dimensions === stored.dimensions)
    return { stored, served, picked, open: own, reembedAtOpen: false };
  return { stored, served, picked, open: picked, reembedAtOpen: true };
}
