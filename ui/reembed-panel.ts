/**
 * The re-embed offer, shared by the desktop status view and the demo's settings:
 * when the store's vectors were made by another model than the one picked, it says
 * so and offers "Re-embed N memories"; while that runs, a progress bar with the
 * count, the rate and the time left, and a Cancel button; then the result. It only
 * draws and counts: the run itself is the caller's (see reembed-store.ts).
 */
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

/** Runs the re-embed: reports progress, stops on the signal, says how it ended. */
export type RunReembed = (
  signal: AbortSignal,
  onProgress: (done: number, total: number) => void,
) => Promise<ReembedOutcome>;

/** The panel's state, also in `root.dataset.state`: hidden when nothing is offered. */
export type ReembedPanelState = 'hidden' | 'offer' | 'running' | 'done' | 'cancelled' | 'failed';

/** Memories per second for people: "1.2k/s", "85/s", "3.4/s". */
export function formatRate(perSecond: number): string {
  if (perSecond >= 1000) return `${(perSecond / 1000).toFixed(1)}k/s`;
  if (perSecond >= 10) return `${Math.round(perSecond)}/s`;
  return `${perSecond.toFixed(1)}/s`;
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

  /**
   * `onEnd` is called with every outcome (the app takes the reopened engram from it);
   * `onError` when a run started from the button rejects (the store could not be reopened).
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
   * Shows the offer, or nothing when `offer` is undefined (or has no memories); the last
   * run's result stays above either. A running re-embed is left as it is.
   */
  offer(offer: ReembedOffer | undefined): void {
    if (this.running) return;
    if (offer === undefined || offer.count === 0) {
      if (this.#result === undefined) this.#set('hidden');
      else this.#set((this.root.dataset['outcome'] ?? 'done') as ReembedPanelState, this.#result);
      return;
    }
    const memories = `${offer.count} memor${offer.count === 1 ? 'y' : 'ies'}`;
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
      h(
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
      ),
    );
  }

  /** Runs the re-embed with a progress bar and a Cancel button; resolves with its outcome. */
  async start(offer: ReembedOffer): Promise<ReembedOutcome> {
    if (this.#controller !== undefined) throw new TypeError('a re-embed is already running');
    const controller = new AbortController();
    this.#controller = controller;
    const bar = h('progress', { attrs: { max: String(offer.count), value: '0', 'data-testid': 'reembed-progress' } });
    const count = h('span', { attrs: { 'data-testid': 'reembed-count' } }, `0 / ${offer.count}`);
    const rate = h('span', { class: 'muted', attrs: { 'data-testid': 'reembed-rate' } }, 'starting the model…');
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
    let outcome: ReembedOutcome;
    try {
      outcome = await this.#run(controller.signal, (done, total) => {
        const now = performance.now();
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
      });
    } catch (error) {
      // The store could not even be reopened: nothing to hand back; the caller's error reporting takes it.
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
    this.root.hidden = state === 'hidden';
    replace(this.root, ...children);
  }
}
