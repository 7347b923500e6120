/**
 * How the desktop app opens its store encrypted at rest, before anything else
 * reads it. With a key in the OS keychain (the bridge's `storeKey`, made once by
 * the main process) the key's bytes are imported as a non-extractable AES-GCM
 * CryptoKey and wiped, and the store opens without a prompt; a new store is
 * created encrypted with it. With no usable keychain the app asks for a
 * passphrase (ui/passphrase-panel.ts): to unlock an encrypted store, or to create
 * a new one. A plain store found with a keychain key (made before the app
 * encrypted its stores, or by the browser fallback) is encrypted in place with
 * that key (engram's `Engram.encryptStore`, all of it or nothing) in the unlock
 * view, with a progress bar and Cancel (ui/conversion-progress.ts); a cancel or a
 * failure leaves it exactly as it was, and it opens plain, the app saying so (and
 * running the conversion again at the next start). The conversion carries the
 * index snapshots over (when the store had them); the loading line shows the
 * next open's progress, a rebuild included. The browser fallback has no keychain: it asks the
 * passphrase of an encrypted store, and makes a new store plain (it is the
 * preview of the app; README). The key check is the model planning's read of the
 * store (`planModels`, which opens it with the same `encryption`): a wrong key or
 * passphrase is a KeyError before anything is read or written.
 */
import { Engram, type AtRestEncryption } from '../../lib/index.js';
import { ConversionProgressView, type ConversionOutcome } from '../../ui/conversion-progress.js';
import { h } from '../../ui/dom.js';
import { errorText } from '../../ui/error-text.js';
import { planModels, type ModelPlan } from '../../ui/model-picking.js';
import { PassphrasePanel, keyFailureOf } from '../../ui/passphrase-panel.js';
import { unwrap } from './app-context.js';
import type { DesktopBridge, StoreKeyAnswer } from '../preload/bridge-api.js';

/** How the open store is protected at rest, as the Status view tells the user. */
export type StoreProtection =
  | { readonly kind: 'keychain' }
  /** `reason`: why no keychain key opens it (none usable, or the store was made with a passphrase). */
  | { readonly kind: 'passphrase'; readonly reason: string }
  /** `reason`: why it is not encrypted. */
  | { readonly kind: 'plain'; readonly reason: string };

/** The store, ready to open: its model plan, the `encryption` every opening of it passes, and how it is protected. */
export interface UnlockedStore {
  readonly plan: ModelPlan;
  readonly encryption: AtRestEncryption | undefined;
  readonly protection: StoreProtection;
  /** What the app says once open (a conversion that ran or did not), or undefined. */
  readonly notice?: string;
}

/** What {@link unlockStore} needs. */
export interface UnlockOptions {
  readonly bridge: DesktopBridge;
  readonly dbName: string;
  /** localStorage key of the picked embedding model (planModels). */
  readonly choiceKey: string;
  /** Where the passphrase panel goes while it is asked. */
  readonly host: HTMLElement;
  /** Called with true when the panel appears, false when it leaves (the app hides its loading line meanwhile). */
  readonly asking?: (asking: boolean) => void;
}

/** Why a store made before the app encrypted its stores is plain (no keychain key to encrypt it with). */
const PLAIN_OLD = 'this store was made before the app encrypted its stores; it stays readable on disk';
/** Why a plain store is still plain after its conversion was cancelled. */
const PLAIN_CANCELLED =
  'you cancelled its encryption at this start, so it stays readable on disk; the next start encrypts it (Cancel there keeps it as it is)';
/** Why the browser fallback makes its store plain. */
const PLAIN_WEB =
  'the browser fallback has no OS keychain to keep a key in, so it makes its store unencrypted; the desktop app encrypts its store';

/** The keychain's answer; a failure of the bridge itself counts as no key, with its message. */
async function keychainKey(bridge: DesktopBridge): Promise<StoreKeyAnswer> {
  try {
    return await unwrap(bridge.storeKey());
  } catch (e) {
    return { kind: 'unavailable', reason: errorText(e) };
  }
}

/** The raw key as a non-extractable AES-GCM key; the bytes are wiped (also the Status view's move to the keychain). */
export async function importStoreKey(bytes: Uint8Array): Promise<CryptoKey> {
  try {
    return await crypto.subtle.importKey('raw', bytes as Uint8Array<ArrayBuffer>, { name: 'AES-GCM' }, false, [
      'encrypt',
      'decrypt',
    ]);
  } finally {
    bytes.fill(0);
  }
}

/** Whether IndexedDB holds the database (opening a missing one would create it plain). */
async function storeExists(dbName: string): Promise<boolean> {
  const databases = await indexedDB.databases();
  return databases.some((db) => db.name === dbName);
}

/**
 * Finds the store's key (keychain, or a passphrase asked in `host`) and plans its model.
 * @example
 * const { plan, encryption } = await unlockStore({ bridge, dbName, choiceKey, host: document.querySelector('main')! });
 * const engram = await Engram.open({ name: dbName, encryption, embedder });
 */
export async function unlockStore(options: UnlockOptions): Promise<UnlockedStore> {
  const { bridge, dbName, choiceKey } = options;
  const answer = await keychainKey(bridge);
  if (answer.kind === 'key') {
    const encryption = { key: await importStoreKey(answer.key) };
    try {
      return {
        plan: await planModels(dbName, choiceKey, { encryption }),
        encryption,
        protection: { kind: 'keychain' },
      };
    } catch (e) {
      const failure = keyFailureOf(e);
      if (failure === 'not-encrypted') return encryptPlainStore(options, encryption);
      if (failure !== 'wrong-key') throw e;
      // Made with a passphrase while no keychain was usable (or under a key the keychain no longer has).
      return askPassphrase(options, 'unlock', `the key in your OS keychain does not open it (${errorText(e)})`);
    }
  }
  if (await storeExists(dbName)) {
    try {
      return { plan: await planModels(dbName, choiceKey), encryption: undefined, protection: plainOld() };
    } catch (e) {
      if (keyFailureOf(e) !== 'key-needed') throw e;
      return askPassphrase(options, 'unlock', answer.reason);
    }
  }
  const info = await unwrap(bridge.appInfo());
  if (info.shell === 'web')
    return {
      plan: await planModels(dbName, choiceKey),
      encryption: undefined,
      protection: { kind: 'plain', reason: PLAIN_WEB },
    };
  return askPassphrase(options, 'create', answer.reason);
}

function plainOld(): StoreProtection {
  return { kind: 'plain', reason: PLAIN_OLD };
}

/**
 * Encrypts the plain store in place with the keychain's key, shown in `host` with progress and
 * Cancel. Done: it opens encrypted, without a prompt from now on. Cancelled or failed: the
 * conversion changed nothing (one IndexedDB upgrade), so it opens plain and the app says why.
 */
async function encryptPlainStore(options: UnlockOptions, encryption: { key: CryptoKey }): Promise<UnlockedStore> {
  const { dbName, choiceKey, host } = options;
  const progress = new ConversionProgressView(
    'Your memories are being sealed in place; nothing changes on disk until it ends. Cancel keeps the store as it is, unencrypted.',
  );
  const view = h(
    'section',
    { class: 'card passphrase-panel store-conversion', attrs: { 'data-testid': 'store-conversion' } },
    h('h2', {}, 'Encrypting your memories'),
    h(
      'p',
      { class: 'muted' },
      'This store was made before the app encrypted its stores (or by the browser preview), so it is readable on this disk. The app encrypts it now with the key kept in your OS keychain; from then on it opens without a prompt.',
    ),
    progress.root,
  );
  host.append(view);
  options.asking?.(true);
  let outcome: ConversionOutcome | undefined;
  let failure: unknown;
  try {
    outcome = await progress.run((work) => Engram.encryptStore(dbName, { encryption, ...work }));
  } catch (e) {
    failure = e;
  } finally {
    view.remove();
    options.asking?.(false);
  }
  if (outcome?.kind === 'done')
    return {
      plan: await planModels(dbName, choiceKey, { encryption }),
      encryption,
      protection: { kind: 'keychain' },
      notice: `Your memories are now encrypted on this disk (${outcome.result.rows} rows sealed) with the key in your OS keychain.`,
    };
  // All of it or nothing: a cancel or a failure left the store as it was, plain, so it opens plain.
  const failed = outcome === undefined ? errorText(failure) : undefined;
  return {
    plan: await planModels(dbName, choiceKey),
    encryption: undefined,
    protection: {
      kind: 'plain',
      reason:
        failed === undefined
          ? PLAIN_CANCELLED
          : `its encryption failed at this start (${failed}), so it stays readable on disk`,
    },
    notice:
      failed === undefined
        ? 'Encryption cancelled: your memories stay unencrypted on this disk. The app encrypts them at the next start (Cancel there keeps them as they are).'
        : `Your memories could not be encrypted (${failed}); the store was left as it was, unencrypted. The app tries again at the next start.`,
  };
}

/** Shows the passphrase panel until a passphrase opens (or creates) the store. */
async function askPassphrase(
  options: UnlockOptions,
  mode: 'unlock' | 'create',
  reason: string,
): Promise<UnlockedStore> {
  const { dbName, choiceKey, host } = options;
  const panel = new PassphrasePanel<UnlockedStore>({
    mode,
    title: mode === 'unlock' ? 'Unlock your memories' : 'Choose a passphrase for your memories',
    detail:
      mode === 'unlock'
        ? [
            'Your memories are encrypted on this disk with a passphrase. Type it to open them; it is not stored anywhere.',
            `It is asked because ${reason}.`,
          ]
        : [
            'engram encrypts what your assistant remembers on this disk. Your OS keychain cannot keep its key, so a passphrase you choose protects it; the app asks for it at each start.',
            `Why no keychain: ${reason}.`,
            'Without the passphrase the memories cannot be read by anyone, you included: keep it somewhere safe.',
          ],
    submitLabel: mode === 'unlock' ? 'Unlock' : 'Encrypt and open',
    attempt: async (passphrase) => {
      const encryption = { passphrase };
      const plan = await planModels(dbName, choiceKey, { encryption });
      return { plan, encryption, protection: { kind: 'passphrase', reason } };
    },
  });
  host.append(panel.root);
  options.asking?.(true);
  panel.focus();
  try {
    return await panel.result;
  } finally {
    panel.root.remove();
    options.asking?.(false);
  }
}

/** The Status view's sentence for how the store is protected at rest. */
export function protectionText(protection: StoreProtection): string {
  if (protection.kind === 'keychain')
    return 'encrypted at rest with a key kept in the OS keychain (safeStorage): opens without a prompt';
  if (protection.kind === 'passphrase')
    return `encrypted at rest with your passphrase, asked at each start: ${protection.reason}`;
  return `not encrypted: ${protection.reason}`;
}
