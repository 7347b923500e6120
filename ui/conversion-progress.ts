/**
 * The progress of converting a store in place (engram's `Engram.encryptStore` /
 * `decryptStore`), shared by the demo's encryption card and the desktop unlock: a
 * bar of the rows done out of all of them and a Cancel button that aborts the
 * conversion through its AbortSignal. The library converts all of it or nothing
 * (one IndexedDB upgrade), so a cancel leaves the store exactly as it was; the
 * outcome says which happened.
 */
import { isEngramError, type ConversionProgress, type ConversionResult, type ConversionWork } from '../lib/index.js';
import { h, replace } from './dom.js';

/** A conversion, as the app's long works on its store (ui/store-work.ts) name it to the others (a re-embed). */
export const CONVERSION_WORK = 'a conversion of the store’s encryption';

/** How a conversion ended: done (with its result) or cancelled (the store as it was). */
export type ConversionOutcome =
  { readonly kind: 'done'; readonly result: ConversionResult } | { readonly kind: 'cancelled' };

/** True for engram's AbortError, read by shape (the class does not survive a worker or the bridge). */
export function isAbort(error: unknown): boolean {
  return isEngramError(error) && error.code === 'ABORTED';
}

/**
 * The bar and its Cancel button; `run` converts with them.
 * @example
 * const progress = new ConversionProgressView('Encrypting the store');
 * host.append(progress.root);
 * const outcome = await progress.run((work) => Engram.encryptStore(name, { encryption, ...work }));
 */
export class ConversionProgressView {
  readonly root: HTMLElement;
  readonly #bar = h('progress', { attrs: { max: '1', value: '0', 'data-testid': 'conversion-bar' } });
  readonly #count = h('span', { class: 'conversion-count', attrs: { 'data-testid': 'conversion-count' } });
  readonly #cancel = h('button', { attrs: { type: 'button', 'data-testid': 'conversion-cancel' } }, 'Cancel');
  readonly #label: HTMLElement;
  #controller: AbortController | undefined;

  constructor(label: string) {
    this.#label = h('p', { class: 'conversion-label' }, label);
    this.root = h(
      'div',
      { class: 'conversion-progress', attrs: { 'data-testid': 'conversion-progress', 'data-state': 'idle' } },
      this.#label,
      this.#bar,
      h('div', { class: 'row' }, this.#count, this.#cancel),
    );
    this.root.hidden = true;
    this.#cancel.addEventListener('click', () => {
      this.#cancel.disabled = true;
      replace(this.#count, 'Cancelling…');
      this.#controller?.abort();
    });
  }

  /** Runs `convert` with progress and the Cancel button's signal; a cancel resolves `cancelled`, any other failure rejects. */
  async run(convert: (work: ConversionWork) => Promise<ConversionResult>): Promise<ConversionOutcome> {
    const controller = new AbortController();
    this.#controller = controller;
    this.root.hidden = false;
    this.root.dataset['state'] = 'running';
    this.#cancel.disabled = false;
    this.#cancel.hidden = false;
    this.#label.hidden = false;
    this.#show({ phase: 'encrypt', done: 0, total: 0 });
    replace(this.#count, 'Waiting for the store…');
    try {
      const result = await convert({
        signal: controller.signal,
        onProgress: (progress) => {
          this.#show(progress);
        },
      });
      this.root.dataset['state'] = 'done';
      replace(this.#count, `Done: ${result.rows.toLocaleString('en')} rows converted`);
      return { kind: 'done', result };
    } catch (e) {
      // A cancel that lands after the last page lets the conversion finish: only an AbortError is a cancel.
      if (isAbort(e)) {
        this.root.dataset['state'] = 'cancelled';
        replace(this.#count, `Cancelled at ${this.#progressText()}: the store is as it was`);
        return { kind: 'cancelled' };
      }
      this.root.dataset['state'] = 'failed';
      this.root.hidden = true;
      throw e;
    } finally {
      // The bar stays at its last state (done, or where a cancel stopped it) until the next conversion.
      this.#controller = undefined;
      this.#cancel.disabled = true;
      this.#cancel.hidden = true;
      this.#label.hidden = true;
    }
  }

  #show({ done, total }: ConversionProgress): void {
    this.#bar.max = Math.max(total, 1);
    this.#bar.value = done;
    this.root.dataset['done'] = String(done);
    this.root.dataset['total'] = String(total);
    replace(this.#count, this.#progressText());
  }

  #progressText(): string {
    const { done = '0', total = '0' } = this.root.dataset;
    return `${Number(done).toLocaleString('en')} / ${Number(total).toLocaleString('en')} rows`;
  }
}
