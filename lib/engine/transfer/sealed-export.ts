/**
 * The encrypted export container (`engram.export({ encrypt })`, `Engram.import(file, { decrypt })`):
 * a plain export file sealed under a passphrase, so a copy on a disk or in a mailbox
 * you do not trust reads as noise.
 *
 * Layout: one header line of JSON (ASCII, ended by `\n`), then the sealed body.
 * The header says how to open the body and nothing about what is in it (no counts,
 * names, embedder, dates or scopes): format and version, the KDF (PBKDF2-SHA256, its
 * iterations and a random salt: the same derivation as the store's passphrase path,
 * lib/util/web-crypto.ts), the cipher (AES-256-GCM in chunks) with its chunk size and
 * nonce layout, and a key check. The body is the plain export cut in chunks of
 * `chunkBytes`, each sealed with AES-GCM (16-byte tag) under a nonce of a random
 * 7-byte prefix, the chunk's 32-bit big-endian counter and a final-chunk flag byte
 * (the STREAM construction), with the exact header bytes as additional data. So a
 * flipped bit, chunks swapped, dropped or appended, a file cut at any byte (a chunk
 * boundary too: the chunk before the cut was not sealed as the last), and a header
 * taken from another file are each refused; and any change to the header changes the
 * key or the additional data.
 *
 * The passphrase gives 512 bits: an AES-GCM key for the body and an HMAC-SHA256 key
 * for the key check (an HMAC of the header's settings), which tells a wrong passphrase
 * (KeyError, nothing read further) apart from a damaged body (ImportError). The header
 * is untrusted input: every parameter is checked against the limits below before a key
 * is derived from it (a KDF cost of 2^40 is refused, not run).
 */
import { ImportError, KeyError, ValidationError, throwIfAborted } from '../../errors.js';
import {
  DEFAULT_KDF_ITERATIONS,
  MAX_KDF_ITERATIONS,
  MIN_KDF_ITERATIONS,
  SALT_BYTES,
  checkKdfIterations,
  fromBase64,
  isKdfIterations,
  passphraseKeys,
  subtleCrypto,
  toBase64,
} from '../../util/web-crypto.js';
import type { TransferOptions } from './transfer.js';

/**
 * How an export is sealed: a passphrase, or the passphrase with its KDF cost.
 * @example { passphrase: 'correct horse battery staple' }
 */
export interface ExportEncryption {
  /**
   * The passphrase (at least 8 characters); engram keeps it nowhere.
   * @example 'correct horse battery staple'
   */
  passphrase: string;
  /**
   * PBKDF2-SHA256 iterations (written in the file's header; import uses the header's number).
   * @default 600000
   */
  kdfIterations?: number;
}

/** The format name of an encrypted export's header line. */
export const SEALED_EXPORT_FORMAT = 'engram-sealed-export';
/** The version this engram writes and reads. */
export const SEALED_EXPORT_VERSION = 1;

const KDF_NAME = 'PBKDF2-SHA256';
const CIPHER_NAME = 'AES-256-GCM';
/** The nonce layout, named in the header: 7 random bytes, the chunk counter (uint32 BE), the final flag (0 or 1). */
const NONCE_LAYOUT = 'prefix7-counter32be-final8';
const NONCE_PREFIX_BYTES = 7;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const CHECK_BYTES = 32;
const CHECK_LABEL = 'engram sealed export key check v1';

/** Plain bytes per chunk written: big enough that a WebCrypto call per chunk costs little, small enough to hold. */
export const DEFAULT_CHUNK_BYTES = 1 << 20;
/** Chunk sizes a header may ask for: a reader never holds more than 16 MiB of one chunk. */
export const MIN_CHUNK_BYTES = 1 << 10;
export const MAX_CHUNK_BYTES = 1 << 24;
/** The header line is at most this long (a file whose first 4 KiB hold no newline is not a sealed export). */
const MAX_HEADER_BYTES = 4096;

/** The header line as written. */
interface SealedHeader {
  format: typeof SEALED_EXPORT_FORMAT;
  version: typeof SEALED_EXPORT_VERSION;
  kdf: { name: typeof KDF_NAME; iterations: number; salt: string };
  cipher: { name: typeof CIPHER_NAME; chunkBytes: number; nonce: typeof NONCE_LAYOUT; noncePrefix: string };
  /** HMAC-SHA256 under the check key of the settings above, base64. */
  check: string;
}

interface FileKeys {
  body: CryptoKey;
  check: CryptoKey;
}

function subtle(): SubtleCrypto {
  const s = subtleCrypto();
  if (s === undefined)
    throw new KeyError('unsupported', 'an encrypted export needs WebCrypto (crypto.subtle), which this runtime lacks');
  return s;
}

/** Checks a passphrase option at the door (`options.encrypt` of export, `options.decrypt` of import). */
function checkPassphrase(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length < 8)
    throw new ValidationError(field, 'must be a string of at least 8 characters');
  return value;
}

/** Validates `options.encrypt` of export(): a passphrase, or `{ passphrase, kdfIterations? }`. */
export function parseExportEncryption(value: unknown, field: string): ExportEncryption | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return { passphrase: checkPassphrase(value, field) };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(field, 'must be a passphrase or an object with a passphrase');
  const { passphrase, kdfIterations, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new ValidationError(field, `unknown option ${unknown[0]!}`);
  const iterations = checkKdfIterations(kdfIterations, `${field}.kdfIterations`);
  return {
    passphrase: checkPassphrase(passphrase, `${field}.passphrase`),
    ...(iterations === undefined ? {} : { kdfIterations: iterations }),
  };
}

/** Validates `options.decrypt` of import(): a passphrase, or `{ passphrase }` (the KDF cost is the file's). */
export function parseExportDecryption(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return checkPassphrase(value, field);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(field, 'must be a passphrase or an object with a passphrase');
  const { passphrase, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new ValidationError(field, `unknown option ${unknown[0]!}`);
  return checkPassphrase(passphrase, `${field}.passphrase`);
}

async function deriveKeys(passphrase: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<FileKeys> {
  const { cipher, mac } = await passphraseKeys(subtle(), passphrase, salt, iterations, ['sign', 'verify']);
  return { body: cipher, check: mac };
}

/** What the key check authenticates: every setting of the header but the check. */
function checkedSettings(header: Omit<SealedHeader, 'check'>): Uint8Array<ArrayBuffer> {
  const { kdf, cipher } = header;
  return new TextEncoder().encode(
    JSON.stringify([
      CHECK_LABEL,
      header.format,
      header.version,
      kdf.name,
      kdf.iterations,
      kdf.salt,
      cipher.name,
      cipher.chunkBytes,
      cipher.nonce,
      cipher.noncePrefix,
    ]),
  );
}

/** The nonce of chunk `index`: the prefix, the counter (big-endian) and the final flag. */
function nonceOf(prefix: Uint8Array, index: number, final: boolean): Uint8Array<ArrayBuffer> {
  const nonce = new Uint8Array(NONCE_BYTES);
  nonce.set(prefix);
  new DataView(nonce.buffer).setUint32(NONCE_PREFIX_BYTES, index);
  nonce[NONCE_BYTES - 1] = final ? 1 : 0;
  return nonce;
}

/**
 * Seals the plain export `plain` under `encryption`: the header line, then the
 * chunks, each read from the Blob only when it is sealed. Progress counts bytes.
 */
export async function sealExport(
  plain: Blob,
  encryption: ExportEncryption,
  options: TransferOptions = {},
  chunkBytes = DEFAULT_CHUNK_BYTES,
): Promise<Blob> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const prefix = crypto.getRandomValues(new Uint8Array(NONCE_PREFIX_BYTES));
  const iterations = encryption.kdfIterations ?? DEFAULT_KDF_ITERATIONS;
  const keys = await deriveKeys(encryption.passphrase, salt, iterations);
  const settings = headerSettings(salt, prefix, iterations, chunkBytes);
  const headerLine = await signedHeaderLine(settings, keys.check);
  const parts: BlobPart[] = [headerLine];
  const count = Math.max(1, Math.ceil(plain.size / chunkBytes));
  for (let i = 0; i < count; i++) {
    throwIfAborted(options.signal);
    const chunk = await plain.slice(i * chunkBytes, (i + 1) * chunkBytes).arrayBuffer();
    parts.push(
      await subtle().encrypt(
        { name: 'AES-GCM', iv: nonceOf(prefix, i, i === count - 1), additionalData: headerLine },
        keys.body,
        chunk,
      ),
    );
    options.onProgress?.({ phase: 'encrypt', done: Math.min((i + 1) * chunkBytes, plain.size), total: plain.size });
  }
  return new Blob(parts, { type: 'application/octet-stream' });
}

/** The settings a new header line states: format, version, the KDF with its salt, the cipher with its nonce prefix. */
function headerSettings(
  salt: Uint8Array,
  prefix: Uint8Array,
  iterations: number,
  chunkBytes: number,
): Omit<SealedHeader, 'check'> {
  return {
    format: SEALED_EXPORT_FORMAT,
    version: SEALED_EXPORT_VERSION,
    kdf: { name: KDF_NAME, iterations, salt: toBase64(salt) },
    cipher: { name: CIPHER_NAME, chunkBytes, nonce: NONCE_LAYOUT, noncePrefix: toBase64(prefix) },
  } as const;
}

/** The header line's bytes: `settings` with their key check (an HMAC under `checkKey`), ended by a newline. */
async function signedHeaderLine(
  settings: Omit<SealedHeader, 'check'>,
  checkKey: CryptoKey,
): Promise<Uint8Array<ArrayBuffer>> {
  const check = new Uint8Array(await subtle().sign('HMAC', checkKey, checkedSettings(settings)));
  return new TextEncoder().encode(`${JSON.stringify({ ...settings, check: toBase64(check) })}\n`);
}

/** The header line of `file` if it begins with a sealed export's, with its length in bytes; else undefined. */
async function readHeaderLine(file: Blob): Promise<{ text: string; bytes: Uint8Array<ArrayBuffer> } | undefined> {
  const head = new Uint8Array(await file.slice(0, MAX_HEADER_BYTES).arrayBuffer());
  const prefix = new TextEncoder().encode(`{"format":"${SEALED_EXPORT_FORMAT}"`);
  if (head.length < prefix.length || prefix.some((b, i) => head[i] !== b)) return undefined;
  const end = head.indexOf(0x0a);
  if (end < 0) throw new ImportError(1, `the encrypted export's header line is longer than ${MAX_HEADER_BYTES} bytes`);
  const bytes = head.slice(0, end + 1);
  return { text: new TextDecoder().decode(bytes.subarray(0, end)), bytes };
}

/**
 * Whether `file` is an encrypted export (its first bytes are a sealed export's header):
 * an app asks for the passphrase before it imports.
 * @example if (await isEncryptedExport(file)) passphrase = await ask()
 */
export async function isEncryptedExport(file: Blob | string): Promise<boolean> {
  if (typeof file === 'string') return file.startsWith(`{"format":"${SEALED_EXPORT_FORMAT}"`);
  try {
    return (await readHeaderLine(file)) !== undefined;
  } catch {
    return true;
  }
}

/** An ImportError naming line 1: the encrypted export's header `detail`. */
function badHeader(detail: string): ImportError {
  return new ImportError(1, `the encrypted export's header ${detail}`);
}

/** The header line checked against this engram's format and limits; an ImportError naming line 1 otherwise. */
function checkSealedHeader(text: string): SealedHeader {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ImportError(1, "the encrypted export's header is not valid JSON", { cause: e });
  }
  const h = value as Record<string, unknown>;
  const keys = Object.keys(h).sort().join();
  if (keys !== 'check,cipher,format,kdf,version') throw badHeader(`has the fields ${keys}, not those engram writes`);
  if (h['version'] !== SEALED_EXPORT_VERSION)
    throw badHeader(`has version ${JSON.stringify(h['version'])}; this engram reads version ${SEALED_EXPORT_VERSION}`);
  checkHeaderKdf((h['kdf'] ?? {}) as Record<string, unknown>);
  checkHeaderCipher((h['cipher'] ?? {}) as Record<string, unknown>);
  if (typeof h['check'] !== 'string' || fromBase64(h['check'])?.length !== CHECK_BYTES)
    throw badHeader(`key check is not ${CHECK_BYTES} bytes in base64`);
  return h as unknown as SealedHeader;
}

/** Checks the header's KDF: its name, an iteration count within the limits, a salt of the right length. */
function checkHeaderKdf(kdf: Record<string, unknown>): void {
  if (kdf['name'] !== KDF_NAME)
    throw badHeader(`names the key derivation ${JSON.stringify(kdf['name'])}, not ${KDF_NAME}`);
  if (!isKdfIterations(kdf['iterations']))
    throw badHeader(
      `asks for ${JSON.stringify(kdf['iterations'])} KDF iterations; engram derives with ${MIN_KDF_ITERATIONS} to ${MAX_KDF_ITERATIONS}`,
    );
  if (typeof kdf['salt'] !== 'string' || fromBase64(kdf['salt'])?.length !== SALT_BYTES)
    throw badHeader(`salt is not ${SALT_BYTES} bytes in base64`);
}

/** Checks the header's cipher: its name, the nonce layout, a chunk size within the limits, the nonce prefix. */
function checkHeaderCipher(cipher: Record<string, unknown>): void {
  if (cipher['name'] !== CIPHER_NAME)
    throw badHeader(`names the cipher ${JSON.stringify(cipher['name'])}, not ${CIPHER_NAME}`);
  if (cipher['nonce'] !== NONCE_LAYOUT) throw badHeader(`names the nonce layout ${JSON.stringify(cipher['nonce'])}`);
  const chunkBytes = cipher['chunkBytes'];
  if (
    typeof chunkBytes !== 'number' ||
    !Number.isInteger(chunkBytes) ||
    chunkBytes < MIN_CHUNK_BYTES ||
    chunkBytes > MAX_CHUNK_BYTES
  )
    throw badHeader(
      `asks for chunks of ${JSON.stringify(chunkBytes)} bytes; engram reads ${MIN_CHUNK_BYTES} to ${MAX_CHUNK_BYTES}`,
    );
  if (typeof cipher['noncePrefix'] !== 'string' || fromBase64(cipher['noncePrefix'])?.length !== NONCE_PREFIX_BYTES)
    throw badHeader(`nonce prefix is not ${NONCE_PREFIX_BYTES} bytes in base64`);
}

/**
 * The plain export text inside the encrypted export `file`, checked chunk by chunk.
 * A wrong passphrase is a KeyError (`wrong-key`) before the body is read; a header
 * this engram does not read, or a body damaged, cut, extended or from another file,
 * an ImportError (line 1 for the header, line 2 for the body). Progress counts bytes.
 */
export async function openSealedExport(file: Blob, passphrase: string, options: TransferOptions = {}): Promise<string> {
  const line = await readHeaderLine(file);
  if (line === undefined) throw new ImportError(1, 'is not the header of an encrypted engram export');
  const header = checkSealedHeader(line.text);
  const { chunkBytes } = header.cipher;
  const keys = await unlockedKeys(header, passphrase);
  const prefix = fromBase64(header.cipher.noncePrefix)!;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const texts: string[] = [];
  const sealed = chunkBytes + TAG_BYTES;
  const total = file.size - line.bytes.length;
  for (let at = line.bytes.length, index = 0; ; index++) {
    throwIfAborted(options.signal);
    const remaining = file.size - at;
    // The last chunk is whatever is left once no more than one sealed chunk remains; it must carry the final flag.
    const final = remaining <= sealed;
    if (remaining < TAG_BYTES)
      throw new ImportError(2, `the encrypted body ends inside chunk ${index}: the file is truncated`);
    const bytes = await file.slice(at, at + Math.min(remaining, sealed)).arrayBuffer();
    const plain = await openChunk({ bytes, index, iv: nonceOf(prefix, index, final) }, keys.body, line.bytes);
    at += bytes.byteLength;
    options.onProgress?.({ phase: 'decrypt', done: at - line.bytes.length, total });
    texts.push(decodedText(decoder, plain, final));
    if (final) return texts.join('');
  }
}

/** The text of one opened chunk, decoded on from the chunks before; an ImportError naming line 2 when it is not UTF-8. */
function decodedText(decoder: TextDecoder, plain: ArrayBuffer, final: boolean): string {
  try {
    return decoder.decode(plain, { stream: !final });
  } catch (e) {
    throw new ImportError(2, 'the decrypted export is not UTF-8 text', { cause: e });
  }
}

/** The file's keys derived from `passphrase`, once the header's key check accepts them; a KeyError (`wrong-key`) otherwise. */
async function unlockedKeys(header: SealedHeader, passphrase: string): Promise<FileKeys> {
  const keys = await deriveKeys(passphrase, fromBase64(header.kdf.salt)!, header.kdf.iterations);
  const matches = await subtle().verify('HMAC', keys.check, fromBase64(header.check)!, checkedSettings(header));
  if (!matches)
    throw new KeyError(
      'wrong-key',
      'the passphrase does not open this encrypted export (or its header was altered); nothing was written',
    );
  return keys;
}

/** One sealed chunk opened under `key` with the header line as additional data; an ImportError naming line 2 if it does not authenticate. */
async function openChunk(
  chunk: { bytes: ArrayBuffer; index: number; iv: Uint8Array<ArrayBuffer> },
  key: CryptoKey,
  headerLine: Uint8Array<ArrayBuffer>,
): Promise<ArrayBuffer> {
  try {
    return await subtle().decrypt({ name: 'AES-GCM', iv: chunk.iv, additionalData: headerLine }, key, chunk.bytes);
  } catch (e) {
    throw new ImportError(
      2,
      `chunk ${chunk.index} of the encrypted body does not authenticate: the file is damaged, truncated, extended or its header comes from another file; nothing was written`,
      { cause: e },
    );
  }
}

/**
 * The plain export behind `file`: the file itself when it is plain and no passphrase
 * was given, its opened body when it is sealed and one was. An encrypted file without a
 * passphrase is a KeyError (`key-needed`); a plain file with one, a KeyError
 * (`not-encrypted`), as open() treats a plain store given a key: the caller believed
 * the file sealed, and it was not. Nothing has been written in either case.
 */
export async function plainExportOf(
  file: Blob | string,
  passphrase: string | undefined,
  options: TransferOptions = {},
): Promise<Blob | string> {
  checkPassphraseGiven(await isEncryptedExport(file), passphrase);
  if (passphrase === undefined) return file;
  if (typeof file === 'string')
    throw new ImportError(1, 'an encrypted export is binary: pass the file as a Blob or File, not as text');
  return openSealedExport(file, passphrase, options);
}

/** Refuses a sealed file without a passphrase (`key-needed`) and a plain one with a passphrase (`not-encrypted`). */
function checkPassphraseGiven(sealed: boolean, passphrase: string | undefined): void {
  if (sealed && passphrase === undefined)
    throw new KeyError(
      'key-needed',
      'this export is encrypted: pass its passphrase as options.decrypt (nothing was written)',
    );
  if (!sealed && passphrase !== undefined)
    throw new KeyError(
      'not-encrypted',
      'this export is not encrypted, but options.decrypt gave a passphrase: import it without one (nothing was written)',
    );
}

/** Options of `engram.export()`. */
export interface ExportOptions extends TransferOptions {
  /**
   * Seal the file under this passphrase (or `{ passphrase, kdfIterations }`): a plain header
   * saying only how it is sealed, then the export encrypted and authenticated. Without it the
   * export is the plain JSON-lines file.
   * @default undefined
   * @example await engram.export({ encrypt: 'correct horse battery staple' })
   */
  encrypt?: string | ExportEncryption;
}

/**
 * The passphrase of an encrypted export file (`Engram.import(file, { decrypt })`): a string,
 * or `{ passphrase }` (the KDF cost is the file's own).
 * @example 'correct horse battery staple'
 */
export type ExportDecryption = string | { passphrase: string };
