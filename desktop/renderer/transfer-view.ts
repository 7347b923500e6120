/**
 * The import and export view: the whole store as an engram export file, with a
 * progress bar and a cancel button for both directions. Export hands the file
 * to the shell (a save dialog, or a download), sealed under a passphrase when
 * asked; import reads one (an open dialog, or a file picker), asks for the
 * passphrase when the file is encrypted, closes the store, imports (merge or
 * replace; a bad file or a wrong passphrase leaves the store as it was) and reopens it,
 * one at a time with a key change of the store (ui/store-gate.ts). An import is one of the
 * app's long works on the store (ui/store-work.ts): it does not start while a re-embed or a conversion runs
 * (its Import buttons disabled with why; a start from code refused with a `StoreError`), and neither starts
 * while it runs, from its start to the store's reopen, however it ends.
 */
import {
  Engram,
  StoreError,
  isEncryptedExport,
  isEngramError,
  type ImportMode,
  type IndexProgress,
  type TransferProgress,
} from '../../lib/index.js';
import { h } from '../../ui/dom.js';
import { unwrap, type AppContext, type View } from './app-context.js';
import type { StoreWorkSpec } from '../../ui/store-gate.js';
import { StoreWork } from '../../ui/store-work.js';

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

/** An export, as the store gate names it to a conversion or an import that waits for it. */
const EXPORT = 'an export';
/** An import, as the store gate and the app's other long works on the store (ui/store-work.ts) name it. */
export const IMPORT_WORK = 'an import';
/** An import closes the app's engram and opens it again (ui/store-gate.ts). */
const IMPORT: StoreWorkSpec = { what: IMPORT_WORK, closes: true };

/** Fewest characters of an export passphrase (as the library holds it). */
const MIN_PASSPHRASE = 8;

/** The file name offered for an export, e.g. engram-2026-12-01.jsonl (engram-2026-12-01-encrypted.engram when sealed). */
export function exportFileName(at: Date, encrypted = false): string {
  const day = at.toISOString().slice(0, 10);
  return encrypted ? `engram-${day}-encrypted.engram` : `engram-${day}.jsonl`;
}

/** Why an export passphrase and its repetition cannot be used, or undefined when they can. */
export function passphraseProblem(passphrase: string, repeated: string): string | undefined {
  if (passphrase.length < MIN_PASSPHRASE) return `The passphrase needs at least ${MIN_PASSPHRASE} characters.`;
  if (passphrase !== repeated) return 'The two passphrases differ.';
  return undefined;
}

/** A passphrase field (never autofilled from a saved password: each file has its own). */
function passphraseInput(testid: string, label: string): HTMLInputElement {
  return h('input', {
    attrs: { type: 'password', autocomplete: 'new-password', 'data-testid': testid, 'aria-label': label, size: '28' },
  });
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
  /** Says why the import's buttons are disabled (another long work on the store runs), under them. */
  readonly #importBlocked = h('p', { class: 'muted small', attrs: { 'data-testid': 'import-blocked', hidden: true } });
  readonly #encrypt = h('input', { attrs: { type: 'checkbox', 'data-testid': 'export-encrypt' } });
  readonly #passphrase = passphraseInput('export-passphrase', 'Export passphrase');
  readonly #repeat = passphraseInput('export-passphrase-repeat', 'Export passphrase again');
  readonly #passphraseFields = h(
    'div',
    { class: 'stack', attrs: { 'data-testid': 'export-passphrase-fields', hidden: true } },
    h('label', { class: 'field' }, h('span', {}, 'Passphrase'), this.#passphrase),
    h('label', { class: 'field' }, h('span', {}, 'Again'), this.#repeat),
    h(
      'p',
      { class: 'muted small' },
      'Keep it safe: without it nobody, you included, can read the file. It is not saved anywhere.',
    ),
  );
  readonly #filePassphrase = passphraseInput('import-passphrase', 'Passphrase of the file');
  readonly #unlock = h(
    'button',
    { class: 'primary', attrs: { type: 'submit', 'data-testid': 'import-unlock' } },
    'Import',
  );
  readonly #dismiss = h('button', { attrs: { type: 'button', 'data-testid': 'import-unlock-cancel' } }, 'Cancel');
  readonly #unlockForm = h(
    'form',
    { class: 'stack', attrs: { 'data-testid': 'import-unlock-form', hidden: true } },
    h('p', { class: 'small', attrs: { 'data-testid': 'import-unlock-file' } }),
    h('label', { class: 'field' }, h('span', {}, 'Passphrase'), this.#filePassphrase),
    h('div', { class: 'row' }, this.#unlock, this.#dismiss),
  );
  /** The encrypted file waiting for its passphrase. */
  #pending: { name: string; file: Blob } | undefined;
  #controller: AbortController | undefined;
  readonly #work: StoreWork;
  /** Why an import cannot start now (another long work on the store runs), or undefined. */
  #blocked: string | undefined;

  /**
   * `work` is the app's long works on its store (a re-embed with another model, a conversion of its
   * encryption at rest): an import starts only when none runs, and none can start while it runs.
   */
  constructor(ctx: AppContext, openOptions: OpenOptions, work: StoreWork) {
    this.#ctx = ctx;
    this.#openOptions = openOptions;
    this.#work = work;
    this.#exportButton.addEventListener('click', () => void this.export());
    this.#importButton.addEventListener('click', () => {
      this.import().catch((e: unknown) => {
        ctx.showError(e);
      });
    });
    this.#cancel.addEventListener('click', () => {
      this.#controller?.abort();
    });
    this.#encrypt.addEventListener('change', () => {
      this.#passphraseFields.hidden = !this.#encrypt.checked;
    });
    this.#unlockForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const pending = this.#pending;
      if (pending === undefined) return;
      this.#importFile(pending.name, pending.file, this.#filePassphrase.value).catch((e: unknown) => {
        ctx.showError(e);
      });
    });
    this.#dismiss.addEventListener('click', () => {
      this.#askPassphrase(undefined);
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
        h('label', { class: 'check' }, this.#encrypt, 'Encrypt the file with a passphrase'),
        this.#passphraseFields,
        h('div', { class: 'row' }, this.#exportButton),
      ),
      h(
        'div',
        { class: 'card stack' },
        h('h2', {}, 'Import'),
        h(
          'p',
          { class: 'muted small' },
          'An engram export file, plain or encrypted (you are asked for its passphrase). Every line is checked before anything is written: a bad file changes nothing.',
        ),
        h('div', { class: 'row' }, this.#mode, this.#importButton),
        this.#importBlocked,
        this.#unlockForm,
      ),
      h('div', { class: 'card stack' }, h('div', { class: 'row' }, this.#bar, this.#label, this.#cancel), this.#result),
    );
    // Another long work on the store (a re-embed, a conversion) disables the import's buttons, saying why, until it ends.
    work.watchBlocked(IMPORT_WORK, (blocked) => {
      this.#blocked = blocked;
      this.#sync();
    });
  }

  show(): Promise<void> {
    return Promise.resolve();
  }

  /** Exports the store (sealed under the passphrase typed, when asked) and hands the file to the shell. */
  async export(): Promise<void> {
    const encrypted = this.#encrypt.checked;
    const passphrase = this.#passphrase.value;
    if (encrypted) {
      const problem = passphraseProblem(passphrase, this.#repeat.value);
      if (problem !== undefined) {
        this.#end('failed', problem);
        return;
      }
    }
    const signal = this.#begin();
    try {
      // On the open store: while a conversion or an import has closed it, after its reopen.
      const blob = await this.#ctx.gate.use(
        EXPORT,
        () =>
          this.#ctx.engram.export({
            signal,
            onProgress: (p) => {
              this.#progress(p);
            },
            ...(encrypted ? { encrypt: passphrase } : {}),
          }),
        {
          signal,
          onWait: (what) => {
            this.#waiting(what);
          },
        },
      );
      const bytes = new Uint8Array(await blob.arrayBuffer());
      const suggestedName = exportFileName(new Date(), encrypted);
      const answer = await unwrap(this.#ctx.bridge.saveFile({ suggestedName, bytes }));
      this.#end(
        answer.saved ? 'done' : 'cancelled',
        answer.saved
          ? `Exported ${bytes.byteLength.toLocaleString()} bytes${encrypted ? ', encrypted,' : ''} to ${answer.location ?? 'a file'}.`
          : 'Export not saved.',
      );
    } catch (e) {
      this.#fail(e);
    }
  }

  /**
   * Asks for a file and imports it; an encrypted one waits for its passphrase. Refused with a `StoreError`
   * (nothing asked, nothing changed) while another long work runs on the store.
   */
  async import(): Promise<void> {
    const running = this.#work.running;
    if (running !== undefined) throw new StoreError(StoreWork.refusal(running, IMPORT_WORK));
    let opened;
    try {
      opened = await unwrap(this.#ctx.bridge.openFile());
    } catch (e) {
      this.#fail(e);
      return;
    }
    if (opened === null) return;
    const file = new Blob([opened.bytes as Uint8Array<ArrayBuffer>]);
    if (await isEncryptedExport(file)) this.#askPassphrase({ name: opened.name, file });
    else await this.#importFile(opened.name, file, undefined);
  }

  /** Shows the passphrase form for `pending` (hides it for undefined). */
  #askPassphrase(pending: { name: string; file: Blob } | undefined): void {
    this.#pending = pending;
    this.#unlockForm.hidden = pending === undefined;
    this.#filePassphrase.value = '';
    if (pending === undefined) return;
    this.#unlockForm.querySelector('[data-testid="import-unlock-file"]')!.textContent =
      `${pending.name} is encrypted. Its passphrase:`;
    this.#filePassphrase.focus();
  }

  /**
   * Closes the store, imports `file` (opened with `passphrase` when it is encrypted) and reopens the store:
   * through the store gate, after a key change asked before it (so it opens the store with
   * the key every opening passes then), and once the chat turns, agents' calls and exports running ended.
   * Held as the app's one long work on the store from here to the reopen: refused with a `StoreError`
   * (nothing started) while another runs (e.g. one that started while the file was being chosen).
   */
  async #importFile(name: string, file: Blob, passphrase: string | undefined): Promise<void> {
    const release = this.#work.begin(IMPORT_WORK);
    const mode = this.#mode.value as ImportMode;
    const signal = this.#begin();
    try {
      await this.#ctx.gate.run(IMPORT, () => this.#closeAndImport(name, file, passphrase, mode, signal), {
        onWait: (what) => {
          this.#waiting(what);
        },
      });
    } catch (e) {
      // The store could not be opened again after the import failed (#closeAndImport says every other way out).
      this.#fail(e);
    } finally {
      release();
      this.#ctx.changed();
    }
  }

  async #closeAndImport(
    name: string,
    file: Blob,
    passphrase: string | undefined,
    mode: ImportMode,
    signal: AbortSignal,
  ): Promise<void> {
    const { engram, dbName } = this.#ctx;
    this.#label.textContent = 'Starting…';
    await engram.close();
    try {
      this.#ctx.engram = await Engram.import(file, {
        ...this.#openOptions,
        name: dbName,
        mode,
        signal,
        onProgress: (p) => {
          this.#progress(p);
        },
        ...(passphrase === undefined ? {} : { decrypt: passphrase }),
      });
      this.#askPassphrase(undefined);
      const { total } = await this.#ctx.engram.getAll({ limit: 1 });
      this.#end('done', `Imported ${name} (${mode}). The store now holds ${total} memories.`);
    } catch (e) {
      // The store was left as it was; open it again.
      this.#ctx.engram = await Engram.open({ ...this.#openOptions, name: dbName });
      if (isEngramError(e) && e.code === 'KEY' && passphrase !== undefined) {
        // The form stays up for another try; nothing was written.
        this.#end('failed', 'That passphrase does not open the file; nothing was changed. Try again.');
        this.#filePassphrase.select();
      } else this.#fail(e);
    }
  }

  /** Says what the transfer waits for before it can start. */
  #waiting(what: string): void {
    this.#label.textContent = `Waiting for ${what} to end…`;
  }

  #begin(): AbortSignal {
    this.#controller = new AbortController();
    this.#bar.value = 0;
    this.#label.textContent = 'Starting…';
    this.#cancel.disabled = false;
    this.#exportButton.disabled = true;
    this.#sync();
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
    this.#sync();
    if (state === 'done') this.#bar.value = 1;
    this.#label.textContent = state === 'done' ? 'Done' : state === 'cancelled' ? 'Cancelled' : 'Failed';
    this.#result.dataset['state'] = state;
    this.#result.textContent = text;
  }

  /** The import's buttons: disabled while a transfer runs, and while another long work runs on the store (with why). */
  #sync(): void {
    const blocked = this.#blocked;
    for (const button of [this.#importButton, this.#unlock]) {
      button.disabled = this.#controller !== undefined || blocked !== undefined;
      if (blocked === undefined) button.removeAttribute('title');
      else button.title = blocked;
    }
    this.#importBlocked.hidden = blocked === undefined;
    this.#importBlocked.textContent = blocked ?? '';
  }

  #fail(e: unknown): void {
    if (isEngramError(e) && e.code === 'ABORTED') this.#end('cancelled', 'Cancelled; nothing was changed.');
    else {
      this.#end('failed', isEngramError(e) ? `${e.code}: ${e.message}` : String(e));
      this.#ctx.showError(e);
    }
  }
}
