/**
 * The status view's "Embedding model" card (ui/model-picker.ts laid out for the
 * app): the model the store's vectors are made with (in use), the models this app
 * serves with the one picked for the store, and, when they differ, the re-embed
 * offer with its progress, Cancel and result. Re-embedding runs on the app's open
 * engram: the views and the MCP hub keep answering meanwhile. A re-embed, a conversion of the store's
 * encryption (the Status view's other card) and an import (transfer-view.ts) run one at a time (ui/store-work.ts).
 */
import type { KnownEmbeddingModel } from '../../lib/index.js';
import { h } from '../../ui/dom.js';
import { ModelPicker, type ModelChoice } from '../../ui/model-picker.js';
import type { StoreWork } from '../../ui/store-work.js';
import type { AppContext } from './app-context.js';

/** What the section needs from the app besides the context. */
export interface ModelSectionOptions extends ModelChoice {
  /**
   * The app's long works on its store (a conversion of its encryption at rest, store-key-section.ts; an
   * import, transfer-view.ts): a
   * re-embed starts only when none runs (its start disabled with why meanwhile), and none while it does.
   */
  readonly work: StoreWork;
  /** Called when the store is open with another model (what a later reopen, after an import, must use). */
  readonly onModel: (model: KnownEmbeddingModel) => void;
}

/** The "Embedding model" card of the status view. */
export class ModelSection {
  readonly root: HTMLElement;
  readonly #picker: ModelPicker;

  constructor(ctx: AppContext, options: ModelSectionOptions) {
    this.#picker = new ModelPicker({
      ...options,
      selectId: 'model-select',
      engram: () => ctx.engram,
      adopt: (held) => {
        options.onModel(held);
      },
      reembedEnded: () => {
        ctx.changed();
      },
      inUseDetail: ({ embedderId, dimensions, total }) =>
        h(
          'span',
          { class: 'muted' },
          ` · ${embedderId}, ${dimensions}-d · runs in a Web Worker, offline · ${total} memor${total === 1 ? 'y' : 'ies'}`,
        ),
      showError: (e) => {
        ctx.showError(e);
      },
    });
    const picker = this.#picker;
    picker.panel.root.classList.add('reembed-box');
    this.root = h(
      'section',
      { class: 'card model-card', attrs: { 'data-testid': 'model-card' } },
      h('h2', {}, 'Embedding model'),
      picker.inUse,
      h(
        'div',
        { class: 'field' },
        h('label', { attrs: { for: 'model-select' } }, 'Model picked'),
        h('div', { class: 'row' }, picker.select, h('span', { class: 'muted small' }, 'best first; saved in this app')),
      ),
      picker.panel.root,
    );
  }

  /** True while a re-embed runs (the app's engram stays open). */
  get running(): boolean {
    return this.#picker.running;
  }

  /** Re-reads the model in use and the number of memories; shows the offer when the picked model differs. */
  show(): Promise<void> {
    return this.#picker.render();
  }
}
