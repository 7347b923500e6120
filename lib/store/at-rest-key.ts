/**
 * The key of a store encrypted at rest. Each store has its own random 512-bit
 * data key (the row cipher's seal and blind keys, row-cipher.ts), kept in the
 * store wrapped (AES-GCM, WebCrypto) under the user's key: a `CryptoKey` the
 * application holds, or one derived from a passphrase with PBKDF2-SHA256 over a
 * random salt kept beside it. The wrapped key is the key check: a wrong key or
 * passphrase fails to unwrap it, a typed error before any row is read or
 * written. The header row (`meta` key {@link AT_REST_KEY}) is the one row stored
 * in clear; its settings are the wrap's additional data, so changing them
 * (fewer KDF rounds, another store id) also fails the unwrap.
 */
import { Dexie } from 'dexie';
import { KeyError, NotFoundError, StoreError, ValidationError } from '../errors.js';
import { storeError } from './store-error.js';
import {
  DEFAULT_KDF_ITERATIONS,
  SALT_BYTES,
  checkKdfIterations,
  fromBase64,
  isKdfIterations,
  passphraseKeys,
  subtleCrypto,
  toBase64,
} from '../util/web-crypto.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { ROW_KEY_BYTES } from './row-cipher.js';

/**
 * Encryption at rest of a store (`Engram.open({ encryption })`): a key or a passphrase.
 * A store is made encrypted or plain when it is created and stays so.
 */
export interface AtRestEncryption {
  /**
   * An AES-GCM `CryptoKey` with the `encrypt` and `decrypt` usages (it may be
   * non-extractable), e.g. one kept by the OS keychain's wrapper.
   * @example await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])
   */
  key?: CryptoKey;
  /**
   * A passphrase (at least 8 characters), stretched with PBKDF2-SHA256.
   * @example 'correct horse battery staple'
   */
  passphrase?: string;
  /**
   * PBKDF2 iterations when the store is created with a passphrase (kept in the
   * store; later opens use the stored number).
   * @default 600000
   */
  kdfIterations?: number;
}

/** The `meta` key of the key header, the one row of an encrypted store kept in clear. */
export const AT_REST_KEY = 'atRest';

/**
 * The key header's format, bound into the wrap of the data key. 2: the store's rows are sealed as
 * this engram seals them since session 40 (the clear fields as placeholders inside the seal, terms
 * rows without keyed hashes), which an engram of format 1 would misread; it reads only headers of
 * format 1 and refuses any other (KeyError `unsupported`), so it refuses such a store before it
 * reads or writes a row. A store of format 1 opens here and is moved to 2 as it opens
 * (openStore: its data key wrapped again under the same key, the one row rewritten).
 */
const HEADER_FORMAT = 2;
/** The header formats this engram reads: 1, written before the rows changed, and its own. */
const READ_FORMATS: readonly number[] = [1, HEADER_FORMAT];
const STORE_ID_BYTES = 16;
const IV_BYTES = 12;
const DATA_KEY_BYTES = 2 * ROW_KEY_BYTES;

/** The key header as stored. */
export interface AtRestHeader {
  /** {@link HEADER_FORMAT}, or an older one this engram reads (READ_FORMATS). */
  format: number;
  /** Random id of this store, bound into every sealed row (a row of another store never opens). */
  storeId: string;
  /** How the wrapping key comes from a passphrase; absent when the store was made with a CryptoKey. */
  kdf?: { name: 'PBKDF2-SHA256'; iterations: number; salt: string };
  /** The data key: IV, then AES-GCM of the key and its tag, base64. */
  wrapped: string;
}

/** An unlocked store: its id and its data key (64 bytes; the caller hands it to a RowCipher, then wipes it). */
export interface UnlockedKey {
  storeId: string;
  dataKey: Uint8Array<ArrayBuffer>;
  /** The store's header moved to the current format, to be written as it opens (its header was older). */
  upgraded?: AtRestHeader;
}

function subtle(): SubtleCrypto {
  const s = subtleCrypto();
  if (s === undefined)
    throw new KeyError('unsupported', 'encryption at rest needs WebCrypto (crypto.subtle), which this runtime lacks');
  return s;
}

/** Whether `key` looks like an AES-GCM CryptoKey that may encrypt and decrypt (the store wraps its data key with it). */
function isSealingKey(key: unknown): boolean {
  const k = key as Partial<CryptoKey>;
  const usages = Array.isArray(k.usages) ? (k.usages as string[]) : [];
  return (
    typeof k.algorithm === 'object' &&
    (k.algorithm as { name?: unknown }).name === 'AES-GCM' &&
    usages.includes('encrypt') &&
    usages.includes('decrypt')
  );
}

/** Validates `options.encryption` at the door. */
export function parseAtRestEncryption(value: unknown, field: string): AtRestEncryption | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(field, 'must be an object with a key or a passphrase');
  const { key, passphrase, kdfIterations, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new ValidationError(field, `unknown option ${unknown[0]!}`);
  if ((key === undefined) === (passphrase === undefined))
    throw new ValidationError(field, 'must have either a key or a passphrase');
  if (passphrase !== undefined && (typeof passphrase !== 'string' || passphrase.length < 8))
    throw new ValidationError(`${field}.passphrase`, 'must be a string of at least 8 characters');
  if (key !== undefined && !isSealingKey(key))
    throw new ValidationError(`${field}.key`, 'must be an AES-GCM CryptoKey with the encrypt and decrypt usages');
  const iterations = checkKdfIterations(kdfIterations, `${field}.kdfIterations`);
  return {
    ...(key === undefined ? {} : { key: key as CryptoKey }),
    ...(passphrase === undefined ? {} : { passphrase }),
    ...(iterations === undefined ? {} : { kdfIterations: iterations }),
  };
}

/** The additional data of the wrap: every setting of the header but the wrapped key. */
function headerAad(header: Omit<AtRestHeader, 'wrapped'>): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(
    JSON.stringify([
      'engram-at-rest',
      header.format,
      header.storeId,
      header.kdf?.iterations ?? null,
      header.kdf?.salt ?? null,
    ]),
  );
}

async function wrappingKey(encryption: AtRestEncryption, kdf: AtRestHeader['kdf']): Promise<CryptoKey> {
  if (encryption.key !== undefined) {
    if (kdf !== undefined) throw new KeyError('wrong-key', 'this store was encrypted with a passphrase, not a key');
    return encryption.key;
  }
  if (kdf === undefined) throw new KeyError('wrong-key', 'this store was encrypted with a key, not a passphrase');
  return (await passphraseKeys(subtle(), encryption.passphrase!, fromBase64(kdf.salt)!, kdf.iterations)).cipher;
}

/** A new store's header and data key. */
export async function createAtRestKey(encryption: AtRestEncryption): Promise<{ header: AtRestHeader } & UnlockedKey> {
  const storeId = toBase64(crypto.getRandomValues(new Uint8Array(STORE_ID_BYTES)));
  const dataKey = crypto.getRandomValues(new Uint8Array(DATA_KEY_BYTES));
  return { header: await wrapDataKey(encryption, storeId, dataKey), storeId, dataKey };
}

/** The header of store `storeId` with `dataKey` wrapped under `encryption` (a passphrase gets a new salt). */
async function wrapDataKey(
  encryption: AtRestEncryption,
  storeId: string,
  dataKey: Uint8Array<ArrayBuffer>,
): Promise<AtRestHeader> {
  const kdf =
    encryption.passphrase === undefined
      ? undefined
      : {
          name: 'PBKDF2-SHA256' as const,
          iterations: encryption.kdfIterations ?? DEFAULT_KDF_ITERATIONS,
          salt: toBase64(crypto.getRandomValues(new Uint8Array(SALT_BYTES))),
        };
  const settings = { format: HEADER_FORMAT, storeId, ...(kdf === undefined ? {} : { kdf }) };
  return wrapUnder(settings, await wrappingKey(encryption, kdf), dataKey);
}

/** The header of `settings` with `dataKey` wrapped (a fresh IV) under the wrapping key `key`. */
async function wrapUnder(
  settings: Omit<AtRestHeader, 'wrapped'>,
  key: CryptoKey,
  dataKey: Uint8Array<ArrayBuffer>,
): Promise<AtRestHeader> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  let sealed: Uint8Array;
  try {
    sealed = new Uint8Array(
      await subtle().encrypt({ name: 'AES-GCM', iv, additionalData: headerAad(settings) }, key, dataKey),
    );
  } catch (e) {
    throw new KeyError('unsupported', 'the key could not encrypt (is it an AES-GCM key with the encrypt usage?)', {
      cause: e,
    });
  }
  const wrapped = new Uint8Array(IV_BYTES + sealed.length);
  wrapped.set(iv);
  wrapped.set(sealed, IV_BYTES);
  return { ...settings, wrapped: toBase64(wrapped) };
}

/** The header if `value` is one this engram wrote, else undefined. */
function asHeader(value: unknown): AtRestHeader | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const h = value as Partial<AtRestHeader>;
  if (!READ_FORMATS.includes(h.format ?? NaN) || typeof h.storeId !== 'string' || typeof h.wrapped !== 'string')
    return undefined;
  if (fromBase64(h.storeId)?.length !== STORE_ID_BYTES) return undefined;
  if ((fromBase64(h.wrapped)?.length ?? 0) < IV_BYTES + DATA_KEY_BYTES) return undefined;
  if (h.kdf !== undefined) {
    const { name, iterations, salt } = h.kdf as Partial<NonNullable<AtRestHeader['kdf']>>;
    if (name !== 'PBKDF2-SHA256' || !isKdfIterations(iterations) || typeof salt !== 'string') return undefined;
    if (fromBase64(salt)?.length !== SALT_BYTES) return undefined;
  }
  return h as AtRestHeader;
}

/**
 * The data key of a store from its stored header: a KeyError `wrong-key` when
 * `encryption` does not open it, `unsupported` when the header is not one this
 * engram wrote.
 */
export async function unlockAtRestKey(encryption: AtRestEncryption, stored: unknown): Promise<UnlockedKey> {
  const header = asHeader(stored);
  if (header === undefined)
    throw new KeyError('unsupported', 'the store has an encryption header this engram does not read');
  const bytes = fromBase64(header.wrapped)!;
  const key = await wrappingKey(encryption, header.kdf);
  let dataKey: Uint8Array<ArrayBuffer>;
  try {
    dataKey = new Uint8Array(
      await subtle().decrypt(
        { name: 'AES-GCM', iv: bytes.subarray(0, IV_BYTES), additionalData: headerAad(header) },
        key,
        bytes.subarray(IV_BYTES),
      ),
    );
  } catch (e) {
    throw new KeyError('wrong-key', 'the key or passphrase does not open this store (nothing was read or written)', {
      cause: e,
    });
  }
  if (dataKey.length !== DATA_KEY_BYTES) throw new KeyError('unsupported', 'the store key has the wrong length');
  const upgraded = await upgradedHeader(header, key, dataKey);
  return { storeId: header.storeId, dataKey, ...(upgraded === undefined ? {} : { upgraded }) };
}

/**
 * The header of {@link HEADER_FORMAT} for a store whose `header` is of an older one: the same store id
 * and KDF settings, the data key wrapped again under the same wrapping `key` (a key given must have the
 * encrypt usage, checked where the options enter). Undefined when the header is current.
 */
async function upgradedHeader(
  header: AtRestHeader,
  key: CryptoKey,
  dataKey: Uint8Array<ArrayBuffer>,
): Promise<AtRestHeader | undefined> {
  if (header.format === HEADER_FORMAT) return undefined;
  const { storeId, kdf } = header;
  return wrapUnder({ format: HEADER_FORMAT, storeId, ...(kdf === undefined ? {} : { kdf }) }, key, dataKey);
}

/**
 * The AES-GCM key of an unlocked store's bulk bytes (row-sealing.ts `sealBulk`: index snapshots),
 * derived from its data key with HKDF-SHA256, so no key serves two algorithms. The derivation is
 * synchronous; the import into WebCrypto is the promise, which the store awaits only when it
 * first seals or opens a snapshot (one WebCrypto round trip less before the store opens).
 */
export function bulkKeyOf(dataKey: Uint8Array): Promise<CryptoKey> {
  const bits = hkdf(sha256, dataKey, new Uint8Array(0), new TextEncoder().encode('engram bulk key v1'), ROW_KEY_BYTES);
  const imported = subtle().importKey('raw', bits, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
  return imported.finally(() => bits.fill(0));
}

/**
 * What the store `name` holds before it is opened for use: whether it exists
 * with a schema (`created`) and its key header, read in clear without opening
 * the store through its schema (so no upgrade runs before the key is known).
 */
export async function readStoredHeader(name: string): Promise<{ created: boolean; header: unknown; sealed: boolean }> {
  const none = { created: false, header: undefined, sealed: false };
  if (!(await Dexie.exists(name))) return none;
  const probe = new Dexie(name);
  try {
    await probe.open();
    if (!probe.tables.some((t) => t.name === 'meta')) return none;
    const meta = probe.table<Record<string, unknown>, string>('meta');
    const [header, schema] = await meta.bulkGet([AT_REST_KEY, 'schemaVersion']);
    return {
      created: schema !== undefined || header !== undefined,
      header: header?.['value'],
      // A sealed row keeps its value under `$` (row-sealing.ts), never under `value`.
      sealed: schema !== undefined && !('value' in schema),
    };
  } finally {
    probe.close();
  }
}

/**
 * Changes the key or passphrase of the encrypted store `name` (closed or open elsewhere):
 * its data key is unwrapped with `current` and wrapped again under `next` (a passphrase
 * gets a new salt), and the key header, the one row in clear, is replaced in one small
 * transaction. No row is re-encrypted: the data key and the store id stay, so instances
 * that hold the store open keep working, and the next open needs `next`. A KeyError
 * (`wrong-key`) when `current` does not open the store, `not-encrypted` for a plain one,
 * before anything is written; a StoreError when the header changed while this ran.
 */
export async function changeAtRestKey(name: string, current: AtRestEncryption, next: AtRestEncryption): Promise<void> {
  const stored = await readStoredHeader(name);
  if (!stored.created) throw new NotFoundError('store', name);
  if (stored.header === undefined)
    throw new KeyError('not-encrypted', `store "${name}" is not encrypted: it has no key to change`);
  const { storeId, dataKey } = await unlockAtRestKey(current, stored.header);
  let header: AtRestHeader;
  try {
    header = await wrapDataKey(next, storeId, dataKey);
  } finally {
    dataKey.fill(0);
  }
  await replaceHeader(name, stored.header as AtRestHeader, header);
}

/** Puts `header` in place of `was`, the key header read before, unless another change came between (a StoreError). */
async function replaceHeader(name: string, was: AtRestHeader, header: AtRestHeader): Promise<void> {
  const probe = new Dexie(name);
  try {
    await probe.open();
    const meta = probe.table<{ key: string; value: unknown }, string>('meta');
    await probe.transaction('rw', meta, async () => {
      // Compare and swap: another change (or a conversion) between the read above and now wins.
      const now = (await meta.get(AT_REST_KEY))?.value as Partial<AtRestHeader> | undefined;
      if (now?.wrapped !== was.wrapped)
        throw new StoreError(`the key of store "${name}" changed while this changed it; nothing was written`);
      await meta.put({ key: AT_REST_KEY, value: header });
    });
  } catch (e) {
    throw storeError(e, `changing the key of store "${name}"`);
  } finally {
    probe.close();
  }
}
