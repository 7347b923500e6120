/**
 * The re-embed offer, shared by the desktop status view and the demo's settings:
 * when the store's vectors were made by another model than the one picked, it says
 * so and offers "Re-embed N memories"; while that runs, first the new model's
 * download and load (bytes and percent, `data-phase="model"`), then a progress bar
 * with the count, the rate and the time left (`data-phase="reembed"`), and a Cancel
 * button throughout; then the result. It only draws and counts: the run itself is the
 * caller's (see reembed-store.ts).
 */
import { StoreError, type ModelLoadProgress } from '../lib/index.js';
import { formatMs, h, replace } from './dom.js';
import type { ReembedOutcome } from './reembed-store.js';

/** What the panel offers: re-embedding `count` memories made by `from` with `to`. */
export interface ReembedOffer {
  /** The model the store's vectors were made with, for people. */
  readonly from: string;
  /** The model picked now, for people. */
  readonly to: string;
  /** Live memories to re-embed. */
  readonly count: number;
}

/** Runs the re-embed: reports the model's load, then progress; stops on the signal; says how it ended. */
export type RunReembed = (
  signal: AbortSignal,
  onProgress: (done: number, total: number) => void,
  onModelLoad: (progress: ModelLoadProgress) => void,
) => Promise<ReembedOutcome>;

/** The panel's state, also in `root.dataset.state`: hidden when nothing is offered. */
export type ReembedPanelState = 'hidden' | 'offer' | 'running' | 'done' | 'cancelled' | 'failed';

/** Memories per second for people: "1.2k/s", "85/s", "3.4/s". */
export function formatRate(perSecond: number): string {
  if (perSecond >= 1000) return `${(perSecond / 1000).toFixed(1)}k/s`;
  if (perSecond >= 10) return `${Math.round(perSecond)}/s`;
  return `${perSecond.toFixed(1)}/s`;
}

/** Megabytes for people: "12.3 MB". */
function formatMb(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

/** The offer, the progress and the result of a re-embed. */
export class ReembedPanel {
  readonly root = h('div', {
    class: 'reembed',
    attrs: { 'data-testid': 'reembed-panel', 'data-state': 'hidden', role: 'region', 'aria-label': 'Re-embedding' },
  });
  readonly #run: RunReembed;
  readonly #onEnd: (outcome: ReembedOutcome) => void;
  readonly #onError: (error: unknown) => void;
  #controller: AbortController | undefined;
  /** The last run's result line, kept above a renewed offer. */
  #result: HTMLElement | undefined;
  /** Why a re-embed cannot start now (other long work on the store, ui/store-work.ts), or undefined. */
  #blocked: string | undefined;
  /** The offer's start button, while one is shown. */
  #startButton: HTMLButtonElement | undefined;
  /** Says why the start button is disabled, under it. */
  readonly #blockedNote = h('p', { class: 'small muted', attrs: { 'data-testid': 'reembed-blocked', hidden: true } });

  /**
   * `onEnd` is called with every outcome (the app learns the model its store now holds);
   * `onError` when a run started from the button rejects.
   */
  constructor(run: RunReembed, onEnd: (outcome: ReembedOutcome) => void, onError: (error: unknown) => void) {
    this.#run = run;
    this.#onEnd = onEnd;
    this.#onError = onError;
    this.root.hidden = true;
  }

  get state(): ReembedPanelState {
    return (this.root.dataset['state'] ?? 'hidden') as ReembedPanelState;
  }

  /** True while a re-embed runs. */
  get running(): boolean {
    return this.#controller !== undefined;
  }

  /**
   * Disables the offer's start button with `reason` (its title and a note under it) while other long
   * work runs on the store, and refuses {@link start}; undefined makes it available again.
   */
  block(reason: string | undefined): void {
    this.#blocked = reason;
    this.#blockedNote.hidden = reason === undefined;
    this.#blockedNote.textContent = reason ?? '';
    if (this.#startButton === undefined) return;
    this.#startButton.disabled = reason !== undefined;
    if (reason === undefined) this.#startButton.removeAttribute('title');
    else this.#startButton.title = reason;
  }

  /**
   * Shows the offer, or nothing when `offer` is undefined (or has no memories); the last
   * run's result stays above either. A running re-embed is left as it is.
   */
  offer(offer: ReembedOffer | undefined): void {
    if (this.running) return;
    if (offer === undefined || offer.count === 0) {
      this.#startButton = undefined;
      if (this.#result === undefined) this.#set('hidden');
      else this.#set((this.root.dataset['outcome'] ?? 'done') as ReembedPanelState, this.#result);
      return;
    }
    const memories = `${offer.count} memor${offer.count === 1 ? 'y' : 'ies'}`;
    this.#startButton = h(
      'button',
      {
        class: 'primary',
        attrs: { type: 'button', 'data-testid': 'reembed-start' },
        on: {
          click: () => {
            this.start(offer).catch(this.#onError);
          },
        },
      },
      `Re-embed ${memories}`,
    );
    this.block(this.#blocked);
    this.#set(
      'offer',
      ...(this.#result === undefined ? [] : [this.#result]),
      h(
        'p',
        { attrs: { 'data-testid': 'reembed-note' } },
        'The stored vectors were made by ',
        h('strong', {}, offer.from),
        '; the model picked now is ',
        h('strong', {}, offer.to),
        '. Search uses the stored model until the memories are re-embedded.',
      ),
      this.#startButton,
      this.#blockedNote,
    );
  }

  /**
   * Runs the re-embed with a progress bar and a Cancel button; resolves with its outcome. Refused with a
   * `StoreError` (nothing started) while {@link block}ed.
   */
  async start(offer: ReembedOffer): Promise<ReembedOutcome> {
    if (this.#controller !== undefined) throw new TypeError('a re-embed is already running');
    if (this.#blocked !== undefined) throw new StoreError(this.#blocked);
    this.#startButton = undefined;
    const controller = new AbortController();
    this.#controller = controller;
    const bar = h('progress', { attrs: { max: String(offer.count), value: '0', 'data-testid': 'reembed-progress' } });
    const count = h('span', { attrs: { 'data-testid': 'reembed-count' } }, `0 / ${offer.count}`);
    const rate = h('span', { class: 'muted', attrs: { 'data-testid': 'reembed-rate' } }, 'loading the model…');
    const cancel = h(
      'button',
      {
        attrs: { type: 'button', 'data-testid': 'reembed-cancel' },
        on: {
          click: () => {
            cancel.disabled = true;
            cancel.textContent = 'Cancelling…';
            controller.abort();
          },
        },
      },
      'Cancel',
    );
    this.#set(
      'running',
      h('p', {}, 'Re-embedding with ', h('strong', {}, offer.to), '…'),
      bar,
      h('p', { class: 'reembed-line' }, count, ' · ', rate, ' ', cancel),
    );
    const started = performance.now();
    let first: { done: number; at: number } | undefined;
    /** Bytes of each model file, as transformers.js reports its download and load. */
    const files = new Map<string, { loaded: number; total: number }>();
    this.root.dataset['phase'] = 'model';
    const onModelLoad = (p: ModelLoadProgress): void => {
      // The model's reports may trail the first re-embed report (a cached model says "ready" late): the count stays.
      if (first !== undefined) return;
      if (p.file !== undefined && p.total !== undefined && p.total > 0)
        files.set(p.file, { loaded: p.loaded ?? (p.status === 'done' ? p.total : 0), total: p.total });
      else if (p.file !== undefined && p.status === 'done') {
        const f = files.get(p.file);
        if (f !== undefined) f.loaded = f.total;
      }
      let loaded = 0;
      let size = 0;
      for (const f of files.values()) {
        loaded += f.loaded;
        size += f.total;
      }
      const percent = p.status === 'ready' ? 100 : size > 0 ? Math.min(100, (loaded / size) * 100) : 0;
      bar.max = 100;
      bar.value = percent;
      this.root.dataset['model'] = String(Math.round(percent));
      count.textContent = `model ${Math.round(percent)}%`;
      rate.textContent =
        p.status === 'ready'
          ? `model loaded (${formatMb(loaded)}), starting…`
          : `loading the model${p.file === undefined ? '' : ` · ${p.file}`} · ${formatMb(loaded)}${size > 0 ? ` of ${formatMb(size)}` : ''}`;
    };
    let outcome: ReembedOutcome;
    try {
      outcome = await this.#run(
        controller.signal,
        (done, total) => {
          const now = performance.now();
          this.root.dataset['phase'] = 'reembed';
          if (first === undefined) rate.textContent = 'embedding…';
          // The rate counts from the first report: memories an earlier run left embedded cost nothing now.
          first ??= { done, at: now };
          bar.max = Math.max(total, 1);
          bar.value = done;
          this.root.dataset['done'] = String(done);
          this.root.dataset['total'] = String(total);
          count.textContent = `${done} / ${total}`;
          const perSecond = (done - first.done) / ((now - first.at) / 1000);
          if (done > first.done && Number.isFinite(perSecond) && perSecond > 0) {
            rate.textContent = `${formatRate(perSecond)} · about ${formatMs(((total - done) / perSecond) * 1000)} left`;
          }
        },
        onModelLoad,
      );
    } catch (error) {
      // A run that rejects (reembedStore never does): the caller's error reporting takes it.
      this.#controller = undefined;
      this.#set('failed', h('p', { attrs: { 'data-testid': 'reembed-result' } }, 'Re-embedding failed.'));
      throw error;
    }
    this.#controller = undefined;
    const elapsed = formatMs(performance.now() - started);
    let result: HTMLElement;
    if (outcome.kind === 'done') {
      result = h(
        'p',
        { attrs: { 'data-testid': 'reembed-result' } },
        `Re-embedded ${outcome.total} memor${outcome.total === 1 ? 'y' : 'ies'} with `,
        h('strong', {}, offer.to),
        ` in ${elapsed}. Search now uses it.`,
      );
    } else if (outcome.kind === 'cancelled') {
      result = h(
        'p',
        { attrs: { 'data-testid': 'reembed-result' } },
        `Cancelled after ${elapsed}: nothing was changed, the store keeps the vectors of `,
        h('strong', {}, offer.from),
        ' and searches as before.',
      );
    } else {
      const reason = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
      result = h(
        'p',
        { attrs: { 'data-testid': 'reembed-result' } },
        `Re-embedding failed (${reason}); the store keeps the vectors of `,
        h('strong', {}, offer.from),
        '.',
      );
    }
    this.#result = result;
    this.root.dataset['outcome'] = outcome.kind;
    this.#set(outcome.kind, result);
    this.#onEnd(outcome);
    return outcome;
  }

  #set(state: ReembedPanelState, ...children: (Node | string)[]): void {
    this.root.dataset['state'] = state;
    if (state !== 'running') {
      delete this.root.dataset['phase'];
      delete this.root.dataset['model'];
    }
    this.root.hidden = state === 'hidden';
    replace(this.root, ...children);
  }
}
