import { describe, expect, it } from 'vitest';
import { SyncError, ValidationError } from '../../lib/errors.js';
import {
  MAX_KDF_ITERATIONS,
  PayloadCipher,
  fromBase64,
  parseEncryption,
  toBase64,
  type KeyCache,
} from '../../lib/sync/encryption.js';
import { readHeaderPayload, headerPayload } from '../../lib/sync/header-codec.js';
import { decodePoint, encodePoint, pointIdOf, type SyncRecord } from '../../lib/sync/point-codec.js';
import type { CollectionHeader, SyncPoint } from '../../lib/sync/sync-target.js';
import { idToUuid } from '../../lib/util/id.js';
import { unsealedWire } from './sync-helpers.js';

// Tests derive keys with few iterations; the default (600k) is for real collections.
const FAST = 1_000;
const BASE: Omit<CollectionHeader, 'encryption'> = { format: 2, embedderId: 'hash-4', dimensions: 4 };

const record: SyncRecord = {
  kind: 'memory',
  rid: '01J9Z3K8Q4W7X2M5N6P8R0S1T2',
  updatedAt: 1_767_225_600_000,
  origin: 'device-a',
  version: 3,
  deleted: false,
  body: { text: 'Ana moved to Lisbon', tier: 'long_term', userId: 'ana', metadata: { topic: 'home' } },
  vector: [0.6, 0.8, 0, 0].map(Math.fround),
};

async function made(encryptVectors = false): Promise<{ cipher: PayloadCipher; header: CollectionHeader }> {
  const { cipher, encryption } = await PayloadCipher.create(
    { passphrase: 'correct horse battery', encryptVectors },
    BASE,
    FAST,
  );
  return { cipher, header: { ...BASE, encryption } };
}

/** The point with one readable payload field changed, as a server without the key could. */
function edited(point: SyncPoint, field: string, value: unknown): SyncPoint {
  return { ...point, payload: { ...point.payload, [field]: value as never } };
}

describe('encryption', () => {
  it('seal() and open() round-trip text bound to its additional data', async () => {
    const { cipher } = await made();
    const sealed = await cipher.seal('hello Lisbon', 'id-1');
    expect(sealed).not.toContain('Lisbon');
    expect(await cipher.open(sealed, 'id-1')).toBe('hello Lisbon');
    // The same ciphertext with other additional data (another point) does not open.
    await expect(cipher.open(sealed, 'id-2')).rejects.toMatchObject({ reason: 'encryption' });
    const bytes = fromBase64(sealed)!;
    bytes[bytes.length - 1]! ^= 1;
    await expect(cipher.open(toBase64(bytes), 'id-1')).rejects.toThrow(SyncError);
  });

  it('open() with the right passphrase reads what create() sealed; a wrong one is a wrong-passphrase SyncError', async () => {
    const { cipher, header } = await made(true);
    expect(header.encryption).toMatchObject({ kdf: 'PBKDF2-SHA256', iterations: FAST, encryptVectors: true });
    expect(fromBase64(header.encryption!.salt)).toHaveLength(16);
    const sealed = await cipher.seal('x', 'p');
    const again = await PayloadCipher.open('correct horse battery', header);
    expect(again.encryptVectors).toBe(true);
    expect(await again.open(sealed, 'p')).toBe('x');
    const wrong = await PayloadCipher.open('incorrect horse battery', header).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(SyncError);
    expect(wrong).toMatchObject({ reason: 'wrong-passphrase', transient: false });
  });

  it('open() refuses a header whose settings were changed after its key check was made (encryptVectors switched off, another embedder)', async () => {
    const { header } = await made(true);
    for (const changed of [
      { ...header, encryption: { ...header.encryption!, encryptVectors: false } },
      { ...header, embedderId: 'other-model' },
      { ...header, dimensions: 8 },
    ]) {
      const e = await PayloadCipher.open('correct horse battery', changed).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(SyncError);
      expect(e).toMatchObject({
        reason: 'incompatible',
        message: expect.stringMatching(/header was changed/) as unknown,
      });
    }
  });

  it('create() and open() share derived keys through a KeyCache, and open() still checks the header each time', async () => {
    const cache: KeyCache = new Map();
    const { cipher, encryption } = await PayloadCipher.create(
      { passphrase: 'correct horse battery' },
      BASE,
      FAST,
      cache,
    );
    expect(cache.size).toBe(1);
    const header = { ...BASE, encryption };
    const again = await PayloadCipher.open('correct horse battery', header, cache);
    expect(cache.size).toBe(1);
    expect(await again.open(await cipher.seal('x', 'p'), 'p')).toBe('x');
    await expect(
      PayloadCipher.open('correct horse battery', { ...header, embedderId: 'other' }, cache),
    ).rejects.toMatchObject({ reason: 'incompatible' });
  });

  it('two collections made with one passphrase get different salts and keys', async () => {
    const a = await made();
    const b = await made();
    expect(a.header.encryption!.salt).not.toBe(b.header.encryption!.salt);
    await expect(b.cipher.open(await a.cipher.seal('x', 'p'), 'p')).rejects.toMatchObject({ reason: 'encryption' });
    expect(await a.cipher.pointId('memory', record.rid)).not.toBe(await b.cipher.pointId('memory', record.rid));
  });

  it('encodePoint() with a cipher leaves no plain text, scope, metadata or record id in the payload or the point id', async () => {
    const { cipher } = await made();
    const point = await encodePoint(record, 7, cipher);
    const wire = unsealedWire([point.payload]);
    for (const secret of ['Lisbon', 'ana', 'home', 'long_term', record.rid]) expect(wire).not.toContain(secret);
    expect(wire).toContain('"sealed":"<ciphertext>"');
    expect(point.payload).toMatchObject({ kind: 'memory', origin: 'device-a', pushSeq: 7, version: 3, deleted: false });
    expect(point.vector).toEqual(record.vector); // a copy in clear for the server's search, unless encryptVectors
    // The point id is a keyed hash, not the UUID form of the id (which carries its creation time).
    expect(point.id).not.toBe(idToUuid(record.rid));
    expect(point.id).toBe(await cipher.pointId('memory', record.rid));
    expect(point.id[14]).toBe('8');
    expect(await decodePoint(point, cipher)).toEqual({ record, position: { origin: 'device-a', pushSeq: 7 } });
  });

  it('decodePoint() refuses a sealed point any readable field of which was changed (deleted, updatedAt, version, origin, kind, pushSeq, id)', async () => {
    const { cipher } = await made();
    const point = await encodePoint(record, 7, cipher);
    const later = record.updatedAt + 60_000;
    const { stampOf } = await import('../../lib/sync/stamp.js');
    const forgeries: SyncPoint[] = [
      edited(point, 'deleted', true),
      { ...point, payload: { ...point.payload, updatedAt: later, stamp: stampOf(later, 'device-a') } },
      edited(point, 'version', 9),
      { ...point, payload: { ...point.payload, origin: 'device-b', stamp: stampOf(record.updatedAt, 'device-b') } },
      edited(point, 'kind', 'message'),
      edited(point, 'pushSeq', 8),
      { ...point, id: await cipher.pointId('memory', '01J9Z3K8Q4W7X2M5N6P8R0S1T3') },
    ];
    for (const forged of forgeries) {
      const decoded = await decodePoint(forged, cipher);
      expect(decoded).toMatchObject({ refused: 'unauthenticated' });
      expect((decoded as { position?: unknown }).position).toBeUndefined();
    }
  });

  it('decodePoint() with encryptVectors reads the sealed vector; without it, the sealed copy, never the one in clear', async () => {
    const sealedOnly = await made(true);
    const point = await encodePoint(record, 1, sealedOnly.cipher);
    expect(point.vector).toBeUndefined();
    expect(await decodePoint(point, sealedOnly.cipher)).toMatchObject({ record });
    const { cipher } = await made();
    const clear = await encodePoint(record, 1, cipher);
    const swapped = await decodePoint({ ...clear, vector: [0, 0, 0.6, 0.8] }, cipher);
    expect(swapped).toMatchObject({ record: { vector: record.vector } });
  });

  it('decodePoint() refuses a sealed point without a cipher and a plain point with one', async () => {
    const { cipher } = await made();
    expect(await decodePoint(await encodePoint(record, 1, cipher), undefined)).toMatchObject({ refused: 'malformed' });
    expect(await decodePoint(await encodePoint(record, 1, undefined), cipher)).toMatchObject({ refused: 'malformed' });
  });

  it("decodePoint() refuses readable fields out of range: a push counter that is not a positive integer, updatedAt past the stamps' exact range", async () => {
    const plain = await encodePoint(record, 3, undefined);
    expect(await decodePoint(edited(plain, 'pushSeq', 'x'), undefined)).toMatchObject({ refused: 'malformed' });
    expect(await decodePoint(edited(plain, 'pushSeq', 1.5), undefined)).toMatchObject({ refused: 'malformed' });
    const far = 2 ** 50;
    expect(
      await decodePoint({ ...plain, payload: { ...plain.payload, updatedAt: far, stamp: far * 1024 } }, undefined),
    ).toMatchObject({ refused: 'malformed' });
    expect(await decodePoint(edited(plain, 'stamp', 1), undefined)).toMatchObject({ refused: 'malformed' });
  });

  it('a tombstone carries no text, in plain or sealed form', async () => {
    const tombstone: SyncRecord = {
      kind: 'memory',
      rid: record.rid,
      updatedAt: record.updatedAt + 5,
      origin: 'device-b',
      version: 4,
      deleted: true,
    };
    const plain = await encodePoint(tombstone, 2, undefined);
    expect(Object.keys(plain.payload).sort()).toEqual([
      'deleted',
      'kind',
      'origin',
      'pushSeq',
      'rid',
      'stamp',
      'updatedAt',
      'version',
    ]);
    expect(plain.vector).toBeUndefined();
    expect(await decodePoint(plain, undefined)).toMatchObject({ record: tombstone });
    const { cipher } = await made();
    const sealed = await encodePoint(tombstone, 2, cipher);
    expect(Object.keys(sealed.payload).sort()).toEqual([
      'deleted',
      'kind',
      'origin',
      'pushSeq',
      'sealed',
      'stamp',
      'updatedAt',
      'version',
    ]);
    expect(await decodePoint(sealed, cipher)).toMatchObject({ record: tombstone });
  });

  it('pointIdOf() maps engram ids to their UUID and other ids to a stable name-based UUID (plain collections)', async () => {
    expect(await pointIdOf('memory', record.rid)).toBe(idToUuid(record.rid));
    const block = await pointIdOf('block', 'helper/human');
    expect(block).toBe(await pointIdOf('block', 'helper/human'));
    expect(block).not.toBe(await pointIdOf('message', 'helper/human'));
    expect(block[14]).toBe('8');
  });

  it('readHeaderPayload() bounds the KDF iterations and checks the salt, with typed errors', async () => {
    const { header } = await made();
    expect(readHeaderPayload(headerPayload(header))).toEqual(header);
    for (const iterations of [0, -5, 1.5, 1e12, MAX_KDF_ITERATIONS + 1, '600000']) {
      const payload = headerPayload({
        ...header,
        encryption: { ...header.encryption!, iterations: iterations as number },
      });
      expect(() => readHeaderPayload(payload)).toThrow(SyncError);
      expect(() => readHeaderPayload(payload)).toThrow(/KDF iterations/);
    }
    for (const salt of ['not base64!', 'AAAA', '']) {
      const e = (() => {
        try {
          return readHeaderPayload(headerPayload({ ...header, encryption: { ...header.encryption!, salt } }));
        } catch (x) {
          return x;
        }
      })();
      expect(e).toBeInstanceOf(SyncError);
      expect(e).toMatchObject({ reason: 'incompatible', message: expect.stringMatching(/salt/) as unknown });
    }
    expect(() => readHeaderPayload({ ...headerPayload(header), format: 2, encryption: null })).toThrow(/format 2/);
  });

  it('parseEncryption() validates at the door', () => {
    expect(parseEncryption(undefined, 'encryption')).toBeUndefined();
    expect(parseEncryption({ passphrase: 'long enough', encryptVectors: true }, 'encryption')).toEqual({
      passphrase: 'long enough',
      encryptVectors: true,
    });
    expect(() => parseEncryption({ passphrase: 'short' }, 'encryption')).toThrow(ValidationError);
    expect(() => parseEncryption({ passphrase: 'long enough', extra: 1 }, 'encryption')).toThrow(
      /unknown option extra/,
    );
    expect(() => parseEncryption('pw', 'encryption')).toThrow(ValidationError);
  });
});
