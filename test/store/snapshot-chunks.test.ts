// Snapshot bytes in meta, chunked when large (Chromium's IndexedDB hangs on one value of ~128 MB).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../lib/engine/open-store.js';
import type { EngramDb } from '../../lib/store/schema.js';
import { deleteSnapshot, getSnapshot, putSnapshot } from '../../lib/store/snapshot-chunks.js';

let db: EngramDb;
beforeEach(async () => {
  ({ db } = await openStore(`chunks-${Math.random()}`));
});
afterEach(() => {
  db.close();
});

const bytesOf = (n: number, seed: number): Uint8Array =>
  Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);
const chunkRows = async (): Promise<string[]> =>
  (await db.meta.toCollection().primaryKeys()).filter((k) => k.startsWith('snap:') && k !== 'snap:seq').sort();
/** The log position written beside the record (read by log compaction). */
const position = async (): Promise<unknown> => (await db.meta.get('snap:seq'))?.value;

describe('snapshot chunks', () => {
  it('keeps small bytes inline and splits large ones into chunk rows, reading both back whole', async () => {
    await putSnapshot(db, 'snap', { bytes: bytesOf(900, 1), seq: 3 }, 1000);
    expect(await chunkRows()).toEqual([]);
    expect((await db.meta.get('snap'))!.value).toEqual({ bytes: bytesOf(900, 1), seq: 3 });
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { bytes: bytesOf(900, 1), seq: 3 } });

    await putSnapshot(db, 'snap', { bytes: bytesOf(4500, 2), seq: 4 }, 1000);
    expect(await chunkRows()).toEqual(['snap:0', 'snap:1', 'snap:2', 'snap:3', 'snap:4']);
    const head = (await db.meta.get('snap'))!.value as Record<string, unknown>;
    expect(head).toEqual({ seq: 4, chunks: 5, byteLength: 4500 });
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { bytes: bytesOf(4500, 2), seq: 4 } });
    expect(await position()).toBe(4);
    // Each chunk row holds only its own bytes (a view would carry the whole buffer).
    expect(((await db.meta.get('snap:4'))!.value as Uint8Array).byteLength).toBe(500);
  });

  it('hands the other fields of a chunked record to the caller before its chunks have arrived', async () => {
    await putSnapshot(db, 'snap', { bytes: bytesOf(4500, 2), seq: 9, scopeColumns: { ids: ['a'] } }, 1000);
    const events: unknown[] = [];
    const get = db.meta.get.bind(db.meta);
    db.meta.get = ((key: string) =>
      get(key).then((row) => {
        if (key.startsWith('snap:')) events.push(`${key} arrived`);
        return row;
      })) as typeof db.meta.get;
    const row = await getSnapshot(db, 'snap', (fields) => events.push(fields));
    expect(events).toEqual([
      { seq: 9, scopeColumns: { ids: ['a'] } },
      'snap:0 arrived',
      'snap:1 arrived',
      'snap:2 arrived',
      'snap:3 arrived',
      'snap:4 arrived',
    ]);
    expect(row).toEqual({ value: { bytes: bytesOf(4500, 2), seq: 9, scopeColumns: { ids: ['a'] } } });
    // An inline record has no read to overlap: the callback is not called.
    await putSnapshot(db, 'inline', { bytes: bytesOf(10, 1), seq: 1 }, 1000);
    const inline: unknown[] = [];
    await getSnapshot(db, 'inline', (fields) => inline.push(fields));
    expect(inline).toEqual([]);
  });

  it('a smaller or inline record replaces a chunked one without leaving chunk rows behind', async () => {
    await putSnapshot(db, 'snap', { bytes: bytesOf(4500, 2), seq: 4 }, 1000);
    await putSnapshot(db, 'snap', { bytes: bytesOf(2100, 3), seq: 5 }, 1000);
    expect(await chunkRows()).toEqual(['snap:0', 'snap:1', 'snap:2']);
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { bytes: bytesOf(2100, 3), seq: 5 } });
    await putSnapshot(db, 'snap', { bytes: bytesOf(10, 4), seq: 6 }, 1000);
    expect(await chunkRows()).toEqual([]);
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { bytes: bytesOf(10, 4), seq: 6 } });
  });

  it('a chunked record with a missing or resized chunk comes back without bytes', async () => {
    await putSnapshot(db, 'snap', { bytes: bytesOf(4500, 2), seq: 4 }, 1000);
    await db.meta.delete('snap:2');
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { seq: 4 } });
    await putSnapshot(db, 'snap', { bytes: bytesOf(4500, 2), seq: 4 }, 1000);
    await db.meta.put({ key: 'snap:1', value: bytesOf(999, 0) });
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { seq: 4 } });
    // A chunk too large for the recorded length, and a length no buffer can have.
    await putSnapshot(db, 'snap', { bytes: bytesOf(4500, 2), seq: 4 }, 1000);
    await db.meta.put({ key: 'snap:4', value: bytesOf(1000, 0) });
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { seq: 4 } });
    await db.meta.put({ key: 'snap', value: { seq: 4, chunks: 5, byteLength: 2 ** 53 - 1 } });
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { seq: 4 } });
    expect(await getSnapshot(db, 'none')).toBeUndefined();
  });

  it('a head claiming more chunks or bytes than its rows hold comes back without bytes, without reading its chunks', async () => {
    await putSnapshot(db, 'snap', { bytes: bytesOf(40_000, 5), seq: 7 }, 1000);
    const reads: string[] = [];
    const get = db.meta.get.bind(db.meta);
    db.meta.get = ((key: string) => {
      reads.push(key);
      return get(key);
    }) as typeof db.meta.get;
    // 400,000 chunks of a 40 KB snapshot: today's reader asks for every one of them.
    await db.meta.put({ key: 'snap', value: { seq: 7, chunks: 400_000, byteLength: 40_000 } });
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { seq: 7 } });
    expect(reads).toEqual(['snap']);
    // As many chunks as bytes, more than the rows beside the record.
    reads.length = 0;
    await db.meta.put({ key: 'snap', value: { seq: 7, chunks: 40_000, byteLength: 40_000 } });
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { seq: 7 } });
    expect(reads).toEqual(['snap']);
    // The right chunk count but a length its chunks cannot make (1.5 GB from 40 chunks of 1000 bytes): nothing is allocated for it.
    reads.length = 0;
    await db.meta.put({ key: 'snap', value: { seq: 7, chunks: 40, byteLength: 1_500_000_000 } });
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { seq: 7 } });
    // Chunks of unequal sizes that add up: not what putSnapshot writes.
    await putSnapshot(db, 'snap', { bytes: bytesOf(4500, 2), seq: 4 }, 1000);
    await db.meta.put({ key: 'snap:1', value: bytesOf(999, 0) });
    await db.meta.put({ key: 'snap:4', value: bytesOf(501, 0) });
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { seq: 4 } });
    db.meta.get = get;
    await putSnapshot(db, 'snap', { bytes: bytesOf(40_000, 5), seq: 8 }, 1000);
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { bytes: bytesOf(40_000, 5), seq: 8 } });
  });

  it('deleteSnapshot removes the record and every chunk, and leaves other keys alone', async () => {
    await db.meta.put({ key: 'snapshot-other', value: 1 });
    await putSnapshot(db, 'snap', { bytes: bytesOf(4500, 2), seq: 4 }, 1000);
    await deleteSnapshot(db, 'snap');
    expect(await chunkRows()).toEqual([]);
    expect(await position()).toBeUndefined();
    expect(await db.meta.get('snap')).toBeUndefined();
    expect((await db.meta.get('snapshot-other'))!.value).toBe(1);
  });

  it('writes inside the caller’s transaction: when it fails, the earlier record stands whole', async () => {
    await putSnapshot(db, 'snap', { bytes: bytesOf(4500, 2), seq: 4 }, 1000);
    await expect(
      db.transaction('rw', db.meta, async () => {
        await putSnapshot(db, 'snap', { bytes: bytesOf(2100, 3), seq: 5 }, 1000);
        throw new RangeError('later step failed');
      }),
    ).rejects.toThrow('later step failed');
    expect(await getSnapshot(db, 'snap')).toEqual({ value: { bytes: bytesOf(4500, 2), seq: 4 } });
    expect(await position()).toBe(4);
    expect(await chunkRows()).toEqual(['snap:0', 'snap:1', 'snap:2', 'snap:3', 'snap:4']);
  });
});

describe('snapshot chunks in an encrypted store', () => {
  const PASS = { passphrase: 'correct horse battery', kdfIterations: 1000 };
  let sealed: EngramDb;
  let damaged: string[];
  beforeEach(async () => {
    ({ db: sealed } = await openStore(`sealed-chunks-${Math.random()}`, PASS));
    damaged = [];
    sealed.sealing!.onDamaged = (row) => damaged.push(`${row.key}: ${row.reason}`);
  });
  afterEach(() => {
    sealed.close();
  });
  /** The raw stored chunk rows (pre-sealed bytes), read below the sealing. */
  const rawChunk = (i: number): Promise<Uint8Array> =>
    sealed.meta.get(`snap:${i}`).then((row) => row!.value as Uint8Array);
  const putRaw = async (i: number, bytes: Uint8Array): Promise<void> => {
    const { PreSealedBytes } = await import('../../lib/store/row-sealing.js');
    await sealed.meta.put({ key: `snap:${i}`, value: new PreSealedBytes(bytes) });
  };

  it('seals the record in pieces, one per chunk row, and reads them back whole', async () => {
    await putSnapshot(sealed, 'snap', { bytes: bytesOf(4500, 2), seq: 4, scopes: ['a'] }, 1000);
    const chunks = ((await sealed.meta.get('snap'))!.value as { chunks: number }).chunks;
    expect(chunks).toBeGreaterThan(4);
    expect(await getSnapshot(sealed, 'snap')).toEqual({ value: { bytes: bytesOf(4500, 2), seq: 4, scopes: ['a'] } });
    expect(damaged).toEqual([]);
  });

  it('reads a record sealed whole (before pieces): the head without a piece count', async () => {
    const { encodeValue } = await import('../../lib/store/value-codec.js');
    const record = { bytes: bytesOf(4500, 2), seq: 4 };
    const whole = await sealed.sealing!.sealBulk(encodeValue(record) as Uint8Array<ArrayBuffer>, 'snap\u0000t1');
    await sealed.meta.put({ key: 'snap', value: { bulkTag: 't1', seq: 4, chunks: 2, byteLength: whole.length } });
    const half = Math.ceil(whole.length / 2);
    await putRaw(0, whole.slice(0, half));
    await putRaw(1, whole.slice(half));
    expect(await getSnapshot(sealed, 'snap')).toEqual({ value: record });
    expect(damaged).toEqual([]);
  });

  it('hands the fields of a sealed record to the caller once they open, and reads a record without bytes', async () => {
    const record = { bytes: bytesOf(4500, 2), seq: 9, scopeColumns: { ids: ['a'], codes: new Int32Array([1, 2]) } };
    await putSnapshot(sealed, 'snap', record, 1000);
    const fields: unknown[] = [];
    expect(await getSnapshot(sealed, 'snap', (f) => fields.push(f))).toEqual({ value: record });
    expect(fields).toEqual([{ seq: 9, scopeColumns: record.scopeColumns }]);
    // A record without bytes (the keyword snapshot's) comes back without them.
    const { prepareSnapshot, writeSnapshot } = await import('../../lib/store/snapshot-chunks.js');
    const postings = { seq: 3, memories: { terms: ['x', 'y'], docs: new Uint32Array([7, 8, 9]) } };
    await writeSnapshot(sealed, await prepareSnapshot(sealed, 'words', postings, 16));
    expect(await getSnapshot(sealed, 'words')).toEqual({ value: postings });
    expect(damaged).toEqual([]);
  });

  it('reads a record sealed whole and cut into pieces (before its fields were sealed apart)', async () => {
    const { encodeValue } = await import('../../lib/store/value-codec.js');
    const record = { bytes: bytesOf(2500, 4), seq: 6, scopes: ['b'] };
    const encoded = encodeValue(record);
    const count = Math.ceil(encoded.length / 1000);
    for (let i = 0; i < count; i++) {
      const piece = encoded.slice(i * 1000, (i + 1) * 1000);
      await putRaw(i, await sealed.sealing!.sealBulk(piece, `snap\u0000t2\u0000${i}/${count}`));
    }
    await sealed.meta.put({
      key: 'snap',
      value: { bulkTag: 't2', bulkPieces: count, seq: 6, chunks: count, byteLength: count * 1000 },
    });
    expect(await getSnapshot(sealed, 'snap')).toEqual({ value: record });
    expect(damaged).toEqual([]);
  });

  it('a flipped bit in the piece of the fields, or the head’s layout changed, is refused and reported', async () => {
    for (const harm of ['fields', 'layout'] as const) {
      damaged = [];
      await putSnapshot(sealed, 'snap', { bytes: bytesOf(4500, 2), seq: 4, scopes: ['a'] }, 1000);
      if (harm === 'fields') {
        const bytes = (await rawChunk(0)).slice();
        bytes[20]! ^= 1;
        await putRaw(0, bytes);
      } else {
        // A head that moves the split between fields and bytes (a sealed row, so written through the sealing).
        const head = (await sealed.meta.get('snap'))!.value as Record<string, number>;
        await sealed.meta.put({ key: 'snap', value: { ...head, bulkFields: 2 } });
      }
      const fields: unknown[] = [];
      expect((await getSnapshot(sealed, 'snap', (f) => fields.push(f)))?.value, harm).toEqual({});
      expect(damaged, harm).toEqual([expect.stringMatching(/^snap: the snapshot does not open/)]);
      if (harm === 'fields') expect(fields).toEqual([]);
    }
  });

  it('a flipped bit in a piece, two pieces swapped, or the last piece missing is refused and reported', async () => {
    for (const harm of ['flip', 'swap', 'cut'] as const) {
      damaged = [];
      await putSnapshot(sealed, 'snap', { bytes: bytesOf(4500, 2), seq: 4 }, 1000);
      const chunks = ((await sealed.meta.get('snap'))!.value as { chunks: number }).chunks;
      if (harm === 'flip') {
        const bytes = (await rawChunk(2)).slice();
        bytes[20]! ^= 1;
        await putRaw(2, bytes);
      } else if (harm === 'swap') {
        const [one, two] = [await rawChunk(1), await rawChunk(2)];
        await putRaw(1, two);
        await putRaw(2, one);
      } else await sealed.meta.delete(`snap:${chunks - 1}`);
      expect((await getSnapshot(sealed, 'snap'))?.value, harm).toEqual({});
      expect(damaged, harm).toEqual([expect.stringMatching(/^snap: the snapshot does not open/)]);
    }
  });
});
