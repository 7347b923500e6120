/**
 * The demo's embedding model: the model picked (a select in the settings form,
 * saved in this browser) and, when the store's vectors were made by another
 * model, the re-embed offer above the page's panels with its progress, Cancel
 * and result (ui/reembed-panel.ts). A re-embed closes the page's engram and hands
 * the reopened one to the context.
 */
import { knownEmbeddingModel, type Engram, type KnownEmbeddingModel } from '../lib/index.js';
import { h, replace } from '../ui/dom.js';
import { saveModelChoice } from '../ui/model-picking.js';
import { ReembedPanel } from '../ui/reembed-panel.js';
import { reembedStore, type OpenWithModel, type ReembedOutcome } from '../ui/reembed-store.js';
import type { DemoContext } from './context.js';

/** What the panel needs from the page besides the context. */
export interface EmbeddingPanelOptions {
  /** localStorage key of the picked model. */
  readonly choiceKey: string;
  /** The known models this page serves, best first. */
  readonly served: readonly KnownEmbeddingModel[];
  /** The model picked at load (the saved choice, else the best served). */
  readonly picked: KnownEmbeddingModel;
  /** Opens the demo's store with a model (and re-embeds with `reembed`). */
  readonly open: OpenWithModel;
  /** Called with the reopened engram once a re-embed ended, and the run's time (the status line reads them). */
  readonly onReopened: (engram: Engram, ms: number) => Promise<void>;
}

/** The "Embedding model" fieldset of the settings and the re-embed card. */
export class EmbeddingPanel {
  readonly #ctx: DemoContext;
  readonly #options: EmbeddingPanelOptions;
  readonly #inUse = h('p', { class: 'small', attrs: { 'data-testid': 'model-in-use' } });
  readonly #select = h('select', { attrs: { id: 'embedding-model', 'data-testid': 'model-select' } });
  readonly #panel: ReembedPanel;
  readonly #card = h('section', { class: 'card reembed-card', attrs: { 'aria-label': 'Embedding model' } });
  #picked: KnownEmbeddingModel;
  #current: KnownEmbeddingModel | undefined;
  #startedAt = 0;

  constructor(ctx: DemoContext, options: EmbeddingPanelOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#picked = options.picked;
    replace(
      this.#select,
      ...options.served.map((m) =>
        h('option', { attrs: { value: m.id, selected: m.id === options.picked.id } }, `${m.label} · ${m.dimensions}-d`),
      ),
    );
    this.#select.addEventListener('change', (event) => {
      // Not the settings form's own change (its Save applies the answering model).
      event.stopPropagation();
      const model = options.served.find((m) => m.id === this.#select.value);
      if (model === undefined) return;
      this.#picked = model;
      saveModelChoice(options.choiceKey, model.id);
      void this.render().catch((e: unknown) => {
        ctx.showError(e);
      });
    });
    this.#panel = new ReembedPanel(
      (signal, onProgress) => this.#reembed(signal, onProgress),
      (outcome) => void this.#ended(outcome),
      (error) => {
        ctx.showError(error);
      },
    );
    const settings = document.getElementById('settings');
    settings?.prepend(
      h(
        'fieldset',
        { attrs: { 'data-testid': 'embedding-settings' } },
        h('legend', {}, 'Embedding model'),
        this.#inUse,
        h(
          'label',
          { class: 'embedding-pick', attrs: { for: 'embedding-model' } },
          'Model picked for this store ',
          this.#select,
        ),
      ),
    );
    replace(this.#card, h('h2', {}, 'Embedding model'), this.#panel.root);
    this.#card.hidden = true;
    const layout = document.querySelector('main.layout');
    layout?.before(this.#card);
  }

  /** Re-reads the model in use; shows the offer when the picked model differs. */
  async render(): Promise<void> {
    if (this.#panel.running) return;
    const engram = this.#ctx.engram;
    const [ready, { total }] = await Promise.all([engram.ready(), engram.getAll({ limit: 1 })]);
    this.#current = knownEmbeddingModel(ready.embedderId);
    this.#inUse.dataset['model'] = ready.embedderId;
    replace(
      this.#inUse,
      'In use: ',
      h('strong', {}, this.#current?.label ?? ready.embedderId),
      ` (${ready.embedderId}, ${ready.dimensions}-d), for ${total} memor${total === 1 ? 'y' : 'ies'}.`,
    );
    const differs = this.#current !== undefined && this.#current.id !== this.#picked.id;
    this.#panel.offer(
      differs ? { from: this.#current?.label ?? ready.embedderId, to: this.#picked.label, count: total } : undefined,
    );
    this.#card.hidden = this.#panel.state === 'hidden';
  }

  #reembed(signal: AbortSignal, onProgress: (done: number, total: number) => void): Promise<ReembedOutcome> {
    const fallback = this.#current;
    if (fallback === undefined) throw new TypeError('the model in use is not known yet');
    this.#select.disabled = true;
    this.#startedAt = performance.now();
    return reembedStore({
      current: this.#ctx.engram,
      target: this.#picked,
      fallback,
      open: this.#options.open,
      signal,
      onProgress,
    }).finally(() => {
      this.#select.disabled = false;
    });
  }

  async #ended(outcome: ReembedOutcome): Promise<void> {
    this.#ctx.engram = outcome.engram;
    if (outcome.kind === 'failed') this.#ctx.showError(outcome.error);
    try {
      await this.#options.onReopened(outcome.engram, performance.now() - this.#startedAt);
      await this.render();
    } catch (e) {
      this.#ctx.showError(e);
    }
  }
}
