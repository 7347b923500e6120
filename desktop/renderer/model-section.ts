/**
 * The status view's "Embedding model" card: the model the store's vectors are
 * made with (in use), the models this app serves with the one picked for the store
 * (saved in localStorage), and, when they differ, the re-embed offer with its
 * progress, Cancel and result (ui/reembed-panel.ts). Re-embedding closes the app's
 * engram and hands the reopened one to the context, as an import does.
 */
import { knownEmbeddingModel, type KnownEmbeddingModel } from '../../lib/index.js';
import { h, replace } from '../../ui/dom.js';
import { saveModelChoice } from '../../ui/model-picking.js';
import { ReembedPanel } from '../../ui/reembed-panel.js';
import { reembedStore, type OpenWithModel, type ReembedOutcome } from '../../ui/reembed-store.js';
import type { AppContext } from './app-context.js';

/** What the section needs from the app besides the context. */
export interface ModelSectionOptions {
  /** localStorage key of the picked model. */
  readonly choiceKey: string;
  /** The known models this app serves, best first. */
  readonly served: readonly KnownEmbeddingModel[];
  /** The model picked at start (the saved choice, else the best served). */
  readonly picked: KnownEmbeddingModel;
  /** Opens the app's store with a model (and re-embeds with `reembed`). */
  readonly open: OpenWithModel;
  /** Called when the store is open with another model (what a later reopen, after an import, must use). */
  readonly onModel: (model: KnownEmbeddingModel) => void;
}

/** The "Embedding model" card of the status view. */
export class ModelSection {
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #options: ModelSectionOptions;
  readonly #inUse = h('p', { attrs: { 'data-testid': 'model-in-use' } });
  readonly #select = h('select', { attrs: { 'data-testid': 'model-select', id: 'model-select' } });
  readonly #panel: ReembedPanel;
  #picked: KnownEmbeddingModel;
  /** The model the open store holds, once read. */
  #current: KnownEmbeddingModel | undefined;

  constructor(ctx: AppContext, options: ModelSectionOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#picked = options.picked;
    replace(
      this.#select,
      ...options.served.map((m) =>
        h('option', { attrs: { value: m.id, selected: m.id === options.picked.id } }, `${m.label} · ${m.dimensions}-d`),
      ),
    );
    this.#select.addEventListener('change', () => {
      const model = options.served.find((m) => m.id === this.#select.value);
      if (model === undefined) return;
      this.#picked = model;
      saveModelChoice(options.choiceKey, model.id);
      void this.show().catch((e: unknown) => {
        ctx.showError(e);
      });
    });
    this.#panel = new ReembedPanel(
      (signal, onProgress) => this.#reembed(signal, onProgress),
      (outcome) => {
        this.#ended(outcome);
      },
      (error) => {
        ctx.showError(error);
      },
    );
    this.root = h(
      'section',
      { class: 'card model-card', attrs: { 'data-testid': 'model-card' } },
      h('h2', {}, 'Embedding model'),
      this.#inUse,
      h(
        'div',
        { class: 'field' },
        h('label', { attrs: { for: 'model-select' } }, 'Model picked'),
        h('div', { class: 'row' }, this.#select, h('span', { class: 'muted small' }, 'best first; saved in this app')),
      ),
      this.#panel.root,
    );
  }

  /** True while a re-embed runs: the app's engram is closed until it ends. */
  get running(): boolean {
    return this.#panel.running;
  }

  /** The picked model (the select's). */
  get picked(): KnownEmbeddingModel {
    return this.#picked;
  }

  /** Re-reads the model in use and the number of memories; shows the offer when the picked model differs. */
  async show(): Promise<void> {
    if (this.#panel.running) return;
    const engram = this.#ctx.engram;
    const [ready, { total }] = await Promise.all([engram.ready(), engram.getAll({ limit: 1 })]);
    this.#current = knownEmbeddingModel(ready.embedderId);
    this.#inUse.dataset['model'] = ready.embedderId;
    replace(
      this.#inUse,
      'In use: ',
      h('strong', {}, this.#current?.label ?? ready.embedderId),
      h(
        'span',
        { class: 'muted' },
        ` · ${ready.embedderId}, ${ready.dimensions}-d · runs in a Web Worker, offline · ${total} memor${total === 1 ? 'y' : 'ies'}`,
      ),
    );
    const differs = this.#current !== undefined && this.#current.id !== this.#picked.id;
    this.#panel.offer(
      differs ? { from: this.#current?.label ?? ready.embedderId, to: this.#picked.label, count: total } : undefined,
    );
  }

  #reembed(signal: AbortSignal, onProgress: (done: number, total: number) => void): Promise<ReembedOutcome> {
    const fallback = this.#current;
    if (fallback === undefined) throw new TypeError('the model in use is not known yet');
    this.#select.disabled = true;
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

  #ended(outcome: ReembedOutcome): void {
    this.#ctx.engram = outcome.engram;
    this.#options.onModel(outcome.kind === 'done' ? this.#picked : (this.#current ?? this.#picked));
    if (outcome.kind === 'failed') this.#ctx.showError(outcome.error);
    this.#ctx.changed();
    void this.show().catch((e: unknown) => {
      this.#ctx.showError(e);
    });
  }
}
