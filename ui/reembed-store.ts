/**
 * Re-embedding an app's open store with another model, shared by the demo page
 * and the desktop renderer. engram re-embeds while it opens a store (`reembed`),
 * so the open instance is closed first and the store reopened with the new model;
 * when the run is cancelled or fails, engram has put back every vector it replaced
 * and the store is reopened with the model it had. Either way the caller gets an
 * open engram back.
 */
import { isEngramError, type Engram, type IndexProgress, type KnownEmbeddingModel } from '../lib/index.js';

/** Opens the app's store with `model`; `reembed` is passed on to `Engram.open()`. */
export type OpenWithModel = (
  model: KnownEmbeddingModel,
  reembed?: { signal: AbortSignal; onProgress: (p: IndexProgress) => void },
) => Promise<Engram>;

/** How a re-embed ended; `engram` is the store open again, with the model it now holds. */
export type ReembedOutcome =
  | { readonly kind: 'done'; readonly engram: Engram; readonly total: number; readonly ms: number }
  | { readonly kind: 'cancelled'; readonly engram: Engram }
  | { readonly kind: 'failed'; readonly engram: Engram; readonly error: unknown };

/** What {@link reembedStore} needs. */
export interface ReembedStoreOptions {
  /** The store's open instance; closed first. */
  readonly current: Engram;
  /** The model to re-embed with. */
  readonly target: KnownEmbeddingModel;
  /** The model the store holds now, reopened when the run stops. */
  readonly fallback: KnownEmbeddingModel;
  readonly open: OpenWithModel;
  readonly signal: AbortSignal;
  /** Memories embedded so far (including any a killed earlier run left) of all live memories. */
  readonly onProgress: (done: number, total: number) => void;
}

/**
 * Re-embeds every memory of the store with `target`.
 * Rejects only when the store cannot be reopened with its old model either.
 * @example
 * const outcome = await reembedStore({ current: engram, target, fallback, open, signal, onProgress });
 * engram = outcome.engram;
 */
export async function reembedStore(options: ReembedStoreOptions): Promise<ReembedOutcome> {
  const { current, target, fallback, open, signal, onProgress } = options;
  const started = performance.now();
  let total = 0;
  await current.close();
  try {
    const engram = await open(target, {
      signal,
      onProgress: (p) => {
        if (p.phase !== 'reembed') return;
        total = p.total;
        onProgress(p.done, p.total);
      },
    });
    return { kind: 'done', engram, total, ms: performance.now() - started };
  } catch (error) {
    const engram = await open(fallback);
    // engram's AbortError, or whatever an embedder threw once the signal was up: either way, stopped by the user.
    const aborted = signal.aborted || (isEngramError(error) && error.code === 'ABORTED');
    return aborted ? { kind: 'cancelled', engram } : { kind: 'failed', engram, error };
  }
}
