/**
 * The demo's store encrypted at rest, opt-in: a page has no OS keychain, so the
 * key is a passphrase the visitor types at each visit (never stored). At load,
 * an encrypted store shows the passphrase panel (ui/passphrase-panel.ts) above
 * the page until the passphrase opens it; a wrong one is said under the field
 * and nothing was read or written. The "Encryption at rest" card says how the
 * store is kept, and turns encryption on for a store that holds nothing yet:
 * the empty plain store is deleted and made again, encrypted, so nothing is
 * lost. Encrypting a store that already holds memories needs engram's
 * conversion of a plain store, which the library does not have yet: the card
 * says so (reset first to start encrypted).
 */
import { knownEmbeddingModel, type AtRestEncryption, type Engram, type KnownEmbeddingModel } from '../lib/index.js';
import { h, replace } from '../ui/dom.js';
import { errorText } from '../ui/error-text.js';
import { planModels, type ModelPlan } from '../ui/model-picking.js';
import { MIN_PASSPHRASE_CHARS, PassphrasePanel, keyFailureOf } from '../ui/passphrase-panel.js';
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
   * every later opening of the page then passes too (undefined: plain).
   */
  readonly reopen: (
    model: KnownEmbeddingModel | undefined,
    encryption: AtRestEncryption | undefined,
  ) => Promise<Engram>;
}

/** The "Encryption at rest" card: how the store is kept, and the passphrase field that turns encryption on. */
export class EncryptionCard {
  readonly root: HTMLElement;
  readonly #ctx: DemoContext;
  readonly #options: EncryptionCardOptions;
  #encrypted: boolean;
  readonly #state = h('p', { class: 'small', attrs: { 'data-testid': 'encryption-state' } });
  readonly #passphrase = h('input', {
    attrs: {
      type: 'password',
      autocomplete: 'new-password',
      placeholder: `passphrase (at least ${MIN_PASSPHRASE_CHARS} characters)`,
      'aria-label': 'New passphrase',
      'data-testid': 'encrypt-passphrase',
    },
  });
  readonly #confirm = h('input', {
    attrs: {
      type: 'password',
      autocomplete: 'new-password',
      placeholder: 'the same again',
      'aria-label': 'Type the passphrase again',
      'data-testid': 'encrypt-confirm',
    },
  });
  readonly #button = h(
    'button',
    { class: 'primary', attrs: { type: 'submit', 'data-testid': 'encrypt-button' } },
    'Encrypt this store',
  );
  readonly #message = h('p', { class: 'small', attrs: { role: 'alert', 'data-testid': 'encrypt-message' } });
  readonly #form: HTMLFormElement;

  constructor(ctx: DemoContext, options: EncryptionCardOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#encrypted = options.encryption !== undefined;
    this.#form = h(
      'form',
      { class: 'encrypt-form', attrs: { 'data-testid': 'encrypt-form' } },
      this.#passphrase,
      this.#confirm,
      h('div', { class: 'row' }, this.#button),
      this.#message,
    );
    this.#form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#encrypt();
    });
    this.root = h(
      'section',
      { class: 'card encryption', attrs: { 'aria-label': 'Encryption at rest', 'data-testid': 'encryption-card' } },
      h('header', { class: 'card-head' }, h('h2', {}, 'Encryption at rest')),
      this.#state,
      this.#form,
    );
  }

  /** Re-reads the store: whether it is encrypted, and whether it is empty enough to be made again encrypted. */
  async render(): Promise<void> {
    this.root.dataset['encrypted'] = String(this.#encrypted);
    if (this.#encrypted) {
      replace(
        this.#state,
        'Encrypted with your passphrase: the texts, vectors and index in this browser’s IndexedDB are sealed. It is asked at each visit and stored nowhere.',
      );
      this.#form.hidden = true;
      return;
    }
    const { memories, messages } = await this.#ctx.engram.stats();
    const empty = memories === 0 && messages === 0;
    replace(
      this.#state,
      'Not encrypted: what is remembered sits readable in this browser’s IndexedDB. ',
      empty
        ? 'Choose a passphrase to keep it sealed (asked at each visit; nothing can open the store without it).'
        : `Encrypting the ${memories} memories and ${messages} messages here needs engram’s conversion of a plain store, which it does not have yet. To start encrypted, use “Forget everything” first.`,
    );
    this.#form.hidden = !empty;
  }

  async #encrypt(): Promise<void> {
    const passphrase = this.#passphrase.value;
    if (passphrase.length < MIN_PASSPHRASE_CHARS) {
      this.#say(`A passphrase has at least ${MIN_PASSPHRASE_CHARS} characters.`, true);
      return;
    }
    if (this.#confirm.value !== passphrase) {
      this.#say('The two passphrases differ: type the same one twice.', true);
      return;
    }
    this.#button.disabled = true;
    this.#say('Encrypting…', false);
    const { engram } = this.#ctx;
    try {
      // Made again only while it holds nothing (checked again here, after the click): nothing is lost.
      const { memories, messages } = await engram.stats();
      if (memories !== 0 || messages !== 0) {
        this.#say('Something was stored meanwhile: the store was left as it is.', true);
        await this.render();
        return;
      }
      const model = knownEmbeddingModel((await engram.ready()).embedderId);
      await engram.close();
      try {
        await deleteDatabase(this.#options.dbName);
        this.#ctx.engram = await this.#options.reopen(model, { passphrase });
        this.#encrypted = true;
      } catch (e) {
        // Still plain (the delete was refused), or gone and empty: open what is there, plain, and say why.
        this.#ctx.engram = await this.#options.reopen(model, undefined);
        throw e;
      }
      this.#passphrase.value = '';
      this.#confirm.value = '';
      this.#say('Encrypted. Reload the page: it asks for the passphrase.', false);
      await this.#ctx.refresh();
    } catch (e) {
      this.#say(errorText(e), true);
    } finally {
      this.#button.disabled = false;
    }
  }

  #say(text: string, error: boolean): void {
    this.#message.dataset['state'] = error ? 'error' : 'info';
    replace(this.#message, text);
  }
}
