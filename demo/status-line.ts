/**
 * The status line and the loading card: model-loading progress (the worker's
 * transformers.js events), index loading phases, then the embedder, where the
 * index came from and how many memories the browser holds.
 */
import {
  knownEmbeddingModel,
  type IndexOrigin,
  type IndexProgress,
  type TransformersEmbedderOptions,
} from '../lib/index.js';
import { byId, formatMs } from '../ui/dom.js';

/** One model-loading event (lib/index.ts does not export the ModelLoadProgress name yet). */
export type ModelLoadProgress = Parameters<NonNullable<TransformersEmbedderOptions['onProgress']>>[0];

/** What `engram.ready()` reports. */
export interface ReadyInfo {
  embedderId: string;
  dimensions: number;
  index: IndexOrigin;
  size: number;
}

/** transformers.js loading statuses, in words. */
const STATUS_TEXT: Record<string, string> = {
  initiate: 'opening',
  download: 'fetching',
  progress: 'loading',
  done: 'loaded',
};

const ORIGIN_TEXT: Record<IndexOrigin, string> = {
  snapshot: 'restored from its snapshot',
  rebuild: 'rebuilt from the stored vectors',
  empty: 'started empty',
};

/** Drives #status, #loading and body[data-state]. */
export class StatusLine {
  readonly #text = byId('status-text');
  readonly #status = byId('status');
  readonly #loading = byId('loading');
  readonly #bar = byId('loading-bar');
  readonly #detail = byId('loading-detail');
  readonly #files = new Map<string, { loaded: number; total: number }>();
  #info: ReadyInfo | undefined;
  #loadMs = 0;

  /**
   * A transformers.js loading event from the worker. The files are announced one
   * after another, so the bar follows the file being loaded (the model file is
   * most of the bytes) and the text counts every byte loaded so far.
   */
  model(p: ModelLoadProgress): void {
    if (p.file !== undefined && p.total !== undefined && p.total > 0) {
      this.#files.set(p.file, { loaded: p.loaded ?? (p.status === 'done' ? p.total : 0), total: p.total });
    } else if (p.file !== undefined && p.status === 'done') {
      const f = this.#files.get(p.file);
      if (f !== undefined) f.loaded = f.total;
    }
    let loaded = 0;
    for (const f of this.#files.values()) loaded += f.loaded;
    const file = p.file === undefined ? undefined : this.#files.get(p.file);
    const pct = p.status === 'ready' ? 100 : file === undefined ? 0 : Math.min(100, (file.loaded / file.total) * 100);
    this.#bar.style.width = `${pct.toFixed(1)}%`;
    const mb = (n: number): string => (n / 1_048_576).toFixed(1);
    const verb = STATUS_TEXT[p.status] ?? p.status;
    const what =
      p.status === 'ready'
        ? 'model ready, warming up'
        : p.file === undefined
          ? verb
          : `${verb} ${p.file}${file === undefined ? '' : ` ${Math.round(pct)}%`}`;
    this.#detail.textContent = `${what} · ${mb(loaded)} MB loaded`;
    this.#set('loading', `Loading the embedding model… ${mb(loaded)} MB`);
  }

  /** Progress of restoring, replaying or rebuilding the vector index. */
  index(p: IndexProgress): void {
    const phase =
      p.phase === 'restore'
        ? 'Restoring the index snapshot'
        : p.phase === 'replay'
          ? 'Replaying changes'
          : p.phase === 'rebuild'
            ? 'Rebuilding the index'
            : 'Re-embedding memories';
    this.#detail.textContent = `${phase} (${p.done}/${p.total})`;
  }

  /** The model and the index are loaded. */
  ready(info: ReadyInfo, loadMs: number): void {
    this.#info = info;
    this.#loadMs = loadMs;
    this.#bar.style.width = '100%';
    this.#loading.hidden = true;
  }

  /** Refreshes the counts in the ready line. */
  counts(memories: number, indexSize: number): void {
    const info = this.#info;
    if (info === undefined) return;
    this.#set(
      'ready',
      `${knownEmbeddingModel(info.embedderId)?.label ?? 'embedder'}: ${info.embedderId} (${info.dimensions}-d) · ready in ${formatMs(this.#loadMs)} · index: ${indexSize} vector${indexSize === 1 ? '' : 's'}, ${ORIGIN_TEXT[info.index]} at load · ${memories} memor${memories === 1 ? 'y' : 'ies'} in this browser`,
    );
    this.#status.dataset['index'] = info.index;
    this.#status.dataset['embedder'] = info.embedderId;
    this.#status.dataset['memories'] = String(memories);
  }

  /** The store is closed while the "Encryption at rest" card converts it; the next counts() says ready again. */
  converting(): void {
    this.#set(
      'converting',
      'The store is being converted (Encryption at rest): the other panels wait until it reopens…',
    );
  }

  /** A conversion ended badly: `text` says what happened and how the store is kept now; the next counts() says ready. */
  conversionFailed(text: string): void {
    this.#set('failed', text);
  }

  /** Loading failed. */
  failed(message: string): void {
    this.#loading.hidden = true;
    document.body.dataset['state'] = 'failed';
    this.#set('failed', message);
  }

  #set(state: string, text: string): void {
    this.#status.dataset['state'] = state;
    this.#text.textContent = text;
  }
}
