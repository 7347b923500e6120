/**
 * The passphrase panel shared by the demo page and the desktop app: asks for the
 * passphrase of a store encrypted at rest (`unlock`), or for a new one, typed
 * twice (`create`), and hands it to `attempt`, which opens the store with it. A
 * passphrase that does not open the store (engram's `KeyError`, reason
 * `wrong-key`) is said plainly under the field and the user tries again; nothing
 * was read or written, so nothing is lost. The passphrase is never stored: it
 * lives in the field until the store is open.
 */
import { isEngramError, type KeyFailure } from '../lib/index.js';
import { errorText } from './error-text.js';
import { h, replace } from './dom.js';

/** engram's shortest passphrase (lib/store/at-rest-key.ts refuses a shorter one). */
export const MIN_PASSPHRASE_CHARS = 8;

/** `unlock`: the store exists, type its passphrase; `create`: choose one (typed twice) for a new store. */
export type PassphraseMode = 'unlock' | 'create';

/** What the panel asks and does. */
export interface PassphrasePanelOptions<T> {
  readonly mode: PassphraseMode;
  /** The panel's heading, e.g. "Unlock your memories". */
  readonly title: string;
  /** Sentences under the heading: why a passphrase is asked, and what happens without it. */
  readonly detail: readonly string[];
  /** The submit button's label. */
  readonly submitLabel: string;
  /** Opens the store with the passphrase; rejects with a KeyError when it does not open it. */
  readonly attempt: (passphrase: string) => Promise<T>;
  /** A second way out (the demo's "Cancel"); its result ends the panel as `attempt`'s does. */
  readonly secondary?: { readonly label: string; readonly run: () => Promise<T> };
}

/**
 * Why engram's encryption at rest refused a store (`KeyError.reason`), or undefined for
 * any other failure. Read by shape: the class does not survive a worker or the bridge.
 */
export function keyFailureOf(error: unknown): KeyFailure | undefined {
  if (!isEngramError(error) || error.code !== 'KEY') return undefined;
  const reason = (error as { reason?: unknown }).reason;
  return typeof reason === 'string' ? (reason as KeyFailure) : undefined;
}

/** The message for a failed attempt: a wrong passphrase said plainly, anything else as engram words it. */
export function attemptFailure(error: unknown): string {
  if (keyFailureOf(error) === 'wrong-key') return `Wrong passphrase: ${(error as Error).message}. Try again.`;
  return errorText(error);
}

/**
 * A passphrase form; `result` resolves with what `attempt` (or `secondary`) opened.
 * @example
 * const panel = new PassphrasePanel({ mode: 'unlock', title: 'Unlock', detail: [], submitLabel: 'Unlock',
 *   attempt: (passphrase) => Engram.open({ name, encryption: { passphrase } }) });
 * host.append(panel.root);
 * const engram = await panel.result;
 */
export class PassphrasePanel<T> {
  readonly root: HTMLFormElement;
  readonly result: Promise<T>;
  readonly #options: PassphrasePanelOptions<T>;
  readonly #passphrase: HTMLInputElement;
  readonly #confirm: HTMLInputElement | undefined;
  readonly #submit: HTMLButtonElement;
  readonly #secondary: HTMLButtonElement | undefined;
  readonly #message = h('p', {
    class: 'passphrase-message',
    attrs: { role: 'alert', 'data-testid': 'passphrase-message' },
  });
  #resolve!: (value: T) => void;

  constructor(options: PassphrasePanelOptions<T>) {
    this.#options = options;
    this.result = new Promise<T>((resolve) => {
      this.#resolve = resolve;
    });
    const create = options.mode === 'create';
    this.#passphrase = h('input', {
      attrs: {
        id: 'passphrase-input',
        type: 'password',
        autocomplete: create ? 'new-password' : 'current-password',
        minlength: String(MIN_PASSPHRASE_CHARS),
        required: true,
        'data-testid': 'passphrase-input',
      },
    });
    this.#confirm = create
      ? h('input', {
          attrs: {
            id: 'passphrase-confirm',
            type: 'password',
            autocomplete: 'new-password',
            required: true,
            'data-testid': 'passphrase-confirm',
          },
        })
      : undefined;
    this.#submit = h(
      'button',
      { class: 'primary', attrs: { type: 'submit', 'data-testid': 'passphrase-submit' } },
      options.submitLabel,
    );
    this.#secondary =
      options.secondary === undefined
        ? undefined
        : h('button', { attrs: { type: 'button', 'data-testid': 'passphrase-secondary' } }, options.secondary.label);
    this.root = h(
      'form',
      {
        class: 'card passphrase-panel',
        attrs: { 'data-testid': 'passphrase-panel', 'data-mode': options.mode, 'data-state': 'idle', novalidate: true },
      },
      h('h2', {}, options.title),
      ...options.detail.map((text) => h('p', { class: 'muted' }, text)),
      h(
        'div',
        { class: 'field' },
        h('label', { attrs: { for: 'passphrase-input' } }, create ? 'New passphrase' : 'Passphrase'),
        this.#passphrase,
      ),
      this.#confirm === undefined
        ? undefined
        : h(
            'div',
            { class: 'field' },
            h('label', { attrs: { for: 'passphrase-confirm' } }, 'Type it again'),
            this.#confirm,
          ),
      this.#message,
      h('div', { class: 'row' }, this.#submit, this.#secondary),
    );
    this.root.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#try();
    });
    // A new try starts clean: the last failure no longer applies to what is being typed.
    this.root.addEventListener('input', () => {
      if (this.root.dataset['state'] === 'error') this.#say('idle', '');
    });
    this.#secondary?.addEventListener('click', () => {
      void this.#run(() => options.secondary!.run());
    });
  }

  /** Puts the cursor in the passphrase field. */
  focus(): void {
    this.#passphrase.focus();
  }

  async #try(): Promise<void> {
    const passphrase = this.#passphrase.value;
    if (passphrase.length < MIN_PASSPHRASE_CHARS) {
      this.#say('error', `A passphrase has at least ${MIN_PASSPHRASE_CHARS} characters.`);
      return;
    }
    if (this.#confirm !== undefined && this.#confirm.value !== passphrase) {
      this.#say('error', 'The two passphrases differ: type the same one twice.');
      return;
    }
    await this.#run(() => this.#options.attempt(passphrase));
  }

  async #run(open: () => Promise<T>): Promise<void> {
    this.#busy(true);
    this.#say('checking', this.#options.mode === 'create' ? 'Encrypting the new store…' : 'Checking the passphrase…');
    try {
      const value = await open();
      this.#passphrase.value = '';
      if (this.#confirm !== undefined) this.#confirm.value = '';
      this.#say('done', '');
      this.#resolve(value);
    } catch (e) {
      this.#busy(false);
      this.#say('error', attemptFailure(e));
      this.#passphrase.select();
    }
  }

  #busy(busy: boolean): void {
    for (const el of [this.#passphrase, this.#confirm, this.#submit, this.#secondary])
      if (el !== undefined) el.disabled = busy;
  }

  #say(state: 'idle' | 'checking' | 'error' | 'done', text: string): void {
    this.root.dataset['state'] = state;
    this.#message.dataset['state'] = state;
    replace(this.#message, text);
  }
}
