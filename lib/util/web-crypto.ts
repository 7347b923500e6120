/**
 * WebCrypto primitives shared by the two places engram encrypts: sync (what
 * leaves the device, lib/sync/encryption.ts) and the store at rest
 * (lib/store/at-rest-key.ts), and the encrypted export (lib/engine/transfer/sealed-export.ts).
 * base64 without Node's Buffer, and keys from a passphrase with PBKDF2-SHA256.
 * Each caller turns a missing WebCrypto into its own typed error.
 */
import { ValidationError } from '../errors.js';

/** PBKDF2 iterations for new keys (OWASP's 2023 figure for PBKDF2-HMAC-SHA256). */
export const DEFAULT_KDF_ITERATIONS = 600_000;

/** Fewest PBKDF2 iterations engram derives with (what tests use; a real key has the default). */
export const MIN_KDF_ITERATIONS = 1_000;

/**
 * Most PBKDF2 iterations engram derives with, about 17 times the default: a derivation
 * always ends. A stored setting asking for more (1e12 would never finish) is refused, not obeyed.
 */
export const MAX_KDF_ITERATIONS = 10_000_000;

/** Salt length engram writes and accepts. */
export const SALT_BYTES = 16;

/** WebCrypto's SubtleCrypto, or undefined in a runtime without it (the caller throws its own typed error). */
export function subtleCrypto(): SubtleCrypto | undefined {
  return (globalThis.crypto as Crypto | undefined)?.subtle;
}

/** base64 of bytes, without Node's Buffer (this runs in browsers too). */
export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes of a base64 string; undefined when it is not base64. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Whether `n` is an iteration count engram derives with. */
export function isKdfIterations(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= MIN_KDF_ITERATIONS && n <= MAX_KDF_ITERATIONS;
}

/** Checks a `kdfIterations` option at the door: undefined (the default) or an iteration count engram derives with. */
export function checkKdfIterations(value: unknown, field: string): number | undefined {
  if (value !== undefined && !isKdfIterations(value))
    throw new ValidationError(field, `must be an integer from ${MIN_KDF_ITERATIONS} to ${MAX_KDF_ITERATIONS}`);
  return value;
}

/**
 * `bits` bits derived from `passphrase` with PBKDF2-SHA256 over `salt`. The
 * caller wipes them (`fill(0)`) once it has imported its keys.
 */
async function passphraseBits(
  subtle: SubtleCrypto,
  passphrase: string,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  bits: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const material = await subtle.importKey('raw', new TextEncoder().encode(passphrase), 'PBKDF2', false, ['deriveBits']);
  return new Uint8Array(await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, material, bits));
}

/** The keys of one passphrase: an AES-GCM key (encrypt, decrypt), and an HMAC-SHA256 key where one was asked for. */
export interface PassphraseKeys<Mac extends CryptoKey | undefined = CryptoKey> {
  cipher: CryptoKey;
  mac: Mac;
}

/**
 * Keys from `passphrase` with PBKDF2-SHA256 over `salt`: the first 256 bits make the
 * AES-GCM key; with `macUsages`, 256 more bits make an HMAC-SHA256 key with those usages
 * (without, only 256 bits are derived: PBKDF2 runs every iteration once per 256 bits).
 * Neither key is extractable, and the derived bits are wiped before this returns, whether
 * the keys were made or not.
 */
export async function passphraseKeys(
  subtle: SubtleCrypto,
  passphrase: string,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
): Promise<PassphraseKeys<undefined>>;
export async function passphraseKeys(
  subtle: SubtleCrypto,
  passphrase: string,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  macUsages: KeyUsage[],
): Promise<PassphraseKeys>;
export async function passphraseKeys(
  subtle: SubtleCrypto,
  passphrase: string,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  macUsages?: KeyUsage[],
): Promise<PassphraseKeys<CryptoKey | undefined>> {
  const bits = await passphraseBits(subtle, passphrase, salt, iterations, macUsages === undefined ? 256 : 512);
  try {
    const [cipher, mac] = await Promise.all([
      subtle.importKey('raw', bits.subarray(0, 32), { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']),
      macUsages && subtle.importKey('raw', bits.subarray(32), { name: 'HMAC', hash: 'SHA-256' }, false, macUsages),
    ]);
    return { cipher, mac };
  } finally {
    bits.fill(0);
  }
}
