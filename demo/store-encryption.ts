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
 * the conversion, its other panels held meanwhile (holdPanels: inert, every
 * control disabled), and the store reopened after it: with the new encryption when
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
import { ConversionProgressView } from '../ui/conversion-progress.js';
import { h, replace } from '../ui/dom.js';
import { errorText } from '../ui/error-text.js';
import { planModels, type ModelPlan } from '../ui/model-picking.js';
import { MIN_PASSPHRASE_CHARS, PassphrasePanel, attemptFailure, keyFailureOf } from '../ui/passphrase-panel.js';
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
   * Holds the page's other panels (true) from before its instance is closed for a conversion until
   * the store is open again (false), before the page renders them from it. A reopen that failed
   * leaves them held: the card says to reload the page.
   */
  readonly hold?: (held: boolean) => void;
}

/** What a user acts on: the controls {@link holdPanels} disables. */
const CONTROLS = 'button, input, select, textarea';

type Control = HTMLButtonElement | HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** The controls of `panel`, the panel itself first when it is one (the page's "Forget everything" button). */
function controlsOf(panel: HTMLElement): Control[] {
  const inside = [...panel.querySelectorAll<Control>(CONTROLS)];
  return panel.matches(CONTROLS) ? [panel as Control, ...inside] : inside;
}

/**
 * Disables `control` until {@link releaseControl}. Its panel may still set `disabled` meanwhile (a
 * chat turn that ends during the hold re-enables its input): an own property of the element takes
 * that wish (and reads it back) while the element stays disabled, and the release applies it.
 */
function holdControl(control: Control): void {
  if (Object.hasOwn(control, 'disabled')) return;
  let wanted = control.disabled;
  control.disabled = true;
  Object.defineProperty(control, 'disabled', {
    configurable: true,
    get: () => wanted,
    set: (value: boolean) => {
      wanted = value;
    },
  });
}

/** Gives a held control the `disabled` its panel last wanted (the one from before the hold when it set none). */
function releaseControl(control: Control): void {
  if (!Object.hasOwn(control, 'disabled')) return;
  const wanted = control.disabled;
  Reflect.deleteProperty(control, 'disabled');
  control.disabled = wanted;
}

/**
 * Holds `panels` while the store is converted (the page's instance is closed): each is made inert
 * and marked `data-held`, and every control in it (or the panel, when it is a control) disabled, so
 * it looks as unusable as it is; released, each control is as its panel last set it (as before the
 * hold, unless the panel changed it meanwhile), and the page then renders its panels from the
 * reopened store.
 * @example
 * holdPanels([chatSection, searchSection, resetButton], true);
 */
export function holdPanels(panels: readonly HTMLElement[], held: boolean): void {
  for (const panel of panels) {
    panel.inert = held;
    if (held) panel.dataset['held'] = 'true';
    else delete panel.dataset['held'];
    for (const control of controlsOf(panel)) {
      if (held) holdControl(control);
      else releaseControl(control);
    }
  }
}

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

/** The "Encryption at rest" card: how the store is kept, and the conversion of it to encrypted and back. */
export class EncryptionCard {
  readonly root: HTMLElement;
  readonly #ctx: DemoContext;
  readonly #options: EncryptionCardOptions;
  #encryption: AtRestEncryption | undefined;
  #busy = false;
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
    this.root = h(
      'section',
      { class: 'card encryption', attrs: { 'aria-label': 'Encryption at rest', 'data-testid': 'encryption-card' } },
      h('header', { class: 'card-head' }, h('h2', {}, 'Encryption at rest')),
      this.#state,
      this.#form,
      this.#decryptForm,
      this.#progress.root,
      this.#message,
    );
  }

  /** Says how the store is kept and shows the form that converts it. */
  async render(): Promise<void> {
    const encrypted = this.#encryption !== undefined;
    this.root.dataset['encrypted'] = String(encrypted);
    if (encrypted) {
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
    this.#form.hidden = encrypted;
    this.#decryptForm.hidden = !encrypted;
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
   */
  async #convert(
    next: AtRestEncryption | undefined,
    convert: (work: ConversionWork) => Promise<ConversionResult>,
  ): Promise<ConversionResult | undefined> {
    if (this.#busy) return undefined;
    this.#setBusy(true);
    this.#options.hold?.(true);
    const { engram } = this.#ctx;
    const before = this.#encryption;
    let result: ConversionResult | undefined;
    let failure: string | undefined;
    try {
      const model = knownEmbeddingModel((await engram.ready()).embedderId);
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
      // The conversion carried the index snapshots over when it could; the open's progress says what it does.
      const reopening = 'Reopening the store…';
      this.#say(reopening, 'working');
      this.#ctx.engram = await this.#options.reopen(model, this.#encryption, (p) => {
        this.#say(`${reopening} ${indexStep(p)}`, 'working');
      });
      // Open again: the panels are released, then rendered from it (a control's state follows the store).
      this.#options.hold?.(false);
      await this.#ctx.refresh();
    } catch (e) {
      // The conversion ended (or never began) but the reopen failed: say it; a reload opens the store as it is now.
      this.#encryption = result === undefined ? before : next;
      this.#say(`${errorText(e)} Reload the page to open the store.`, 'error');
      return undefined;
    } finally {
      this.#setBusy(false);
    }
    if (failure !== undefined) {
      this.#say(failure, 'error');
      return undefined;
    }
    return result;
  }

  #setBusy(busy: boolean): void {
    this.#busy = busy;
    this.root.dataset['busy'] = String(busy);
    for (const el of [this.#passphrase, this.#confirm, this.#button, this.#current, this.#decryptButton])
      el.disabled = busy;
  }

  #say(text: string, state: 'error' | 'info' | 'working'): void {
    this.#message.dataset['state'] = state;
    replace(this.#message, text);
  }
}
