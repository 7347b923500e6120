/**
 * End-to-end encryption of what sync sends: AES-GCM through WebCrypto, keys
 * derived from a passphrase with PBKDF2-SHA256 and a random salt kept in the
 * collection header. One derivation gives two keys: the AES-GCM key that seals
 * point contents and an HMAC-SHA256 key that names points (a keyed hash of the
 * record id, so a point id tells the server nothing, not even when a memory was
 * made). A key check (a known text sealed with the key, together with the
 * header's settings) tells a wrong passphrase apart before anything is read or
 * written, and a header whose settings were changed on the server (say
 * `encryptVectors` switched off) from one that was not.
 */
import { SyncError, ValidationError } from '../errors.js';
import {
  DEFAULT_KDF_ITERATIONS,
  MAX_KDF_ITERATIONS,
  MIN_KDF_ITERATIONS,
  SALT_BYTES,
  fromBase64,
  isKdfIterations,
  passphraseKeys,
  subtleCrypto,
  toBase64,
} from '../util/web-crypto.js';
import type { CollectionHeader } from './sync-target.js';

export { DEFAULT_KDF_ITERATIONS, MAX_KDF_ITERATIONS, MIN_KDF_ITERATIONS, SALT_BYTES, fromBase64, toBase64 };

/** Options of end-to-end encryption. */
export interface EncryptionOptions {
  /**
   * The passphrase every device of this collection uses. It never leaves the device.
   * @example 'correct horse battery staple'
   */
  passphrase: string;
  /**
   * Also encrypt vectors: the server then holds nothing readable, and cannot search.
   * Fixed when the collection is created; a device that asks for it refuses a
   * collection that keeps vectors in clear.
   * @default false
   */
  encryptVectors?: boolean;
}

/** Format of an end-to-end encrypted collection: every field the client acts on is authenticated. */
export const SEALED_FORMAT = 2;

const CHECK_TEXT = 'engram key check v2';
const CHECK_AAD = 'engram-key-check';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The encryption part of a collection header. */
export type HeaderEncryption = NonNullable<CollectionHeader['encryption']>;

function subtle(): SubtleCrypto {
  const s = subtleCrypto();
  if (s === undefined)
    throw new SyncError('encryption needs WebCrypto (crypto.subtle), which this runtime lacks', {
      reason: 'encryption',
    });
  return s;
}

/** The keys one passphrase and salt give. */
export interface SyncKeys {
  /** Seals and opens point contents (AES-GCM-256). */
  readonly seal: CryptoKey;
  /** Names points (HMAC-SHA256). */
  readonly name: CryptoKey;
}

/**
 * Keys already derived in this session, by salt, iterations and passphrase: deriving
 * takes 600k PBKDF2 rounds, too slow to repeat on every auto-sync. The key check is
 * still verified on every sync.
 */
export type KeyCache = Map<string, SyncKeys>;

/** Keys kept per session at most. */
const MAX_CACHED_KEYS = 8;

function cacheKeyOf(salt: string, iterations: number, passphrase: string): string {
  return JSON.stringify([salt, iterations, passphrase]);
}

function remember(cache: KeyCache, key: string, keys: SyncKeys): void {
  if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value!);
  cache.set(key, keys);
}

async function deriveKeys(passphrase: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<SyncKeys> {
  const { cipher, mac } = await passphraseKeys(subtle(), passphrase, salt, iterations, ['sign']);
  return { seal: cipher, name: mac };
}

/** The keys of a passphrase and a header's salt: from the session's cache, or derived (and remembered there). */
async function sessionKeys(
  passphrase: string,
  encryption: HeaderEncryption,
  cache: KeyCache | undefined,
): Promise<SyncKeys> {
  const cacheKey = cacheKeyOf(encryption.salt, encryption.iterations, passphrase);
  const cached = cache?.get(cacheKey);
  if (cached !== undefined) return cached;
  const keys = await deriveKeys(passphrase, fromBase64(encryption.salt)!, encryption.iterations);
  if (cache !== undefined) remember(cache, cacheKey, keys);
  return keys;
}

/**
 * The header's encryption parameters, checked: the KDF iterations an integer in
 * [MIN_KDF_ITERATIONS, MAX_KDF_ITERATIONS], the salt and key check base64 of the
 * right lengths. Anything else is a SyncError ('incompatible'): a header engram did
 * not write is refused before any key is derived from it.
 */
export function checkHeaderEncryption(value: Record<string, unknown>): HeaderEncryption {
  const bad = (detail: string): SyncError =>
    new SyncError(`the collection header is not one engram wrote: ${detail}`, { reason: 'incompatible' });
  const { kdf, iterations, salt, check, encryptVectors } = value;
  if (kdf !== 'PBKDF2-SHA256') throw bad(`unknown key derivation ${JSON.stringify(kdf ?? null)}`);
  if (!isKdfIterations(iterations)) {
    throw bad(
      `KDF iterations must be an integer from ${MIN_KDF_ITERATIONS} to ${MAX_KDF_ITERATIONS}, got ${JSON.stringify(iterations ?? null)}`,
    );
  }
  if (typeof salt !== 'string' || fromBase64(salt)?.length !== SALT_BYTES)
    throw bad(`the salt must be ${SALT_BYTES} bytes in base64`);
  if (typeof check !== 'string' || (fromBase64(check)?.length ?? 0) < IV_BYTES + TAG_BYTES)
    throw bad('the key check is not a sealed text in base64');
  if (typeof encryptVectors !== 'boolean') throw bad('encryptVectors is not a boolean');
  return { kdf, iterations, salt, check, encryptVectors };
}

/** What the key check seals besides its text: every setting of the header but the check itself. */
function headerSettings(
  header: Omit<CollectionHeader, 'encryption'>,
  encryption: Omit<HeaderEncryption, 'check'>,
): string {
  return JSON.stringify([
    header.format,
    header.embedderId,
    header.dimensions,
    encryption.kdf,
    encryption.iterations,
    encryption.salt,
    encryption.encryptVectors,
  ]);
}

/** The key check's text, opened with `cipher`; one that does not open is a wrong passphrase. */
async function openedKeyCheck(cipher: PayloadCipher, check: string): Promise<string> {
  try {
    return await cipher.open(check, CHECK_AAD);
  } catch (e) {
    throw new SyncError('wrong passphrase: it does not open this collection (nothing was changed)', {
      cause: e,
      reason: 'wrong-passphrase',
    });
  }
}

/**
 * Checks the key check's opened text: the known text (else the passphrase is wrong), then the
 * header's settings as its key check sealed them (else the header was changed on the server).
 */
function checkKeyCheck(text: string, header: CollectionHeader, encryption: HeaderEncryption): void {
  let sealed: unknown;
  try {
    sealed = JSON.parse(text);
  } catch {
    sealed = undefined;
  }
  if (!Array.isArray(sealed) || sealed[0] !== CHECK_TEXT)
    throw new SyncError('wrong passphrase: the key check does not match (nothing was changed)', {
      reason: 'wrong-passphrase',
    });
  if (sealed[1] !== headerSettings(header, encryption)) {
    throw new SyncError(
      'the collection header was changed after it was made: its settings (embedder, key derivation, encryptVectors) differ from those its key check sealed. Nothing was read or written',
      { reason: 'incompatible' },
    );
  }
}

/** Seals and opens point contents, and names points, with the keys of one collection. */
export class PayloadCipher {
  readonly #keys: SyncKeys;
  /** Whether vectors are sealed too (and not sent in clear). */
  readonly encryptVectors: boolean;

  private constructor(keys: SyncKeys, encryptVectors: boolean) {
    this.#keys = keys;
    this.encryptVectors = encryptVectors;
  }

  /**
   * A new salt, keys and key check for a collection that has none yet; the check
   * seals the header's settings (`header` is the rest of the header to be written).
   */
  static async create(
    options: EncryptionOptions,
    header: Omit<CollectionHeader, 'encryption'>,
    iterations = DEFAULT_KDF_ITERATIONS,
    cache?: KeyCache,
  ): Promise<{ cipher: PayloadCipher; encryption: HeaderEncryption }> {
    const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
    const encryptVectors = options.encryptVectors ?? false;
    const keys = await deriveKeys(options.passphrase, salt, iterations);
    const cipher = new PayloadCipher(keys, encryptVectors);
    const settings = { kdf: 'PBKDF2-SHA256', iterations, salt: toBase64(salt), encryptVectors } as const;
    if (cache !== undefined) remember(cache, cacheKeyOf(settings.salt, iterations, options.passphrase), keys);
    const check = await cipher.seal(JSON.stringify([CHECK_TEXT, headerSettings(header, settings)]), CHECK_AAD);
    return { cipher, encryption: { ...settings, check } };
  }

  /**
   * The cipher of an encrypted collection, after its key check: a wrong passphrase
   * is a SyncError with reason 'wrong-passphrase'; a header whose settings differ
   * from those its key check sealed (changed on the server) is one with reason
   * 'incompatible'. Nothing has been read or written then.
   */
  static async open(passphrase: string, header: CollectionHeader, cache?: KeyCache): Promise<PayloadCipher> {
    const encryption = header.encryption;
    if (encryption === undefined) throw new SyncError('the collection is not encrypted', { reason: 'incompatible' });
    const keys = await sessionKeys(passphrase, encryption, cache);
    const cipher = new PayloadCipher(keys, encryption.encryptVectors);
    const text = await openedKeyCheck(cipher, encryption.check);
    checkKeyCheck(text, header, encryption);
    return cipher;
  }

  /** Encrypts `plain` bound to `aad` (additional data, authenticated, not sent): base64 of IV, ciphertext and tag. */
  async seal(plain: string | Uint8Array<ArrayBuffer>, aad: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const data = typeof plain === 'string' ? new TextEncoder().encode(plain) : plain;
    const sealed = new Uint8Array(
      await subtle().encrypt(
        { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(aad) },
        this.#keys.seal,
        data,
      ),
    );
    const out = new Uint8Array(IV_BYTES + sealed.length);
    out.set(iv);
    out.set(sealed, IV_BYTES);
    return toBase64(out);
  }

  /**
   * Decrypts what {@link seal} made with the same `aad`. A tampered text, or one
   * whose additional data differs (a field changed, or the text moved to another
   * point), is a SyncError with reason 'encryption'.
   */
  async open(sealed: string, aad: string): Promise<string> {
    const bytes = fromBase64(sealed);
    if (bytes === undefined) throw new SyncError('the encrypted payload is not base64', { reason: 'encryption' });
    if (bytes.length < IV_BYTES + TAG_BYTES)
      throw new SyncError('the encrypted payload is too short', { reason: 'encryption' });
    try {
      const plain = await subtle().decrypt(
        { name: 'AES-GCM', iv: bytes.subarray(0, IV_BYTES), additionalData: new TextEncoder().encode(aad) },
        this.#keys.seal,
        bytes.subarray(IV_BYTES),
      );
      return new TextDecoder().decode(plain);
    } catch (e) {
      throw new SyncError(
        'the encrypted payload does not open with this key and these fields (tampered, or another key)',
        { cause: e, reason: 'encryption' },
      );
    }
  }

  /**
   * The point id of a record in this collection: the first 16 bytes of
   * HMAC-SHA256(kind, record id) under the naming key, as a version-8 UUID. The id
   * reveals nothing of the record (a memory id would carry its creation time).
   */
  async pointId(kind: string, rid: string): Promise<string> {
    const mac = new Uint8Array(
      await subtle().sign('HMAC', this.#keys.name, new TextEncoder().encode(JSON.stringify([kind, rid]))),
    );
    return uuidOf(mac);
  }
}

/** The first 16 bytes of a digest as a version-8 (custom, name-based) RFC 9562 UUID. */
export function uuidOf(digest: Uint8Array): string {
  const b = digest.slice(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Validates encryption options at the door. */
export function parseEncryption(value: unknown, field: string): EncryptionOptions | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(field, 'must be an object with a passphrase');
  const { passphrase, encryptVectors, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new ValidationError(field, `unknown option ${unknown[0]!}`);
  if (typeof passphrase !== 'string' || passphrase.length < 8)
    throw new ValidationError(`${field}.passphrase`, 'must be a string of at least 8 characters');
  if (encryptVectors !== undefined && typeof encryptVectors !== 'boolean')
    throw new ValidationError(`${field}.encryptVectors`, 'must be a boolean');
  return { passphrase, ...(encryptVectors === undefined ? {} : { encryptVectors }) };
}
