/**
 * The sync API key and the encryption passphrase, encrypted with Electron's
 * `safeStorage` (the OS keychain: Keychain, DPAPI, libsecret/kwallet) into one
 * file of ciphertexts (mode 0600) in the user-data folder. Nothing reaches the
 * disk unless the OS keychain protects it: when the OS offers no encryption, or
 * on Linux without a keyring, where `safeStorage` still reports encryption as
 * available but uses its `basic_text` backend (a key written into Electron
 * itself, the same for everyone), secrets are kept in this process's memory for
 * the session only, and `unprotectedReason()` says why (the app shows it). A
 * copy an older version wrote with `basic_text` moves to memory when read, and
 * leaves the disk.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from '../../lib/errors.js';
import { SerialQueue } from '../../lib/util/serial-queue.js';
import type { SecretName } from '../preload/bridge-api.js';
import type { ElectronSurface } from './electron-surface.js';

/** The file, in the user-data folder, holding base64 ciphertexts by secret name. */
export const SECRETS_FILE = 'secrets.enc.json';

/**
 * The name of the store's at-rest key (store-key.ts). The main process's own secret: not a
 * {@link SecretName}, so the renderer can neither read, set nor delete it through the secret calls.
 */
export const STORE_KEY_SECRET = 'store-key';

/** Every secret kept here: the renderer's (SecretName) and the main process's own. */
export type StoredSecretName = SecretName | typeof STORE_KEY_SECRET;

type Ciphertexts = Partial<Record<StoredSecretName, string>>;

/** safeStorage's Linux backends that keep the key in a keyring (anything else, `basic_text` above all, protects nothing). */
const KEYRING_BACKENDS: ReadonlySet<string> = new Set(['gnome_libsecret', 'kwallet', 'kwallet5', 'kwallet6']);

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
  readonly #platform: string;
  /** Secrets kept for this session only, when the OS keychain cannot protect them. */
  readonly #session = new Map<StoredSecretName, string>();
  /** Serialises writes so two quick sets never lose one another. */
  readonly #writes = new SerialQueue();

  /** `platform` is `process.platform`: the keyring check applies on Linux only, where safeStorage has a backend to ask. */
  constructor(safeStorage: ElectronSurface['safeStorage'], userDataDir: string, platform: string) {
    this.#safeStorage = safeStorage;
    this.#dir = userDataDir;
    this.#platform = platform;
    this.#file = join(userDataDir, SECRETS_FILE);
  }

  /**
   * Why secrets cannot be kept on disk here, or undefined when the OS keychain
   * protects them (then they persist across sessions).
   */
  unprotectedReason(): string | undefined {
    if (!this.#safeStorage.isEncryptionAvailable())
      return 'the operating system offers no encryption (Electron’s safeStorage is unavailable)';
    if (this.#platform !== 'linux') return undefined;
    const backend = this.#safeStorage.getSelectedStorageBackend();
    if (KEYRING_BACKENDS.has(backend)) return undefined;
    return backend === 'basic_text'
      ? 'no keyring (GNOME Keyring or KWallet) was found, and Electron’s safeStorage would then encrypt with its basic_text backend, a key built into Electron that protects nothing'
      : `no keyring protects them (Electron’s safeStorage backend is ${backend})`;
  }

  /** Whether secrets are encrypted by the OS keychain and kept across sessions. */
  persists(): boolean {
    return this.unprotectedReason() === undefined;
  }

  /** The secret, or null when none is stored. */
  async get(name: StoredSecretName): Promise<string | null> {
    const inSession = this.#session.get(name);
    if (inSession !== undefined) return inSession;
    const stored = (await this.#read())[name];
    if (stored === undefined) return null;
    // A ciphertext written while a keyring was there: it can be read only as long as safeStorage can decrypt.
    if (!this.#safeStorage.isEncryptionAvailable()) {
      throw new StoreError(
        `the stored ${name} cannot be decrypted: the operating system offers no encryption now (safeStorage is unavailable)`,
      );
    }
    let plain: string;
    try {
      plain = this.#safeStorage.decryptString(Buffer.from(stored, 'base64'));
    } catch (e) {
      throw new StoreError(`the stored ${name} could not be decrypted (was the OS keychain reset?)`, { cause: e });
    }
    if (!this.persists()) {
      // Readable without a keyring: written with basic_text's built-in key (by a version
      // that allowed it), so the file protects nothing. It moves to memory and leaves the disk.
      this.#session.set(name, plain);
      await this.#update((all) => withoutSecret(all, name), { onlyIfStored: name });
    }
    return plain;
  }

  /**
   * Encrypts and stores the secret; without a keychain to protect it, keeps it
   * in memory for this session only and writes nothing (an older copy on disk
   * of the same secret is removed, so it cannot come back).
   */
  set(name: StoredSecretName, value: string): Promise<void> {
    if (!this.persists()) {
      this.#session.set(name, value);
      return this.#update((all) => withoutSecret(all, name), { onlyIfStored: name });
    }
    const ciphertext = this.#safeStorage.encryptString(value).toString('base64');
    this.#session.delete(name);
    return this.#update((all) => ({ ...all, [name]: ciphertext }));
  }

  /** Forgets the secret. */
  delete(name: StoredSecretName): Promise<void> {
    this.#session.delete(name);
    return this.#update((all) => withoutSecret(all, name), { onlyIfStored: name });
  }

  /**
   * Rewrites the file through a temporary file renamed over it, so a crash
   * leaves the old file or the new one. The temporary file is created afresh,
   * exclusively and with mode 0600: one left by a crash (perhaps with a wider
   * mode, or as a link) is removed first, never written through, since a mode
   * given to `writeFile` applies only to a file it creates.
   */
  #update(change: (all: Ciphertexts) => Ciphertexts, options: { onlyIfStored?: StoredSecretName } = {}): Promise<void> {
    return this.#writes.run(async () => {
      const current = await this.#read();
      if (options.onlyIfStored !== undefined && current[options.onlyIfStored] === undefined) return;
      const all = change(current);
      await mkdir(this.#dir, { recursive: true, mode: 0o700 });
      const temp = `${this.#file}.tmp`;
      await rm(temp, { force: true });
      await writeFile(temp, JSON.stringify(all), { mode: 0o600, flag: 'wx' });
      await rename(temp, this.#file);
    });
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
    if (
      typeof parsed !== 'object' ||
      parsed === null ||
      Array.isArray(parsed) ||
      !Object.values(parsed).every((v) => typeof v === 'string')
    ) {
      throw new StoreError('the secrets file is corrupt: not an object of ciphertexts');
    }
    return parsed;
  }
}

function withoutSecret(all: Ciphertexts, name: StoredSecretName): Ciphertexts {
  return Object.fromEntries(Object.entries(all).filter(([key]) => key !== name));
}
