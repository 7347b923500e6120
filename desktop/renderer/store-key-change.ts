/**
 * Changing how the desktop's store is unlocked, from the Status view (store-key-section.ts): a new
 * passphrase for a store opened with one, or a move between the OS keychain's key and a passphrase.
 * engram's `Engram.changeStoreKey` checks the current key or passphrase first (a wrong one is a
 * `KeyError` `wrong-key`, and nothing is written), then wraps the store's data key again under the
 * new one: one small write of the store's key header, no row re-encrypted, all or nothing. Instances
 * holding the store open keep working across it (its contract, test/store/store-key-change-cases.ts),
 * so the app's engram is not closed: the views and the MCP hub keep reading and writing meanwhile,
 * and nothing can be lost to a reopen. What changes is what every later opening must pass (an
 * import's reopen, the next start): the caller adopts the returned `encryption`. Before saying
 * done, a read of the store with the new key or passphrase (the app's key check, `storedEmbedder`)
 * proves it opens the store. Nothing here writes a passphrase anywhere: it goes to engram's KDF only.
 */
import { Engram, KeyError, ValidationError, type AtRestEncryption } from '../../lib/index.js';
import { MIN_PASSPHRASE_CHARS } from '../../ui/passphrase-panel.js';
import type { StoreProtection } from './store-unlock.js';

/** Longest passphrase the form takes (far beyond any typed one; bounds the KDF's input). */
export const MAX_PASSPHRASE_CHARS = 1024;

/** Why the store asks for a passphrase after the user moved it off the OS keychain. */
export const CHOSEN_PASSPHRASE = 'you chose a passphrase instead of the OS keychain (Status, Encryption at rest)';

/**
 * What the user asked: `new-passphrase` (current, new, typed again), `to-passphrase` (a store opened
 * with the keychain's key: a passphrase instead, typed twice), `to-keychain` (a passphrase store:
 * the OS keychain's key instead, after the current passphrase).
 */
export type UnlockChange =
  | { readonly kind: 'new-passphrase'; readonly current: string; readonly next: string; readonly confirm: string }
  | { readonly kind: 'to-passphrase'; readonly next: string; readonly confirm: string }
  | { readonly kind: 'to-keychain'; readonly current: string };

/** The steps a change goes through, for its progress line. */
export type UnlockChangeStep = 'changing' | 'verifying';

/** What {@link changeUnlock} needs besides the change. */
export interface UnlockChangeOptions {
  /** The app's IndexedDB database. */
  readonly dbName: string;
  /** The encryption the app opened the store with: the keychain's key for `to-passphrase`. */
  readonly encryption: AtRestEncryption | undefined;
  /** How the store is protected now. */
  readonly protection: StoreProtection;
  /** The OS keychain's key (for `to-keychain`); rejects when the keychain cannot give one. */
  readonly keychainKey: () => Promise<CryptoKey>;
  /** Told each step as it starts. */
  readonly onStep?: (step: UnlockChangeStep) => void;
}

/** The store after a change: what every later opening passes, and how it is protected now. */
export interface UnlockChanged {
  readonly encryption: AtRestEncryption;
  readonly protection: StoreProtection;
}

function passphraseShape(field: string, value: string): string | undefined {
  if (value.length < MIN_PASSPHRASE_CHARS) return `The ${field} has at least ${MIN_PASSPHRASE_CHARS} characters.`;
  if (value.length > MAX_PASSPHRASE_CHARS) return `The ${field} has at most ${MAX_PASSPHRASE_CHARS} characters.`;
  return undefined;
}

/**
 * Why a new passphrase and its repetition cannot be used (too short or long, or they differ), or undefined.
 * @example
 * newPassphraseProblem('heron pebble saffron', 'heron pebble saffron') // undefined
 */
export function newPassphraseProblem(next: string, confirm: string): string | undefined {
  const shape = passphraseShape('new passphrase', next);
  if (shape !== undefined) return shape;
  if (confirm !== next) return 'The new passphrase and its repetition differ: type the same one twice.';
  return undefined;
}

/**
 * Why `change` cannot run on a store protected as `protection`, or undefined when it can: checked
 * before anything runs (no key derived, nothing read or written). The current passphrase itself is
 * checked by engram against the store, not here.
 * @example
 * unlockChangeProblem({ kind: 'new-passphrase', current, next: 'a', confirm: 'a' }, protection) // 'The new passphrase has at least 8 characters.'
 */
export function unlockChangeProblem(change: UnlockChange, protection: StoreProtection): string | undefined {
  const wanted = change.kind === 'to-passphrase' ? 'keychain' : 'passphrase';
  if (protection.kind !== wanted)
    return protection.kind === 'plain'
      ? 'This store is not encrypted: it has no key or passphrase to change.'
      : wanted === 'keychain'
        ? 'This store already opens with a passphrase.'
        : 'This store opens with the OS keychain’s key, not a passphrase.';
  if (change.kind !== 'to-passphrase') {
    if (change.current === '') return 'Type the current passphrase.';
    const current = passphraseShape('current passphrase', change.current);
    if (current !== undefined) return current;
  }
  if (change.kind === 'to-keychain') return undefined;
  const next = newPassphraseProblem(change.next, change.confirm);
  if (next !== undefined) return next;
  if (change.kind === 'new-passphrase' && change.next === change.current)
    return 'The new passphrase is the current one: choose another.';
  return undefined;
}

/**
 * Changes how the store unlocks: checks `change` (a `ValidationError` before anything runs), has
 * engram check the current key or passphrase and wrap the store's key under the new one (a
 * `KeyError` `wrong-key` for a wrong current passphrase, nothing written), then reads the store
 * with the new one. The open engram keeps working throughout.
 * @example
 * const { encryption, protection } = await changeUnlock({ kind: 'new-passphrase', current, next, confirm: next },
 *   { dbName, encryption: openOptions.encryption, protection: ctx.protection, keychainKey });
 * openOptions.encryption = encryption; // every later opening
 */
export async function changeUnlock(change: UnlockChange, options: UnlockChangeOptions): Promise<UnlockChanged> {
  const { dbName, protection } = options;
  const problem = unlockChangeProblem(change, protection);
  if (problem !== undefined) throw new ValidationError('change', problem);
  let current: AtRestEncryption;
  let next: AtRestEncryption;
  let after: StoreProtection;
  if (change.kind === 'to-passphrase') {
    if (options.encryption?.key === undefined)
      throw new KeyError('key-needed', 'the app holds no keychain key for this store to move from');
    current = { key: options.encryption.key };
    next = { passphrase: change.next };
    after = { kind: 'passphrase', reason: CHOSEN_PASSPHRASE };
  } else {
    current = { passphrase: change.current };
    if (change.kind === 'new-passphrase') {
      next = { passphrase: change.next };
      after = protection;
    } else {
      // Asked first: a keychain that cannot give a key stops the move before the store is touched.
      next = { key: await options.keychainKey() };
      after = { kind: 'keychain' };
    }
  }
  options.onStep?.('changing');
  await Engram.changeStoreKey(dbName, { encryption: current, newEncryption: next });
  options.onStep?.('verifying');
  await Engram.storedEmbedder(dbName, { encryption: next });
  return { encryption: next, protection: after };
}
