import { describe, expect, it } from 'vitest';
import { SyncError, ValidationError } from '../../lib/errors.js';
import { PayloadCipher, fromBase64, parseEncryption, toBase64 } from '../../lib/sync/encryption.js';
import { decodePoint, encodePoint, pointIdOf, type SyncRecord } from '../../lib/sync/point-codec.js';
import { unsealedWire } from './sync-helpers.js';

// Tests derive keys with few iterations; the default (600k) is for real collections.
const FAST = 1_000;

const record: SyncRecord = {
  kind: 'memory',
  rid: '01J9Z3K8Q4W7X2M5N6P8R0S1T2',
  updatedAt: 1_767_225_600_000,
  origin: 'device-a',
  version: 3,
  deleted: false,
  body: { text: 'Ana moved to Lisbon', tier: 'long_term', userId: 'ana', metadata: { topic: 'home' } },
  vector: [0.6, 0.8, 0, 0],
};

describe('encryption', () => {
  it('seal() and open() round-trip text bound to one point id', async () => {
    const { cipher } = await PayloadCipher.create({ passphrase: 'correct horse battery' }, FAST);
    const sealed = await cipher.seal('hello Lisbon', 'id-1');
    expect(sealed).not.toContain('Lisbon');
    expect(await cipher.open(sealed, 'id-1')).toBe('hello Lisbon');
    // The same ciphertext moved to another point does not open.
    await expect(cipher.open(sealed, 'id-2')).rejects.toMatchObject({ reason: 'encryption' });
    const bytes = fromBase64(sealed);
    bytes[bytes.length - 1]! ^= 1;
    await expect(cipher.open(toBase64(bytes), 'id-1')).rejects.toThrow(SyncError);
  });

  it('open() with the right passphrase reads what create() sealed; a wrong one is a wrong-passphrase SyncError', async () => {
    const { cipher, encryption } = await PayloadCipher.create({ passphrase: 'correct horse battery', encryptVectors: true }, FAST);
    expect(encryption).toMatchObject({ kdf: 'PBKDF2-SHA256', iterations: FAST, encryptVectors: true });
    expect(fromBase64(encryption.salt)).toHaveLength(16);
    const sealed = await cipher.seal('x', 'p');
    const again = await PayloadCipher.open('correct horse battery', encryption);
    expect(again.encryptVectors).toBe(true);
    expect(await again.open(sealed, 'p')).toBe('x');
    const wrong = await PayloadCipher.open('incorrect horse battery', encryption).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(SyncError);
    expect(wrong).toMatchObject({ reason: 'wrong-passphrase', transient: false });
  });

  it('two collections made with one passphrase get different salts and keys', async () => {
    const a = await PayloadCipher.create({ passphrase: 'same passphrase' }, FAST);
    const b = await PayloadCipher.create({ passphrase: 'same passphrase' }, FAST);
    expect(a.encryption.salt).not.toBe(b.encryption.salt);
    await expect(b.cipher.open(await a.cipher.seal('x', 'p'), 'p')).rejects.toMatchObject({ reason: 'encryption' });
  });

  it('encodePoint() with a cipher leaves no plain text, scope or metadata in the payload', async () => {
    const { cipher } = await PayloadCipher.create({ passphrase: 'correct horse battery' }, FAST);
    const point = await encodePoint(record, 7, cipher);
    const wire = unsealedWire([point.payload]);
    for (const secret of ['Lisbon', 'ana', 'home', 'long_term', record.rid]) expect(wire).not.toContain(secret);
    expect(wire).toContain('"sealed":"<ciphertext>"');
    expect(point.payload).toMatchObject({ kind: 'memory', origin: 'device-a', pushSeq: 7, version: 3, deleted: false });
    expect(point.vector).toEqual(record.vector); // vectors stay plain unless encryptVectors
    expect(await decodePoint(point, cipher)).toEqual(record);
  });

  it('encodePoint() with encryptVectors sends no vector at all', async () => {
    const { cipher } = await PayloadCipher.create({ passphrase: 'correct horse battery', encryptVectors: true }, FAST);
    const point = await encodePoint(record, 1, cipher);
    expect(point.vector).toBeUndefined();
    expect(await decodePoint(point, cipher)).toEqual(record);
  });

  it('decodePoint() refuses a sealed point without a cipher and a plain point with one', async () => {
    const { cipher } = await PayloadCipher.create({ passphrase: 'correct horse battery' }, FAST);
    await expect(decodePoint(await encodePoint(record, 1, cipher), undefined)).rejects.toMatchObject({ reason: 'wrong-passphrase' });
    await expect(decodePoint(await encodePoint(record, 1, undefined), cipher)).rejects.toThrow(SyncError);
  });

  it('a tombstone carries no text, in plain or sealed form', async () => {
    const tombstone: SyncRecord = { kind: 'memory', rid: record.rid, updatedAt: record.updatedAt + 5, origin: 'device-b', version: 4, deleted: true };
    const plain = await encodePoint(tombstone, 2, undefined);
    expect(Object.keys(plain.payload).sort()).toEqual(['deleted', 'kind', 'origin', 'pushSeq', 'rid', 'stamp', 'updatedAt', 'version']);
    expect(plain.vector).toBeUndefined();
    expect(await decodePoint(plain, undefined)).toEqual(tombstone);
  });

  it('pointIdOf() maps engram ids to their UUID and other ids to a stable name-based UUID', async () => {
    expect(await pointIdOf('memory', record.rid)).toMatch(/^[0-9a-f-]{36}$/);
    const block = await pointIdOf('block', 'helper/human');
    expect(block).toBe(await pointIdOf('block', 'helper/human'));
    expect(block).not.toBe(await pointIdOf('message', 'helper/human'));
    expect(block[14]).toBe('8');
  });

  it('parseEncryption() validates at the door', () => {
    expect(parseEncryption(undefined, 'encryption')).toBeUndefined();
    expect(parseEncryption({ passphrase: 'long enough', encryptVectors: true }, 'encryption')).toEqual({ passphrase: 'long enough', encryptVectors: true });
    expect(() => parseEncryption({ passphrase: 'short' }, 'encryption')).toThrow(ValidationError);
    expect(() => parseEncryption({ passphrase: 'long enough', extra: 1 }, 'encryption')).toThrow(/unknown option extra/);
    expect(() => parseEncryption('pw', 'encryption')).toThrow(ValidationError);
  });
});
