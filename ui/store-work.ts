/**
 * An app's long works on its store that must not overlap, one at a time: a re-embed with another model
 * (ui/model-picker.ts: it runs on the open store) and a conversion of the store's encryption at rest
 * (demo/store-encryption.ts, desktop/renderer/store-key-section.ts: it closes the store) and the desktop's
 * import (desktop/renderer/transfer-view.ts: it closes the store too). While one runs, the others' start controls are
 * disabled with the reason ({@link StoreWork.watch}), and a start is refused with a `StoreError` that
 * names what runs; once it ends (done, cancelled or failed) the others can start again.
 */
import { StoreError } from '../lib/index.js';

/** Hears what runs now (undefined: nothing), at once and at each change. */
export type StoreWorkListener = (running: string | undefined) => void;

/**
 * The one long work running on the store, by name.
 * @example
 * const work = new StoreWork();
 * const release = work.begin('a re-embed with another model'); // throws while another runs
 * try { await run(); } finally { release(); }
 */
export class StoreWork {
  #running: string | undefined;
  readonly #listeners = new Set<StoreWorkListener>();

  /** What runs now, as given to {@link begin} (e.g. "a re-embed with another model"), or undefined. */
  get running(): string | undefined {
    return this.#running;
  }

  /**
   * Starts `what`: refused with a `StoreError` while another work runs (nothing started). Returns its
   * release, to call once it ended however it ended (a second call does nothing).
   */
  begin(what: string): () => void {
    const running = this.#running;
    if (running !== undefined) throw new StoreError(StoreWork.refusal(running, what));
    this.#running = what;
    this.#tell();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running = undefined;
      this.#tell();
    };
  }

  /** Calls `listener` now and at each change; returns how to stop. */
  watch(listener: StoreWorkListener): () => void {
    this.#listeners.add(listener);
    listener(this.#running);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /**
   * Calls `listener` now and at each change with why `what` cannot start ({@link refusal}): undefined
   * when nothing runs or when `what` itself does (its own controls show its progress). For a start
   * control's disabled state and its reason. Returns how to stop.
   * @example
   * work.watchBlocked('an import', (why) => { button.disabled = why !== undefined; });
   */
  watchBlocked(what: string, listener: (blocked: string | undefined) => void): () => void {
    return this.watch((running) => {
      listener(running === undefined || running === what ? undefined : StoreWork.refusal(running, what));
    });
  }

  /**
   * Why `what` cannot start while `running` runs, for a control's title and a notice.
   * @example
   * StoreWork.refusal('a re-embed with another model', 'a conversion of the store')
   * // 'Busy: a re-embed with another model is running; a conversion of the store can start once it ends.'
   */
  static refusal(running: string, what: string): string {
    return `Busy: ${running} is running; ${what} can start once it ends.`;
  }

  #tell(): void {
    for (const listener of this.#listeners) listener(this.#running);
  }
}
