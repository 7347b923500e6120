/**
 * The Status view's "Encryption at rest" card: whether the store is encrypted on this disk and how
 * it unlocks (the OS keychain's key, or a passphrase asked at each start), and the forms that
 * change it (store-key-change.ts): a new passphrase (current, new, typed again), a passphrase
 * instead of the keychain, the keychain instead of a passphrase (offered while the OS keychain can
 * keep a key). A form is checked before anything runs; while a change runs every field and button
 * of the card is disabled and a two-step progress line says what is happening; a wrong current
 * passphrase is said under the form, and nothing was changed. The app's engram stays open
 * throughout (engram re-wraps the store's key without touching a row), so the other views and the
 * MCP hub keep working; the app adopts the new encryption for every later opening (`onChanged`).
 * A plain store is offered its encryption in place (engram's `Engram.encryptStore`: with the
 * keychain's key where the OS keychain can keep one, else with a passphrase typed twice): that
 * conversion needs the store to itself, so through the app's store gate (ui/store-gate.ts) it first
 * waits for the chat turns, agents' calls and exports running (and for a key change asked before
 * it), then the app closes its engram (`closeStore`: the navigation pauses; chat turns,
 * agents' calls and exports sent meanwhile wait), shows the rows sealed with Cancel, and opens the
 * store again (`reopenStore`), encrypted when it finished, else plain as it was (all of it or
 * nothing); what waited then runs on the reopened store. A key change runs through the gate too,
 * one at a time with an import (which reopens the store with the key it reads at its start).
 * A conversion is also one of the app's long works on the store (ui/store-work.ts): while a re-embed or an
 * import runs, its submit is disabled with why (the button's title and a note under it) until that ends.
 * Typed passphrases live in the fields until the work ends, then the fields are emptied.
 */
import { Engram, StoreError, type AtRestEncryption } from '../../lib/index.js';
import { CONVERSION_WORK, ConversionProgressView, type ConversionOutcome } from '../../ui/conversion-progress.js';
import { h, replace } from '../../ui/dom.js';
import { errorText } from '../../ui/error-text.js';
import { keyFailureOf } from '../../ui/passphrase-panel.js';
import { unwrap, type AppContext } from './app-context.js';
import {
  changeUnlock,
  newPassphraseProblem,
  unlockChangeProblem,
  type UnlockChange,
  type UnlockChanged,
  type UnlockChangeStep,
} from './store-key-change.js';
import type { StoreWorkSpec } from '../../ui/store-gate.js';
import { StoreWork } from '../../ui/store-work.js';
import { importStoreKey, type StoreProtection } from './store-unlock.js';

/** A conversion of the store (a plain one encrypted), as the store gate names it to what waits for it. */
const ENCRYPTION: StoreWorkSpec = { what: 'the store’s encryption', closes: true };
/** A change of the store's key or passphrase: engram re-wraps it in place, the store stays open. */
const KEY_CHANGE: StoreWorkSpec = { what: 'a change of the store’s key', closes: false };

/** What the card needs from the app besides the context. */
export interface StoreKeySectionOptions {
  /** The encryption every opening of the store passes now (the app's `openOptions.encryption`). */
  encryption(): AtRestEncryption | undefined;
  /** Told the new encryption and protection once a change is done and proven (before the card re-renders). */
  onChanged(changed: UnlockChanged): void;
  /**
   * Closes the app's engram for a conversion in place (a plain store encrypted), within the store gate's hold:
   * the views stay where they are until {@link reopenStore}.
   */
  closeStore(): Promise<void>;
  /**
   * The app's long works on its store (a re-embed with another model, model-section.ts; an import,
   * transfer-view.ts): a conversion starts only when none runs (its submit disabled with why meanwhile),
   * and none can start while it runs (from its submit to the reopen).
   */
  readonly work: StoreWork;
  /** Opens the store again with `encryption` (undefined: plain), adopts `protection`, and lets views and agents go on. */
  reopenStore(store: { encryption: AtRestEncryption | undefined; protection: StoreProtection }): Promise<void>;
}

/** A password field of the card; `autocomplete` keeps a browser from offering the current one as a new one. */
function secretInput(
  testid: string,
  label: string,
  autocomplete: 'current-password' | 'new-password',
): HTMLInputElement {
  return h('input', {
    attrs: { type: 'password', autocomplete, 'data-testid': testid, 'aria-label': label, spellcheck: 'false' },
  });
}

/** A labelled row of the card's grid. */
function field(label: string, input: HTMLInputElement): HTMLElement {
  return h('label', { class: 'field' }, h('span', {}, label), input);
}

/** The card's headline for how the store is protected now. */
function headline(protection: StoreProtection): [string, string] {
  if (protection.kind === 'keychain')
    return [
      'Encrypted on this disk · unlocked by the OS keychain',
      'A random key kept in your OS keychain (safeStorage) opens the store, so the app starts without a prompt.',
    ];
  if (protection.kind === 'passphrase')
    return [
      'Encrypted on this disk · unlocked by your passphrase',
      'The app asks for it at each start and keeps it nowhere; without it nobody can read the memories, you included.',
    ];
  return ['Not encrypted on this disk', `Anyone who reads this disk can read the memories. Why: ${protection.reason}.`];
}

/** The "Encryption at rest" card. */
export class StoreKeySection {
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #options: StoreKeySectionOptions;
  readonly #state = h('p', { class: 'store-key-state', attrs: { 'data-testid': 'store-key-state' } });
  readonly #forms = h('div', { class: 'store-key-forms' });
  readonly #progress = h('progress', { attrs: { max: '2', value: '0', 'data-testid': 'store-key-progress' } });
  readonly #message = h('p', {
    class: 'store-key-message',
    attrs: { role: 'status', 'aria-live': 'polite', 'data-testid': 'store-key-message', 'data-state': 'idle' },
  });
  #running = false;
  /** Why a conversion cannot start now (another long work on the store runs), or undefined. */
  #blocked: string | undefined;
  /** The submit of the conversion form shown (a plain store), or undefined. */
  #conversionStart: HTMLButtonElement | undefined;
  /** Says why the conversion's submit is disabled, under it. */
  readonly #blockedNote = h('p', {
    class: 'muted small store-key-blocked',
    attrs: { 'data-testid': 'store-key-blocked', hidden: true },
  });
  /** Whether the OS keychain can keep a key (the desktop with a keyring), or why not; read at each show. */
  #keychain: { usable: true } | { usable: false; reason: string } = { usable: false, reason: 'not known yet' };

  constructor(ctx: AppContext, options: StoreKeySectionOptions) {
    this.#ctx = ctx;
    this.#options = options;
    this.#progress.hidden = true;
    this.root = h(
      'section',
      { class: 'card store-key-card', attrs: { 'data-testid': 'store-key-card', 'data-state': 'idle' } },
      h('h2', {}, 'Encryption at rest'),
      this.#state,
      this.#forms,
      h('div', { class: 'store-key-status' }, this.#progress, this.#message),
    );
    // Another long work on the store (a re-embed, an import) disables the conversion's submit, saying why, until it ends.
    options.work.watchBlocked(CONVERSION_WORK, (blocked) => {
      this.#blocked = blocked;
      this.#sync();
    });
  }

  /** True while a change runs. */
  get running(): boolean {
    return this.#running;
  }

  /** Re-reads whether the keychain is usable and lays out the card for the store's protection now. */
  async show(): Promise<void> {
    if (this.#running) return;
    const info = await unwrap(this.#ctx.bridge.appInfo());
    this.#keychain =
      info.shell !== 'electron'
        ? { usable: false, reason: 'this browser preview has no OS keychain' }
        : info.secretsPersist
          ? { usable: true }
          : { usable: false, reason: info.secretsUnprotectedReason ?? 'the OS keychain cannot keep a key here' };
    this.#render();
  }

  #render(): void {
    const protection = this.#ctx.protection;
    const [title, detail] = headline(protection);
    this.root.dataset['protection'] = protection.kind;
    replace(this.#state, h('strong', {}, title), h('br'), h('span', { class: 'muted' }, detail));
    this.#conversionStart = undefined;
    if (protection.kind === 'passphrase') replace(this.#forms, this.#changeForm(), this.#toKeychainForm());
    else if (protection.kind === 'keychain') replace(this.#forms, this.#toPassphraseForm());
    else replace(this.#forms, this.#encryptForm());
    this.#sync();
  }

  /**
   * A plain store encrypted in place (engram's `Engram.encryptStore`, all of it or nothing): with the OS
   * keychain's key where it can keep one, else with a passphrase typed twice.
   */
  #encryptForm(): HTMLFormElement {
    const close =
      'The store is closed while every row is sealed in place (the other views and agents wait); nothing changes on disk until it ends, and Cancel keeps it as it is.';
    if (this.#keychain.usable)
      return this.#conversionForm(
        'encrypt-keychain-form',
        'Encrypt with the OS keychain’s key',
        `A random key kept in your OS keychain seals the store; the app then opens without a prompt. ${close}`,
        [],
        'Encrypt now',
        async () => ({ encryption: { key: await this.#keychainKey() }, protection: { kind: 'keychain' } }),
      );
    const next = secretInput('encrypt-new', 'New passphrase', 'new-password');
    const confirm = secretInput('encrypt-confirm', 'New passphrase again', 'new-password');
    const reason = this.#keychain.reason;
    return this.#conversionForm(
      'encrypt-passphrase-form',
      'Encrypt with a passphrase',
      `The OS keychain cannot keep a key here (${reason}), so a passphrase you choose seals the store; the app asks for it at each start, and a forgotten one cannot be recovered. ${close}`,
      [field('Passphrase', next), field('Again', confirm)],
      'Encrypt now',
      () => {
        const problem = newPassphraseProblem(next.value, confirm.value);
        if (problem !== undefined) return Promise.resolve(problem);
        return Promise.resolve({ encryption: { passphrase: next.value }, protection: { kind: 'passphrase', reason } });
      },
    );
  }

  /** Current, new, again: a new passphrase for a passphrase store. */
  #changeForm(): HTMLFormElement {
    const current = secretInput('change-current', 'Current passphrase', 'current-password');
    const next = secretInput('change-new', 'New passphrase', 'new-password');
    const confirm = secretInput('change-confirm', 'New passphrase again', 'new-password');
    return this.#form(
      'passphrase-change-form',
      'Change the passphrase',
      'The memories stay as they are: only the store’s key is sealed again, under the new passphrase. The next start asks for the new one.',
      [field('Current', current), field('New', next), field('Again', confirm)],
      'Change passphrase',
      () => ({ kind: 'new-passphrase', current: current.value, next: next.value, confirm: confirm.value }),
      'Passphrase changed: the old one no longer opens the store; the next start asks for the new one.',
    );
  }

  /** The keychain instead of a passphrase, after the current passphrase; offered while a keychain can keep a key. */
  #toKeychainForm(): HTMLElement {
    if (!this.#keychain.usable)
      return h(
        'p',
        { class: 'muted small', attrs: { 'data-testid': 'to-keychain-unavailable' } },
        `Unlocking with the OS keychain instead is not offered: ${this.#keychain.reason}.`,
      );
    const current = secretInput('to-keychain-current', 'Current passphrase', 'current-password');
    return this.#form(
      'to-keychain-form',
      'Unlock with the OS keychain instead',
      'The store’s key is sealed under a key kept in your OS keychain: the app then opens without a prompt, and the passphrase no longer opens the store.',
      [field('Current', current)],
      'Use the OS keychain',
      () => ({ kind: 'to-keychain', current: current.value }),
      'The store now unlocks with the key in your OS keychain: no prompt at the next start; the passphrase no longer opens it.',
    );
  }

  /** A passphrase instead of the keychain's key, typed twice. */
  #toPassphraseForm(): HTMLFormElement {
    const next = secretInput('to-passphrase-new', 'New passphrase', 'new-password');
    const confirm = secretInput('to-passphrase-confirm', 'New passphrase again', 'new-password');
    return this.#form(
      'to-passphrase-form',
      'Unlock with a passphrase instead',
      'So that someone using your OS account cannot open the store either: the app asks for the passphrase at each start, and the key in your OS keychain no longer opens it (the key stays there, for a move back). A forgotten passphrase cannot be recovered.',
      [field('Passphrase', next), field('Again', confirm)],
      'Use a passphrase',
      () => ({ kind: 'to-passphrase', next: next.value, confirm: confirm.value }),
      'The store now unlocks with your passphrase: the next start asks for it.',
    );
  }

  #form(
    testid: string,
    title: string,
    detail: string,
    fields: HTMLElement[],
    submitLabel: string,
    read: () => UnlockChange,
    done: string,
  ): HTMLFormElement {
    const form = h(
      'form',
      { class: 'store-key-form', attrs: { 'data-testid': testid, novalidate: true } },
      h('h3', {}, title),
      h('p', { class: 'muted small' }, detail),
      ...fields,
      h(
        'div',
        { class: 'row' },
        h('button', { class: 'primary', attrs: { type: 'submit', 'data-testid': `${testid}-submit` } }, submitLabel),
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#run(form, read(), done);
    });
    // A new try starts clean: the last failure no longer applies to what is being typed.
    form.addEventListener('input', () => {
      if (this.#message.dataset['state'] === 'error') this.#say('idle', '');
    });
    return form;
  }

  async #run(form: HTMLFormElement, change: UnlockChange, done: string): Promise<void> {
    if (this.#running) return;
    const problem = unlockChangeProblem(change, this.#ctx.protection);
    if (problem !== undefined) {
      this.#say('error', problem);
      return;
    }
    this.#busy(true);
    let step: UnlockChangeStep | undefined;
    try {
      // After an import or a conversion asked before it (each reopens the store with the key it read at its start).
      const changed = await this.#ctx.gate.run(
        KEY_CHANGE,
        () =>
          changeUnlock(change, {
            dbName: this.#ctx.dbName,
            encryption: this.#options.encryption(),
            protection: this.#ctx.protection,
            keychainKey: () => this.#keychainKey(),
            onStep: (now) => {
              step = now;
              this.#progress.value = now === 'changing' ? 1 : 2;
              this.#say(
                'running',
                now === 'changing'
                  ? change.kind === 'to-passphrase'
                    ? 'Step 1 of 2: sealing the store’s key under your passphrase…'
                    : 'Step 1 of 2: checking the current passphrase and sealing the store’s key again…'
                  : 'Step 2 of 2: checking that the new key opens the store…',
              );
            },
          }),
        {
          onWait: (what) => {
            this.#say('running', `Waiting for ${what} to end…`);
          },
        },
      );
      for (const input of form.querySelectorAll('input')) input.value = '';
      this.#options.onChanged(changed);
      this.#busy(false);
      this.#render();
      this.#say('done', done);
    } catch (e) {
      this.#busy(false);
      this.#say(
        'error',
        // The change is written when the check starts: only its read of the store failed.
        step === 'verifying'
          ? `The key was changed, but reading the store with the new one failed (${errorText(e)}): restart the app and unlock it with the new one.`
          : keyFailureOf(e) === 'wrong-key'
            ? 'Wrong current passphrase: nothing was changed, the store still opens with it. Try again.'
            : `Nothing was changed: ${errorText(e)}`,
      );
      form.querySelector<HTMLInputElement>('input[autocomplete="current-password"]')?.select();
    }
  }

  #conversionForm(
    testid: string,
    title: string,
    detail: string,
    fields: HTMLElement[],
    submitLabel: string,
    read: () => Promise<UnlockChanged | string>,
  ): HTMLFormElement {
    const slot = h('div', { class: 'conversion-slot' });
    const submit = h(
      'button',
      { class: 'primary', attrs: { type: 'submit', 'data-testid': `${testid}-submit` } },
      submitLabel,
    );
    this.#conversionStart = submit;
    const form = h(
      'form',
      { class: 'store-key-form', attrs: { 'data-testid': testid, novalidate: true } },
      h('h3', {}, title),
      h('p', { class: 'muted small' }, detail),
      ...fields,
      h('div', { class: 'row' }, submit),
      this.#blockedNote,
      slot,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#convert(form, slot, read);
    });
    form.addEventListener('input', () => {
      if (this.#message.dataset['state'] === 'error') this.#say('idle', '');
    });
    return form;
  }

  /**
   * Encrypts the plain store in place: the app's engram closed first (engram's conversion needs the store to
   * itself), the conversion with its bar and Cancel, then the store opened again, encrypted when it finished,
   * else plain as it was (all of it or nothing).
   */
  async #convert(form: HTMLFormElement, slot: HTMLElement, read: () => Promise<UnlockChanged | string>): Promise<void> {
    if (this.#running) return;
    const work = this.#options.work;
    const running = work.running;
    if (running !== undefined) {
      this.#say('error', StoreWork.refusal(running, CONVERSION_WORK));
      return;
    }
    const release = work.begin(CONVERSION_WORK);
    try {
      await this.#convertAlone(form, slot, read);
    } finally {
      release();
    }
  }

  /** {@link #convert}, the app's other long works on the store kept off meanwhile. */
  async #convertAlone(
    form: HTMLFormElement,
    slot: HTMLElement,
    read: () => Promise<UnlockChanged | string>,
  ): Promise<void> {
    this.#busy(true);
    let target: UnlockChanged | string;
    try {
      target = await read();
    } catch (e) {
      target = `Nothing was changed: ${errorText(e)}`;
    }
    if (typeof target === 'string') {
      this.#busy(false);
      this.#say('error', target);
      return;
    }
    const progress = new ConversionProgressView('Sealing every row of the store in place…');
    // The conversion's bar counts the rows; the card's two-step line is for key changes.
    this.#progress.hidden = true;
    const encryption = target.encryption;
    let outcome: ConversionOutcome | undefined;
    let failure: unknown;
    try {
      // Closed only once the chat turns, agents' calls and exports running have ended (what comes meanwhile waits).
      await this.#ctx.gate.run(
        ENCRYPTION,
        async () => {
          const before = this.#ctx.protection;
          replace(slot, progress.root);
          this.#say('running', 'The store is closed while it is encrypted: the other views and agents wait for it.');
          try {
            await this.#options.closeStore();
            outcome = await progress.run((work) => Engram.encryptStore(this.#ctx.dbName, { encryption, ...work }));
          } catch (e) {
            failure = e;
          }
          this.#say('running', 'Opening the store again…');
          await this.#options.reopenStore(
            outcome?.kind === 'done' ? target : { encryption: undefined, protection: before },
          );
        },
        {
          onWait: (what) => {
            this.#say('running', `Waiting for ${what} to end before the store is closed…`);
          },
        },
      );
    } catch (e) {
      this.#busy(false);
      this.#say('error', `The store could not be opened again (${errorText(e)}): restart the app.`);
      return;
    }
    for (const input of form.querySelectorAll('input')) input.value = '';
    this.#busy(false);
    this.#render();
    if (outcome?.kind === 'done')
      this.#say(
        'done',
        `Your memories are now encrypted on this disk (${outcome.result.rows.toLocaleString('en')} rows sealed) ${target.protection.kind === 'keychain' ? 'with the key in your OS keychain: no prompt at the next start' : 'with your passphrase: the next start asks for it'}.`,
      );
    else
      this.#say(
        'error',
        outcome?.kind === 'cancelled'
          ? 'Encryption cancelled: the store is as it was, unencrypted.'
          : `The store could not be encrypted (${errorText(failure)}); it was left as it was, unencrypted.`,
      );
  }

  /** The keychain's key for a move to it (made once by the main process), or why there is none. */
  async #keychainKey(): Promise<CryptoKey> {
    const answer = await unwrap(this.#ctx.bridge.storeKey());
    if (answer.kind !== 'key') throw new StoreError(`the OS keychain gives no key: ${answer.reason}`);
    return importStoreKey(answer.key);
  }

  #busy(busy: boolean): void {
    this.#running = busy;
    this.root.dataset['state'] = busy ? 'running' : 'idle';
    this.root.setAttribute('aria-busy', String(busy));
    this.#progress.hidden = !busy;
    if (busy) this.#progress.value = 0;
    for (const el of this.root.querySelectorAll<HTMLInputElement | HTMLButtonElement>('input, button'))
      el.disabled = busy;
    this.#sync();
  }

  /** The conversion's submit as the card's state wants it: disabled while busy, and while blocked with why. */
  #sync(): void {
    const start = this.#conversionStart;
    const blocked = this.#running || start === undefined ? undefined : this.#blocked;
    if (start !== undefined) {
      start.disabled = this.#running || blocked !== undefined;
      if (blocked === undefined) start.removeAttribute('title');
      else start.title = blocked;
    }
    this.#blockedNote.hidden = blocked === undefined;
    this.#blockedNote.textContent = blocked ?? '';
  }

  #say(state: 'idle' | 'running' | 'done' | 'error', text: string): void {
    this.#message.dataset['state'] = state;
    replace(this.#message, text);
  }
}
