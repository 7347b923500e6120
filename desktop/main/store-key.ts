/**
 * The key the app's store is encrypted at rest with: 32 random bytes made once,
 * on the first start with a usable OS keychain, and kept through safeStorage in
 * the secret store (secret-store.ts) under the main process's own name, so the
 * app opens its encrypted store without a prompt. The same rule as the sync
 * secrets, stricter: a key is handed out only while the OS keychain protects it.
 * Without one (no OS encryption, or Linux on the `basic_text` backend) no key is
 * made or read, since a key kept for the session only would make a store that
 * cannot be opened after a restart; the renderer asks for a passphrase instead.
 * A stored key that cannot be read (keychain reset, damaged file) is reported,
 * never replaced: a new key would lock the user out of the store the old one made.
 */
import { isEngramError } from '../../lib/errors.js';
import { STORE_KEY_BYTES, type StoreKeyAnswer } from '../preload/bridge-api.js';
import { STORE_KEY_SECRET, type SecretStore } from './secret-store.js';

/**
 * The store's key in the OS keychain.
 * @example
 * const answer = await new StoreKey(secrets).get() // { kind: 'key', key: Uint8Array(32) } or { kind: 'unavailable', reason }
 */
export class StoreKey {
  readonly #secrets: SecretStore;
  /** The first start's key creation in flight: two quick calls must not make (and store) two keys. */
  #pending: Promise<StoreKeyAnswer> | undefined;

  constructor(secrets: SecretStore) {
    this.#secrets = secrets;
  }

  /** The key (a fresh copy of its bytes each call), made on the first call; or why there is none. */
  get(): Promise<StoreKeyAnswer> {
    const answer = (this.#pending ??= this.#load().finally(() => {
      this.#pending = undefined;
    }));
    return answer.then((a) => (a.kind === 'key' ? { kind: 'key', key: a.key.slice() } : a));
  }

  async #load(): Promise<StoreKeyAnswer> {
    const unprotected = this.#secrets.unprotectedReason();
    if (unprotected !== undefined) return { kind: 'unavailable', reason: unprotected };
    let stored: string | null;
    try {
      stored = await this.#secrets.get(STORE_KEY_SECRET);
    } catch (e) {
      return { kind: 'unavailable', reason: `the store's key in the OS keychain cannot be read: ${messageOf(e)}` };
    }
    if (stored !== null) {
      const key = Buffer.from(stored, 'base64');
      if (key.length !== STORE_KEY_BYTES || key.toString('base64') !== stored)
        return {
          kind: 'unavailable',
          reason: `the store's key in the OS keychain is damaged (not ${STORE_KEY_BYTES} bytes)`,
        };
      return { kind: 'key', key: new Uint8Array(key) };
    }
    const key = crypto.getRandomValues(new Uint8Array(STORE_KEY_BYTES));
    try {
      await this.#secrets.set(STORE_KEY_SECRET, Buffer.from(key).toString('base64'));
    } catch (e) {
      key.fill(0);
      return { kind: 'unavailable', reason: `a key could not be kept in the OS keychain: ${messageOf(e)}` };
    }
    return { kind: 'key', key };
  }
}

function messageOf(e: unknown): string {
  if (isEngramError(e)) return e.message;
  return e instanceof Error ? e.message : String(e);
}
