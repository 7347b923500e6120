/**
 * The import and export view: the whole store as an engram export file, with a
 * progress bar and a cancel button for both directions. Export hands the file
 * to the shell (a save dialog, or a download); import reads one (an open
 * dialog, or a file picker), closes the store, imports (merge or replace; a bad
 * file leaves the store as it was) and reopens it.
 */
import { Engram, isEngramError, type ImportMode, type IndexProgress, type TransferProgress } from '../../lib/index.js';
import { h } from '../../ui/dom.js';
import { unwrap, type AppContext, type View } from './app-context.js';

/** The store options the app opens engram with (the embedder), for reopening after an import. */
export type OpenOptions = Omit<Parameters<typeof Engram.open>[0], 'name'>;

const PHASES: Readonly<Record<TransferProgress['phase'] | IndexProgress['phase'], string>> = {
  export: 'Exporting',
  encrypt: 'Encrypting',
  decrypt: 'Decrypting',
  validate: 'Checking',
  write: 'Writing',
  restore: 'Loading the index',
  replay: 'Updating the index',
  rebuild: 'Rebuilding the index',
  reembed: 'Re-embedding',
  damaged: 'Skipping a damaged row',
};

/** The file name offered for an export, e.g. engram-2026-12-01.jsonl. */
export function exportFileName(at: Date): string {
  return `engram-${at.toISOString().slice(0, 10)}.jsonl`;
}

/** The transfer view. */
export class TransferView implements View {
  readonly name = 'transfer';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #openOptions: OpenOptions;
  readonly #bar = h('progress', { attrs: { max: '1', value: '0', 'data-testid': 'transfer-progress' } });
  readonly #label = h('span', { class: 'small', attrs: { 'data-testid': 'transfer-label' } }, 'Idle');
  readonly #cancel = h(
    'button',
    { class: 'danger', attrs: { type: 'button', disabled: true, 'data-testid': 'transfer-cancel' } },
    'Cancel',
  );
  readonly #exportButton = h(
    'button',
    { class: 'primary', attrs: { type: 'button', 'data-testid': 'export-button' } },
    'Export…',
  );
  readonly #importButton = h(
    'button',
    { class: 'primary', attrs: { type: 'button', 'data-testid': 'import-button' } },
    'Import…',
  );
  readonly #mode = h(
    'select',
    { attrs: { 'data-testid': 'import-mode', 'aria-label': 'Import mode' } },
    h('option', { attrs: { value: 'merge' } }, 'merge with what is here'),
    h('option', { attrs: { value: 'replace' } }, 'replace everything here'),
  );
  readonly #result = h('p', { class: 'small', attrs: { 'data-testid': 'transfer-result', 'data-state': 'idle' } });
  #controller: AbortController | undefined;

  constructor(ctx: AppContext, openOptions: OpenOptions) {
    this.#ctx = ctx;
    this.#openOptions = openOptions;
    this.#exportButton.addEventListener('click', () => void this.export());
    this.#importButton.addEventListener('click', () => void this.import());
    this.#cancel.addEventListener('click', () => {
      this.#controller?.abort();
    });
    this.root = h(
      'section',
      { class: 'view transfer-view', attrs: { 'data-view': 'transfer' } },
      h('header', { class: 'view-head' }, h('h1', {}, 'Import and export')),
      h(
        'div',
        { class: 'card stack' },
        h('h2', {}, 'Export'),
        h(
          'p',
          { class: 'muted small' },
          'Everything in this store (conversations, memories with their vectors and history, core memory, traces) as one engram export file.',
        ),
        h('div', { class: 'row' }, this.#exportButton),
      ),
      h(
        'div',
        { class: 'card stack' },
        h('h2', {}, 'Import'),
        h(
          'p',
          { class: 'muted small' },
          'An engram export file. Every line is checked before anything is written: a bad file changes nothing.',
        ),
        h('div', { class: 'row' }, this.#mode, this.#importButton),
      ),
      h('div', { class: 'card stack' }, h('div', { class: 'row' }, this.#bar, this.#label, this.#cancel), this.#result),
    );
  }

  show(): Promise<void> {
    return Promise.resolve();
  }

  /** Exports the store and hands the file to the shell. */
  async export(): Promise<void> {
    const signal = this.#begin();
    try {
      const blob = await this.#ctx.engram.export({
        signal,
        onProgress: (p) => {
          this.#progress(p);
        },
      });
      const bytes = new Uint8Array(await blob.arrayBuffer());
      const answer = await unwrap(this.#ctx.bridge.saveFile({ suggestedName: exportFileName(new Date()), bytes }));
      this.#end(
        answer.saved ? 'done' : 'cancelled',
        answer.saved
          ? `Exported ${bytes.byteLength.toLocaleString()} bytes to ${answer.location ?? 'a file'}.`
          : 'Export not saved.',
      );
    } catch (e) {
      this.#fail(e);
    }
  }

  /** Asks for a file and imports it. */
  async import(): Promise<void> {
    let file;
    try {
      file = await unwrap(this.#ctx.bridge.openFile());
    } catch (e) {
      this.#fail(e);
      return;
    }
    if (file === null) return;
    const mode = this.#mode.value as ImportMode;
    const signal = this.#begin();
    const { engram, dbName } = this.#ctx;
    await engram.close();
    try {
      this.#ctx.engram = await Engram.import(new Blob([file.bytes as Uint8Array<ArrayBuffer>]), {
        ...this.#openOptions,
        name: dbName,
        mode,
        signal,
        onProgress: (p) => {
          this.#progress(p);
        },
      });
      const { total } = await this.#ctx.engram.getAll({ limit: 1 });
      this.#end('done', `Imported ${file.name} (${mode}). The store now holds ${total} memories.`);
    } catch (e) {
      // The store was left as it was; open it again.
      this.#ctx.engram = await Engram.open({ ...this.#openOptions, name: dbName });
      this.#fail(e);
    } finally {
      this.#ctx.changed();
    }
  }

  #begin(): AbortSignal {
    this.#controller = new AbortController();
    this.#bar.value = 0;
    this.#label.textContent = 'Starting…';
    this.#cancel.disabled = false;
    this.#exportButton.disabled = true;
    this.#importButton.disabled = true;
    this.#result.dataset['state'] = 'running';
    this.#result.textContent = '';
    return this.#controller.signal;
  }

  #progress(p: TransferProgress | IndexProgress): void {
    this.#bar.value = p.total === 0 ? 1 : p.done / p.total;
    this.#label.textContent = `${PHASES[p.phase]} ${p.done.toLocaleString()} / ${p.total.toLocaleString()}`;
  }

  #end(state: 'done' | 'cancelled' | 'failed', text: string): void {
    this.#controller = undefined;
    this.#cancel.disabled = true;
    this.#exportButton.disabled = false;
    this.#importButton.disabled = false;
    if (state === 'done') this.#bar.value = 1;
    this.#label.textContent = state === 'done' ? 'Done' : state === 'cancelled' ? 'Cancelled' : 'Failed';
    this.#result.dataset['state'] = state;
    this.#result.textContent = text;
  }

  #fail(e: unknown): void {
    if (isEngramError(e) && e.code === 'ABORTED') this.#end('cancelled', 'Cancelled; nothing was changed.');
    else {
      this.#end('failed', isEngramError(e) ? `${e.code}: ${e.message}` : String(e));
      this.#ctx.showError(e);
    }
  }
}
