/**
 * Re-embedding an app's open store with another model, shared by the demo page and
 * the desktop renderer: `engram.reembed()` runs on the store while it stays open, so
 * the app's views, the desktop's MCP hub and any other tab keep searching (with the
 * old model until the switch) and writing throughout. The new model is made by the
 * app's factory, whose download and load progress (transformers.js) is reported
 * before the first re-embed report.
 */
import {
  isEngramError,
  TransformersEmbedder,
  type Embedder,
  type Engram,
  type KnownEmbeddingModel,
  type ModelLoadProgress,
} from '../lib/index.js';

/**
 * The embedder of `model`, made when the re-embed starts: a factory (the engram owns what it
 * makes from the switch on); `onLoad` hears the model's download and load.
 */
export type EmbedderFor = (
  model: KnownEmbeddingModel,
  onLoad: (progress: ModelLoadProgress) => void,
) => () => Promise<Embedder>;

/** Both apps' {@link EmbedderFor}: the model's TransformersEmbedder (in its worker), its load reported to `onLoad`. */
export const transformersEmbedderFor: EmbedderFor = (model, onLoad) => () =>
  TransformersEmbedder.create({
    model: model.id,
    onProgress: (p) => {
      onLoad(p);
    },
  });

/** How a re-embed ended; the app's engram stays open throughout and holds `target` only when done. */
export type ReembedOutcome =
  | { readonly kind: 'done'; readonly total: number; readonly ms: number }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'failed'; readonly error: unknown };

/** What {@link reembedStore} needs. */
export interface ReembedStoreOptions {
  /** The app's open engram; it stays open. */
  readonly engram: Engram;
  /** The model to re-embed with. */
  readonly target: KnownEmbeddingModel;
  readonly embedderFor: EmbedderFor;
  readonly signal: AbortSignal;
  /** Memories embedded so far (including any an earlier, stopped run left) of all live memories. */
  readonly onProgress: (done: number, total: number) => void;
  /** The new model's download and load, before the first `onProgress`. */
  readonly onModelLoad?: (progress: ModelLoadProgress) => void;
}

/**
 * Re-embeds every memory of the open store with `target`. Never rejects: a stop or a
 * failure is an outcome, and the store then keeps its model and searches as before.
 * @example
 * const outcome = await reembedStore({ engram, target, embedderFor, signal, onProgress });
 */
export async function reembedStore(options: ReembedStoreOptions): Promise<ReembedOutcome> {
  const { engram, target, embedderFor, signal, onProgress, onModelLoad } = options;
  const started = performance.now();
  try {
    const { total } = await engram.reembed(
      embedderFor(target, (p) => {
        onModelLoad?.(p);
      }),
      {
        signal,
        onProgress: (p) => {
          if (p.phase === 'reembed') onProgress(p.done, p.total);
        },
      },
    );
    return { kind: 'done', total, ms: performance.now() - started };
  } catch (error) {
    // engram's AbortError, or whatever an embedder threw once the signal was up: either way, stopped by the user.
    const aborted = signal.aborted || (isEngramError(error) && error.code === 'ABORTED');
    return aborted ? { kind: 'cancelled' } : { kind: 'failed', error };
  }
}
