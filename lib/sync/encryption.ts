/**
 * End-to-end encryption of what sync sends: AES-GCM through WebCrypto, the key
 * derived from a passphrase with PBKDF2-SHA256 and a random salt kept in the
 * collection header. A key check (a known text encrypted with the key) tells a
 * wrong passphrase apart before anything is read or written. Each ciphertext is
 * bound to its point id, so the server cannot swap payloads between points.
 */
import { SyncError, ValidationError } from '../errors.js';
import type { CollectionHeader } from './sync-target.js';

/** Options of end-to-end encryption. */
export interface EncryptionOptions {
  /**
   * The passphrase every device of this collection uses. It never leaves the device.
   * @example 'correct horse battery staple'
   */
  passphrase: string;
  /**
   * Also encrypt vectors: the server then holds nothing readable, and cannot search.
   * Fixed when the collection is created.
   * @default false
   */
  encryptVectors?: boolean;
}

/** PBKDF2 iterations for new collections (OWASP's 2023 figure for PBKDF2-HMAC-SHA256). */
export const DEFAULT_KDF_ITERATIONS = 600_000;

const CHECK_TEXT = 'engram key check v1';
const CHECK_ID = 'engram-key-check';
const IV_BYTES = 12;
const SALT_BYTES = 16;

function subtle(): SubtleCrypto {
  const s = (globalThis.crypto as Crypto | undefined)?.subtle;
  if (s === undefined) throw new SyncError('encryption needs WebCrypto (crypto.subtle), which this runtime lacks', { reason: 'encryption' });
  return s;
}

/** base64 of bytes, without Node's Buffer (this runs in browsers too). */
export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Bytes of a base64 string. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

async function deriveKey(passphrase: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<CryptoKey> {
  const material = await subtle().importKey('raw', new TextEncoder().encode(passphrase), 'PBKDF2', false, ['deriveKey']);
  return subtle().deriveKey({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, material, { name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
}

/** Encrypts and decrypts point contents with one derived key. */
export class PayloadCipher {
  readonly #key: CryptoKey;
  /** Whether vectors are encrypted too. */
  readonly encryptVectors: boolean;

  private constructor(key: CryptoKey, encryptVectors: boolean) {
    this.#key = key;
    this.encryptVectors = encryptVectors;
  }

  /**
   * A new salt, key and key check for a collection that has none yet.
   * `iterations` below the default is for tests only.
   */
  static async create(options: EncryptionOptions, iterations = DEFAULT_KDF_ITERATIONS): Promise<{ cipher: PayloadCipher; encryption: NonNullable<CollectionHeader['encryption']> }> {
    const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
    const cipher = new PayloadCipher(await deriveKey(options.passphrase, salt, iterations), options.encryptVectors ?? false);
    const check = await cipher.seal(CHECK_TEXT, CHECK_ID);
    return { cipher, encryption: { kdf: 'PBKDF2-SHA256', iterations, salt: toBase64(salt), check, encryptVectors: cipher.encryptVectors } };
  }

  /**
   * The cipher of an encrypted collection. A wrong passphrase is a SyncError with
   * reason 'wrong-passphrase'; nothing has been read or written then.
   */
  static async open(passphrase: string, encryption: NonNullable<CollectionHeader['encryption']>): Promise<PayloadCipher> {
    const cipher = new PayloadCipher(await deriveKey(passphrase, fromBase64(encryption.salt), encryption.iterations), encryption.encryptVectors);
    let text: string;
    try {
      text = await cipher.open(encryption.check, CHECK_ID);
    } catch (e) {
      throw new SyncError('wrong passphrase: it does not open this collection (nothing was changed)', { cause: e, reason: 'wrong-passphrase' });
    }
    if (text !== CHECK_TEXT) throw new SyncError('wrong passphrase: the key check does not match (nothing was changed)', { reason: 'wrong-passphrase' });
    return cipher;
  }

  /** Encrypts a text for point `id`: base64 of IV followed by ciphertext and tag. */
  async seal(text: string, id: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const data = new TextEncoder().encode(text);
    const sealed = new Uint8Array(await subtle().encrypt({ name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(id) }, this.#key, data));
    const out = new Uint8Array(IV_BYTES + sealed.length);
    out.set(iv);
    out.set(sealed, IV_BYTES);
    return toBase64(out);
  }

  /** Decrypts what {@link seal} made for point `id`; a tampered or foreign text is a SyncError. */
  async open(sealed: string, id: string): Promise<string> {
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = fromBase64(sealed);
    } catch (e) {
      throw new SyncError(`point ${id}: the encrypted payload is not base64`, { cause: e, reason: 'encryption' });
    }
    if (bytes.length < IV_BYTES + 16) throw new SyncError(`point ${id}: the encrypted payload is too short`, { reason: 'encryption' });
    try {
      const plain = await subtle().decrypt({ name: 'AES-GCM', iv: bytes.subarray(0, IV_BYTES), additionalData: new TextEncoder().encode(id) }, this.#key, bytes.subarray(IV_BYTES));
      return new TextDecoder().decode(plain);
    } catch (e) {
      throw new SyncError(`point ${id}: the encrypted payload does not decrypt with this key (tampered, or another key)`, { cause: e, reason: 'encryption' });
    }
  }
}

/** Validates encryption options at the door. */
export function parseEncryption(value: unknown, field: string): EncryptionOptions | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ValidationError(field, 'must be an object with a passphrase');
  const { passphrase, encryptVectors, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new ValidationError(field, `unknown option ${unknown[0]!}`);
  if (typeof passphrase !== 'string' || passphrase.length < 8) throw new ValidationError(`${field}.passphrase`, 'must be a string of at least 8 characters');
  if (encryptVectors !== undefined && typeof encryptVectors !== 'boolean') throw new ValidationError(`${field}.encryptVectors`, 'must be a boolean');
  return { passphrase, ...(encryptVectors === undefined ? {} : { encryptVectors }) };
}
