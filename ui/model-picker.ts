/**
 * The embedding model picker, shared by the demo's settings (demo/embedding-panel.ts)
 * and the desktop's status view (desktop/renderer/model-section.ts), which only lay
 * out its parts: the "In use" line (the model the store's vectors are made with and
 * how many memories), a select of the models this app serves with the one picked for
 * the store (saved under the app's key, ui/model-picking.ts), and the re-embed offer
 * with its progress and result (ui/reembed-panel.ts), shown when the picked model is
 * not the store's. A re-embed runs on the app's open engram (ui/reembed-store.ts):
 * the app, its hub and other tabs keep searching and writing meanwhile.
 */
import { knownEmbeddingModel, type Engram, type KnownEmbeddingModel, type ModelLoadProgress } from '../lib/index.js';
import { h, replace, type Child } from './dom.js';
import { saveModelChoice } from './model-picking.js';
import { ReembedPanel } from './reembed-panel.js';
import { reembedStore, type EmbedderFor, type ReembedOutcome } from './reembed-store.js';
import { StoreWork } from './store-work.js';

/** A re-embed, as {@link StoreWork} names it to the other long works on the store. */
export const REEMBED_WORK = 'a re-embed with another model';

/** What the "In use" line says of the open store. */
export interface ModelInUse {
  readonly embedderId: string;
  readonly dimensions: number;
  /** Live memories in the store. */
  readonly total: number;
}

/** The app's models and how it opens its store: what each view of the picker passes on. */
export interface ModelChoice {
  /** localStorage key of the picked model. */
  readonly choiceKey: string;
  /** The known models this app serves, best first (`planModels().served`). */
  readonly served: readonly KnownEmbeddingModel[];
  /** The model picked at start: the saved choice, else the best served (`planModels().picked`). */
  readonly picked: KnownEmbeddingModel;
  /** The embedder of a model, made when a re-embed starts, with its load progress. */
  readonly embedderFor: EmbedderFor;
}

/** What the picker needs from the app. */
export interface ModelPickerOptions extends ModelChoice {
  /** The select's id, for the view's `<label for>`. */
  readonly selectId: string;
  /** The app's open engram (read at each render: an import replaces it). */
  engram(): Engram;
  /**
   * Told the model the store holds once a re-embed ended (the picked one when the run
   * finished, else the one it had). Called first, before the run's error is shown.
   */
  adopt(held: KnownEmbeddingModel): void;
  /** Then the app re-reads what it shows; `ms` is the run's time. The picker renders after it. */
  reembedEnded(ms: number): Promise<void> | void;
  /** What follows the model's label in the "In use" line (each app words it for its layout). */
  inUseDetail(inUse: ModelInUse): Child;
  /** After each render (the demo hides its card when nothing is offered). */
  rendered?(): void;
  showError(error: unknown): void;
  /**
   * The app's long works on its store (a conversion of its encryption at rest): a re-embed starts only
   * when none runs, and none can start while it does.
   */
  readonly work?: StoreWork;
}

/** The model in use, the select of served models and the re-embed panel; the view places the three. */
export class ModelPicker {
  /** "In use: <label> …", with `data-model` the store's embedder id. */
  readonly inUse = h('p', { attrs: { 'data-testid': 'model-in-use' } });
  readonly select: HTMLSelectElement;
  /** The re-embed offer, progress and result; `panel.root` is its element. */
  readonly panel: ReembedPanel;
  readonly #options: ModelPickerOptions;
  #picked: KnownEmbeddingModel;
  /** The model the open store holds, once read. */
  #current: KnownEmbeddingModel | undefined;
  #startedAt = 0;

  constructor(options: ModelPickerOptions) {
    this.#options = options;
    this.#picked = options.picked;
    this.select = h(
      'select',
      { attrs: { id: options.selectId, 'data-testid': 'model-select' } },
      ...options.served.map((m) =>
        h('option', { attrs: { value: m.id, selected: m.id === options.picked.id } }, `${m.label} · ${m.dimensions}-d`),
      ),
    );
    this.select.addEventListener('change', (event) => {
      // The pick is saved at once; it is not a change of a form the select may sit in (the demo's settings).
      event.stopPropagation();
      const model = options.served.find((m) => m.id === this.select.value);
      if (model === undefined) return;
      this.#picked = model;
      saveModelChoice(options.choiceKey, model.id);
      void this.render().catch((e: unknown) => {
        options.showError(e);
      });
    });
    this.panel = new ReembedPanel(
      (signal, onProgress, onModelLoad) => this.#reembed(signal, onProgress, onModelLoad),
      (outcome) => void this.#ended(outcome),
      (error) => {
        options.showError(error);
      },
    );
    // Another long work on the store (not this picker's re-embed) disables the offer's start, saying why.
    options.work?.watchBlocked(REEMBED_WORK, (blocked) => {
      this.panel.block(blocked);
    });
  }

  /** True while a re-embed runs (the app's engram stays open and usable). */
  get running(): boolean {
    return this.panel.running;
  }

  /** The picked model (the select's). */
  get picked(): KnownEmbeddingModel {
    return this.#picked;
  }

  /** Re-reads the model in use and the number of memories; offers to re-embed when the picked model differs. */
  async render(): Promise<void> {
    if (this.panel.running) return;
    const engram = this.#options.engram();
    const [ready, { total }] = await Promise.all([engram.ready(), engram.getAll({ limit: 1 })]);
    this.#current = knownEmbeddingModel(ready.embedderId);
    this.inUse.dataset['model'] = ready.embedderId;
    replace(
      this.inUse,
      'In use: ',
      h('strong', {}, this.#current?.label ?? ready.embedderId),
      this.#options.inUseDetail({ embedderId: ready.embedderId, dimensions: ready.dimensions, total }),
    );
    const differs = this.#current !== undefined && this.#current.id !== this.#picked.id;
    this.panel.offer(
      differs ? { from: this.#current?.label ?? ready.embedderId, to: this.#picked.label, count: total } : undefined,
    );
    this.#options.rendered?.();
  }

  #reembed(
    signal: AbortSignal,
    onProgress: (done: number, total: number) => void,
    onModelLoad: (progress: ModelLoadProgress) => void,
  ): Promise<ReembedOutcome> {
    if (this.#current === undefined) throw new TypeError('the model in use is not known yet');
    const release = this.#options.work?.begin(REEMBED_WORK);
    this.select.disabled = true;
    this.#startedAt = performance.now();
    return reembedStore({
      engram: this.#options.engram(),
      target: this.#picked,
      embedderFor: this.#options.embedderFor,
      signal,
      onProgress,
      onModelLoad,
    }).finally(() => {
      this.select.disabled = false;
      release?.();
    });
  }

  async #ended(outcome: ReembedOutcome): Promise<void> {
    const options = this.#options;
    options.adopt(outcome.kind === 'done' ? this.#picked : (this.#current ?? this.#picked));
    if (outcome.kind === 'failed') options.showError(outcome.error);
    try {
      await options.reembedEnded(performance.now() - this.#startedAt);
      await this.render();
    } catch (e) {
      options.showError(e);
    }
  }
}
