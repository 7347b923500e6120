/**
 * The sync API key and the encryption passphrase, encrypted with Electron's
 * `safeStorage` (the OS keychain: Keychain, DPAPI, libsecret/kwallet) into one
 * file of ciphertexts in the user-data folder. A plain-text copy is never
 * written: when the OS offers no encryption, storing a secret fails instead.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from '../../lib/errors.js';
import type { SecretName } from '../preload/bridge-api.js';
import type { ElectronSurface } from './electron-surface.js';

/** The file, in the user-data folder, holding base64 ciphertexts by secret name. */
export const SECRETS_FILE = 'secrets.enc.json';

type Ciphertexts = Partial<Record<SecretName, string>>;

/**
 * Secrets kept with safeStorage.
 * @example
 * const secrets = new SecretStore(electron.safeStorage, app.getPath('userData'))
 * await secrets.set('sync-api-key', key)
 */
export class SecretStore {
  readonly #safeStorage: ElectronSurface['safeStorage'];
  readonly #file: string;
  readonly #dir: string;
  /** Serialises writes so two quick sets never lose one another. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(safeStorage: ElectronSurface['safeStorage'], userDataDir: string) {
    this.#safeStorage = safeStorage;
    this.#dir = userDataDir;
    this.#file = join(userDataDir, SECRETS_FILE);
  }

  /** Whether the OS can encrypt (on Linux, a keyring must be running). */
  available(): boolean {
    return this.#safeStorage.isEncryptionAvailable();
  }

  /** The secret, or null when none is stored. */
  async get(name: SecretName): Promise<string | null> {
    const stored = (await this.#read())[name];
    if (stored === undefined) return null;
    this.#requireEncryption();
    try {
      return this.#safeStorage.decryptString(Buffer.from(stored, 'base64'));
    } catch (e) {
      throw new StoreError(`the stored ${name} could not be decrypted (was the OS keychain reset?)`, { cause: e });
    }
  }

  /** Encrypts and stores the secret. */
  set(name: SecretName, value: string): Promise<void> {
    this.#requireEncryption();
    const ciphertext = this.#safeStorage.encryptString(value).toString('base64');
    return this.#update((all) => ({ ...all, [name]: ciphertext }));
  }

  /** Forgets the secret. */
  delete(name: SecretName): Promise<void> {
    return this.#update((all) => Object.fromEntries(Object.entries(all).filter(([key]) => key !== name)));
  }

  #requireEncryption(): void {
    if (!this.#safeStorage.isEncryptionAvailable()) {
      throw new StoreError('the operating system offers no encryption for secrets (safeStorage is unavailable); nothing was stored');
    }
  }

  #update(change: (all: Ciphertexts) => Ciphertexts): Promise<void> {
    const next = this.#queue.then(async () => {
      const all = change(await this.#read());
      await mkdir(this.#dir, { recursive: true });
      const temp = `${this.#file}.tmp`;
      await writeFile(temp, JSON.stringify(all), { mode: 0o600 });
      await rename(temp, this.#file);
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #read(): Promise<Ciphertexts> {
    let text: string;
    try {
      text = await readFile(this.#file, 'utf8');
    } catch (e) {
      if ((e as { code?: unknown }).code === 'ENOENT') return {};
      throw new StoreError('the secrets file could not be read', { cause: e });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new StoreError('the secrets file is corrupt', { cause: e });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
      throw new StoreError('the secrets file is corrupt: not an object of ciphertexts');
    }
    return parsed;
  }
}
