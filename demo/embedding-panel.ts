/**
 * The demo's embedding model (ui/model-picker.ts laid out for the page): the model
 * in use and the select of served models in a fieldset of the settings form, and the
 * re-embed offer, progress and result in a card above the page's panels, shown only
 * while it has something to say. A re-embed runs on the page's open engram, never
 * with a conversion of its encryption at rest (ui/store-work.ts).
 */
import type { Engram } from '../lib/index.js';
import { h } from '../ui/dom.js';
import { ModelPicker, type ModelChoice } from '../ui/model-picker.js';
import type { StoreWork } from '../ui/store-work.js';
import type { DemoContext } from './context.js';

/** What the panel needs from the page besides the context. */
export interface EmbeddingPanelOptions extends ModelChoice {
  /** Called with the engram once a re-embed ended, and the run's time (the status line reads them). */
  readonly onReembedded: (engram: Engram, ms: number) => Promise<void>;
  /** The page's long works on its store: a re-embed starts when no conversion runs, and disables a conversion's start meanwhile. */
  readonly work?: StoreWork;
}

/** The "Embedding model" fieldset of the settings and the re-embed card. */
export class EmbeddingPanel {
  readonly #picker: ModelPicker;

  constructor(ctx: DemoContext, options: EmbeddingPanelOptions) {
    const card = h('section', { class: 'card reembed-card reembed-box', attrs: { 'aria-label': 'Embedding model' } });
    const picker = new ModelPicker({
      ...options,
      selectId: 'embedding-model',
      engram: () => ctx.engram,
      adopt: () => undefined,
      reembedEnded: (ms) => options.onReembedded(ctx.engram, ms),
      inUseDetail: ({ embedderId, dimensions, total }) =>
        ` (${embedderId}, ${dimensions}-d), for ${total} memor${total === 1 ? 'y' : 'ies'}.`,
      rendered: () => {
        card.hidden = picker.panel.state === 'hidden';
      },
      showError: (e) => {
        ctx.showError(e);
      },
    });
    this.#picker = picker;
    picker.inUse.classList.add('small');
    document
      .getElementById('settings')
      ?.prepend(
        h(
          'fieldset',
          { attrs: { 'data-testid': 'embedding-settings' } },
          h('legend', {}, 'Embedding model'),
          picker.inUse,
          h(
            'label',
            { class: 'embedding-pick', attrs: { for: 'embedding-model' } },
            'Model picked for this store ',
            picker.select,
          ),
        ),
      );
    card.append(h('h2', {}, 'Embedding model'), picker.panel.root);
    card.hidden = true;
    document.querySelector('main.layout')?.before(card);
  }

  /** Re-reads the model in use; shows the offer when the picked model differs. */
  render(): Promise<void> {
    return this.#picker.render();
  }
}
