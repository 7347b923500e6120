/**
 * The demo's store encrypted at rest, opt-in: a page has no OS keychain, so the
 * key is a passphrase the visitor types at each visit (never stored). At load,
 * an encrypted store shows the passphrase panel (ui/passphrase-panel.ts) above
 * the page until the passphrase opens it; a wrong one is said under the field
 * and nothing was read or written. The "Encryption at rest" card says how the
 * store is kept and converts it in place (engram's `Engram.encryptStore` /
 * `decryptStore`): "Encrypt this store" (a new passphrase typed twice) and
 * "Remove encryption" (the current one), with a progress bar of the rows and a
 * Cancel button (ui/conversion-progress.ts). The page's instance is closed for
 * the conversion, its other panels held meanwhile (hold-panels.ts: inert, every
 * control disabled) and released on every way out, and the store reopened after it: with the new encryption when
 * it finished, as it was when it was cancelled or refused (a wrong passphrase is
 * refused before anything is written). The first open after a conversion
 * restores the search indexes from the snapshots it carried over, or rebuilds
 * them when there were none (or a write came between): the card shows the
 * open's index progress in words either way.
 */
import {
  Engram,
  knownEmbeddingModel,
  type AtRestEncryption,
  type ConversionResult,
  type ConversionWork,
  type IndexProgress,
  type KnownEmbeddingModel,
} from '../lib/index.js';
import { CONVERSION_WORK, ConversionProgressView } from '../ui/conversion-progress.js';
import { h, replace } from '../ui/dom.js';
import { errorText } from '../ui/error-text.js';
import { planModels, type ModelPlan } from '../ui/model-picking.js';
import { MIN_PASSPHRASE_CHARS, PassphrasePanel, attemptFailure, keyFailureOf } from '../ui/passphrase-panel.js';
import type { StoreGate } from '../ui/store-gate.js';
import { StoreWork } from '../ui/store-work.js';
import type { DemoContext } from './context.js';

/** The demo's store, ready to open: its model plan and the `encryption` every opening of it passes. */
export interface DemoStoreAccess {
  readonly plan: ModelPlan;
  readonly encryption: AtRestEncryption | undefined;
}

/** Deletes the IndexedDB database `name`; refused while another tab holds it open. */
function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => {
      resolve();
    };
    request.onerror = () => {
      reject(request.error ?? new TypeError(`the database ${name} could not be deleted`));
    };
    request.onblocked = () => {
      reject(new TypeError('another tab has this demo open: close it, then try again'));
    };
  });
}

/**
 * Plans the demo's store; an encrypted one first asks for its passphrase in `host`.
 * @example
 * const { plan, encryption } = await unlockDemoStore('engram-demo', 'engram-demo:embedding-model', host);
 */
export async function unlockDemoStore(dbName: string, choiceKey: string, host: HTMLElement): Promise<DemoStoreAccess> {
  try {
    return { plan: await planModels(dbName, choiceKey), encryption: undefined };
  } catch (e) {
    if (keyFailureOf(e) !== 'key-needed') throw e;
  }
  const panel = new PassphrasePanel<DemoStoreAccess>({
    mode: 'unlock',
    title: 'This demo’s memories are encrypted',
    detail: [
      'You encrypted this browser’s demo store with a passphrase. Type it to open it; it is not stored anywhere.',
      'Forgot it? Nothing can read the store without it; the only way on is to delete it and start over.',
    ],
    submitLabel: 'Unlock',
    attempt: async (passphrase) => {
      const encryption = { passphrase };
      return { plan: await planModels(dbName, choiceKey, { encryption }), encryption };
    },
    secondary: {
      label: 'Delete it and start over',
      run: async () => {
        if (!window.confirm('Delete the encrypted demo store and everything in it, and start an empty one?'))
          throw new TypeError('The store was kept: type its passphrase to open it.');
        await deleteDatabase(dbName);
        return { plan: await planModels(dbName, choiceKey), encryption: undefined };
      },
    },
  });
  host.append(panel.root);
  host.hidden = false;
  panel.focus();
  try {
    return await panel.result;
  } finally {
    panel.root.remove();
    host.hidden = true;
  }
}

/** The page's status line, as the card tells it about a conversion (demo/status-line.ts). */
export interface ConversionStatus {
  /** The store is closed for a conversion. */
  converting(): void;
  /** A conversion ended badly: `text` says what happened and how the store is now (the next ready line replaces it). */
  conversionFailed(text: string): void;
}

/** What the card needs from the page. */
export interface EncryptionCardOptions {
  readonly dbName: string;
  /** The `encryption` the page opens its store with now. */
  readonly encryption: AtRestEncryption | undefined;
  /**
   * Opens the store with the model it held (undefined: the page's pick) and `encryption`, which
   * every later opening of the page then passes too (undefined: plain); `onIndex` hears the
   * open's index progress (a restore, or a rebuild, after a conversion).
   */
  readonly reopen: (
    model: KnownEmbeddingModel | undefined,
    encryption: AtRestEncryption | undefined,
    onIndex?: (progress: IndexProgress) => void,
  ) => Promise<Engram>;
  /**
   * Holds the page's other panels (true) from before its instance is closed for a conversion, and
   * releases them (false) on every way out: once the store is open again (before the page renders
   * them from it), or when the conversion or the reopen failed (the card and the status line say it).
   */
  readonly hold?: (held: boolean) => void;
  /** Where the page says the store is being converted, or how a conversion failed. */
  readonly status?: ConversionStatus;
  /** The page's long works on its store (a re-embed): a conversion starts only when none runs, and none while it does. */
  readonly work?: StoreWork;
  /**
   * The page's store gate (ui/store-gate.ts): a conversion closes the store only once the chat turn
   * streaming is stored (the card says it waits), and a message sent while the store is closed waits
   * on screen until the store is open again and the page rendered from it.
   */
  readonly gate: StoreGate;
}

/** The card's reopen after a failed one, as the store gate names it to a message that waits for it. */
const REOPEN_WORK = 'a reopen of the store';

/** What an open is doing to its index (IndexProgress.phase), in words. */
const INDEX_PHASES: Record<IndexProgress['phase'], string> = {
  restore: 'Restoring the index snapshot',
  replay: 'Replaying changes',
  rebuild: 'Rebuilding the index',
  reembed: 'Re-embedding memories',
  damaged: 'Skipping a damaged row',
};

/** An open's index progress in words, e.g. "Rebuilding the index: 1,200 / 10,000". */
function indexStep({ phase, done, total }: IndexProgress): string {
  return `${INDEX_PHASES[phase]}: ${done.toLocaleString('en')} / ${total.toLocaleString('en')}`;
}

function passwordInput(label: string, testid: string, autocomplete: string, placeholder: string): HTMLInputElement {
  return h('input', {
    attrs: { type: 'password', autocomplete, placeholder, 'aria-label': label, 'data-testid': testid },
  });
}

/** How the store is kept, in words for a failure's report. */
function keptAs(encryption: AtRestEncryption | undefined): string {
  return encryption === undefined ? 'plain (not encrypted)' : 'encrypted with your passphrase';
}

/** The "Encryption at rest" card: how the store is kept, and the conversion of it to encrypted and back. */
export class EncryptionCard {
  readonly root: HTMLElement;
  readonly #ctx: DemoContext;
  readonly #options: EncryptionCardOptions;
  #encryption: AtRestEncryption | undefined;
  #busy = false;
  /** Why a conversion cannot start now (another long work on the store), or undefined. */
  #blocked: string | undefined;
  /** The page's instance is closed: a reopen after a conversion failed (the card offers another try). */
  #closed = false;
  /** The model the store held before the conversion, for its reopen. */
  #model: KnownEmbeddingModel | undefined;
  readonly #state = h('p', { class: 'small', attrs: { 'data-testid': 'encryption-state' } });
  readonly #passphrase = passwordInput(
    'New passphrase',
    'encrypt-passphrase',
    'new-password',
    `passphrase (at least ${MIN_PASSPHRASE_CHARS} characters)`,
  );
  readonly #confirm = passwordInput('Type the passphrase again', 'encrypt-confirm', 'new-password', 'the same again');
  readonly #button = h(
    'button',
    { class: 'primary', attrs: { type: 'submit', 'data-testid': 'encrypt-button' } },
    'Encrypt this store',
  );
  readonly #current = passwordInput(
    'Current passphrase',
    'decrypt-passphrase',
    'current-password',
    'the passphrase that opened it',
  );
  readonly #decryptButton = h(
    'button',
    { attrs: { type: 'submit', 'data-testid': 'decrypt-button' } },
    'Remove encryption',
  );
  readonly #reopenButton = h(
    'button',
    { class: 'primary', attrs: { type: 'button', 'data-testid': 'reopen-button', hidden: true } },
    'Reopen the store',
  );
  readonly #blockedNote = h('p', { class: 'small muted', attrs: { 'data-testid': 'encrypt-blocked', hidden: true } });
  readonly #message = h('p', { class: 'small', attrs: { role: 'alert', 'data-testid': 'encrypt-message' } });
  readonly #form: HTMLFormElement;
  readonly #decryptForm: HTMLFormElement;
  readonly #progress = new ConversionProgressView('Converting the store in place: nothing changes until it ends.');

  constructor(ctx: DemoContext, options: EncryptionCardOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#encryption = options.encryption;
    this.#form = h(
      'form',
      { class: 'encrypt-form', attrs: { 'data-testid': 'encrypt-form' } },
      this.#passphrase,
      this.#confirm,
      h('div', { class: 'row' }, this.#button),
    );
    this.#decryptForm = h(
      'form',
      { class: 'encrypt-form', attrs: { 'data-testid': 'decrypt-form' } },
      this.#current,
      h('div', { class: 'row' }, this.#decryptButton),
    );
    this.#form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#encrypt();
    });
    this.#decryptForm.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#decrypt();
    });
    this.#reopenButton.addEventListener('click', () => void this.#reopenAgain());
    this.root = h(
      'section',
      { class: 'card encryption', attrs: { 'aria-label': 'Encryption at rest', 'data-testid': 'encryption-card' } },
      h('header', { class: 'card-head' }, h('h2', {}, 'Encryption at rest')),
      this.#state,
      this.#form,
      this.#decryptForm,
      this.#blockedNote,
      this.#reopenButton,
      this.#progress.root,
      this.#message,
    );
    // Another long work on the store (a re-embed) disables the card's buttons, saying why, until it ends.
    options.work?.watchBlocked(CONVERSION_WORK, (blocked) => {
      this.#blocked = blocked;
      this.#sync();
    });
  }

  /** Says how the store is kept and shows the form that converts it (or, closed, the reopen). */
  async render(): Promise<void> {
    const encrypted = this.#encryption !== undefined;
    this.root.dataset['encrypted'] = String(encrypted);
    this.#form.hidden = encrypted || this.#closed;
    this.#decryptForm.hidden = !encrypted || this.#closed;
    this.#reopenButton.hidden = !this.#closed;
    if (this.#closed) {
      replace(this.#state, `The store is closed and ${keptAs(this.#encryption)}: reopen it to go on.`);
    } else if (encrypted) {
      replace(
        this.#state,
        'Encrypted with your passphrase: the texts, vectors and index in this browser’s IndexedDB are sealed. It is asked at each visit and stored nowhere. Type it to turn encryption off.',
      );
    } else {
      const { memories, messages } = await this.#ctx.engram.stats();
      replace(
        this.#state,
        'Not encrypted: what is remembered sits readable in this browser’s IndexedDB. ',
        `Choose a passphrase to seal the ${memories} memories and ${messages} messages here (asked at each visit; nothing can open the store without it).`,
      );
    }
  }

  async #encrypt(): Promise<void> {
    const passphrase = this.#passphrase.value;
    if (passphrase.length < MIN_PASSPHRASE_CHARS) {
      this.#say(`A passphrase has at least ${MIN_PASSPHRASE_CHARS} characters.`, 'error');
      return;
    }
    if (this.#confirm.value !== passphrase) {
      this.#say('The two passphrases differ: type the same one twice.', 'error');
      return;
    }
    const encryption = { passphrase };
    const converted = await this.#convert(encryption, (work) =>
      Engram.encryptStore(this.#options.dbName, { encryption, ...work }),
    );
    if (converted === undefined) return;
    this.#passphrase.value = '';
    this.#confirm.value = '';
    this.#say(`Encrypted (${converted.rows} rows sealed). A reload asks for the passphrase.`, 'info');
  }

  async #decrypt(): Promise<void> {
    const passphrase = this.#current.value;
    if (passphrase.length === 0) {
      this.#say('Type the passphrase that opened this store.', 'error');
      return;
    }
    const converted = await this.#convert(undefined, (work) =>
      Engram.decryptStore(this.#options.dbName, { encryption: { passphrase }, ...work }),
    );
    if (converted === undefined) return;
    this.#current.value = '';
    const damaged =
      converted.damaged.length === 0 ? '' : ` ${converted.damaged.length} damaged rows did not open and were dropped.`;
    this.#say(`Encryption removed: the store is plain again.${damaged}`, 'info');
  }

  /**
   * Closes the page's store, converts it with progress and cancel, and reopens it: with `next`
   * when the conversion finished, as it was otherwise. Undefined when it did not finish (said).
   * Refused (said) while another long work runs on the store. The other panels are held from the
   * start and released on every way out; a failure is said in the card and on the status line, with
   * how the store is kept now, and a failed reopen leaves the card's "Reopen the store" to try again.
   */
  async #convert(
    next: AtRestEncryption | undefined,
    convert: (work: ConversionWork) => Promise<ConversionResult>,
  ): Promise<ConversionResult | undefined> {
    if (this.#busy || this.#closed) return undefined;
    const work = this.#options.work;
    const running = work?.running;
    if (running !== undefined) {
      this.#say(StoreWork.refusal(running, CONVERSION_WORK), 'error');
      return undefined;
    }
    const release = work?.begin(CONVERSION_WORK);
    this.#setBusy(true);
    const before = this.#encryption;
    /** Whether the page's instance was closed for the conversion (set inside the gate's run). */
    const run = { closed: false };
    let result: ConversionResult | undefined;
    let failure: string | undefined;
    let error: unknown;
    try {
      // Closed once the chat turn streaming is stored; a message sent meanwhile waits for the page's render below.
      await this.#options.gate.run(
        { what: CONVERSION_WORK, closes: true },
        async () => {
          this.#options.hold?.(true);
          this.#options.status?.converting();
          try {
            const { engram } = this.#ctx;
            this.#model = knownEmbeddingModel((await engram.ready()).embedderId);
            run.closed = true;
            await engram.close();
            try {
              this.#say('Converting…', 'working');
              const outcome = await this.#progress.run(convert);
              if (outcome.kind === 'done') result = outcome.result;
              else failure = 'Cancelled: the store was left as it was.';
            } catch (e) {
              failure = attemptFailure(e);
            }
            if (result !== undefined) this.#encryption = next;
            await this.#reopen();
          } finally {
            // Every way out lets go of the panels: the page renders them from the reopened store, or they show the failure.
            this.#options.hold?.(false);
          }
          // Open again: the panels were released, now rendered from it (a control's state follows the store).
          await this.#renderPage();
        },
        {
          onWait: (what) => {
            this.#say(`Waiting for ${what} to be stored before the store is closed…`, 'working');
          },
        },
      );
    } catch (e) {
      error = e;
      this.#closed = run.closed;
    } finally {
      release?.();
      this.#setBusy(false);
    }
    if (error !== undefined) {
      const what = errorText(error);
      if (!run.closed) {
        // Nothing was converted (the engram's ready() or close() failed): the store is as it was, and open.
        const text = `The store was not converted (${what}); it is ${keptAs(before)}, as before.`;
        this.#say(text, 'error');
        this.#options.status?.conversionFailed(text);
        return undefined;
      }
      const converted =
        result === undefined
          ? `${failure ?? 'Not converted.'} The store is ${keptAs(this.#encryption)}, as before,`
          : `Converted: the store is ${keptAs(this.#encryption)} now,`;
      this.#say(`${converted} but reopening it failed (${what}). Try “Reopen the store”, or reload the page.`, 'error');
      this.#options.status?.conversionFailed(
        `The store could not be reopened after its conversion (${what}): it is ${keptAs(this.#encryption)}. Reopen it from Encryption at rest, or reload the page.`,
      );
      await this.render();
      return undefined;
    }
    if (failure !== undefined) {
      this.#say(failure, 'error');
      return undefined;
    }
    return result;
  }

  /** Opens the store again after a reopen failed: its panels held meanwhile, rendered from it once open. */
  async #reopenAgain(): Promise<void> {
    if (this.#busy || !this.#closed) return;
    this.#setBusy(true);
    let error: unknown;
    try {
      // A message sent meanwhile waits for the page's render from the reopened store.
      await this.#options.gate.run({ what: REOPEN_WORK, closes: true }, async () => {
        this.#options.hold?.(true);
        try {
          await this.#reopen();
        } finally {
          this.#options.hold?.(false);
        }
        await this.#renderPage();
      });
    } catch (e) {
      error = e;
    } finally {
      this.#setBusy(false);
    }
    if (error === undefined) {
      this.#say(`The store is open again, ${keptAs(this.#encryption)}.`, 'info');
      return;
    }
    const text = `The store could not be reopened (${errorText(error)}): it is ${keptAs(this.#encryption)}. Try again, or reload the page.`;
    this.#say(text, 'error');
    this.#options.status?.conversionFailed(text);
  }

  /** Opens the store with the model it held and the encryption it has now; the card says the open's progress. */
  async #reopen(): Promise<void> {
    // The conversion carried the index snapshots over when it could; the open's progress says what it does.
    const reopening = 'Reopening the store…';
    this.#say(reopening, 'working');
    this.#ctx.engram = await this.#options.reopen(this.#model, this.#encryption, (p) => {
      this.#say(`${reopening} ${indexStep(p)}`, 'working');
    });
    this.#closed = false;
  }

  /** The page rendered from the open store (its status line says ready again); a failure to read it is said. */
  async #renderPage(): Promise<void> {
    try {
      await this.#ctx.refresh();
    } catch (e) {
      this.#ctx.showError(e);
      this.#options.status?.conversionFailed(`The store is open but could not be read: ${errorText(e)}`);
    }
  }

  #setBusy(busy: boolean): void {
    this.#busy = busy;
    this.root.dataset['busy'] = String(busy);
    this.#sync();
  }

  /** The controls as the card's state wants them: all disabled while busy, the buttons while blocked (with why). */
  #sync(): void {
    const blocked = this.#blocked !== undefined && !this.#busy;
    for (const el of [this.#passphrase, this.#confirm, this.#current, this.#reopenButton]) el.disabled = this.#busy;
    for (const button of [this.#button, this.#decryptButton]) {
      button.disabled = this.#busy || blocked;
      if (blocked) button.title = this.#blocked ?? '';
      else button.removeAttribute('title');
    }
    this.#blockedNote.hidden = !blocked;
    this.#blockedNote.textContent = blocked ? (this.#blocked ?? '') : '';
  }

  #say(text: string, state: 'error' | 'info' | 'working'): void {
    this.#message.dataset['state'] = state;
    replace(this.#message, text);
  }
}
