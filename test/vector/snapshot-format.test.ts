import { describe, expect, it } from 'vitest';
import { IndexError } from '../../lib/errors.js';
import {
  checksum32,
  decodeSnapshot,
  encodeSnapshot,
  snapshotChecksumHolds,
  snapshotKind,
  type SnapshotParts,
} from '../../lib/vector/snapshot-format.js';

const parts: SnapshotParts = {
  kind: 'hnsw',
  dimensions: 3,
  params: [16, 200, 64, 1024, 7],
  ids: [
    { id: 'a', label: 0, flags: 0 },
    { id: 'mémoire-ü', label: 5, flags: 0 },
  ],
  payload: new Uint8Array([1, 2, 3, 4, 5, 6, 7]),
};

describe('snapshot-format', () => {
  it('encodeSnapshot() and decodeSnapshot() round-trip every part, including non-ASCII ids and an unpadded payload', () => {
    const bytes = encodeSnapshot(parts);
    expect(bytes.length % 4).toBe(0);
    const decoded = decodeSnapshot(bytes, 'hnsw');
    expect(decoded.kind).toBe('hnsw');
    expect(decoded.dimensions).toBe(3);
    expect(decoded.params).toEqual(parts.params);
    expect(decoded.ids).toEqual(parts.ids);
    expect(Array.from(decoded.payload)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(snapshotKind(bytes)).toBe('hnsw');
  });

  it('decodeSnapshot() throws IndexError for a wrong kind, bad magic, bad version, bad checksum or wrong length', () => {
    const bytes = encodeSnapshot(parts);
    expect(() => decodeSnapshot(bytes, 'exact')).toThrow(/expected exact/);
    const magic = bytes.slice();
    magic[0] = 0;
    expect(() => decodeSnapshot(magic, 'hnsw')).toThrow(/bad magic/);
    const version = bytes.slice();
    version[8] = 9;
    expect(() => decodeSnapshot(version, 'hnsw')).toThrow(/version/);
    const flipped = bytes.slice();
    flipped[40]! ^= 1;
    expect(() => decodeSnapshot(flipped, 'hnsw')).toThrow(/checksum/);
    // Deferred: the structure is still checked, and snapshotChecksumHolds() tells the corrupt bytes later.
    expect(decodeSnapshot(flipped, 'hnsw', { checksum: false }).dimensions).toBe(parts.dimensions);
    expect(() => decodeSnapshot(version, 'hnsw', { checksum: false })).toThrow(/version/);
    expect(snapshotChecksumHolds(flipped)).toBe(false);
    expect(snapshotChecksumHolds(bytes)).toBe(true);
    expect(snapshotChecksumHolds(bytes.subarray(0, 10))).toBe(false);
    const longer = new Uint8Array(bytes.length + 4);
    longer.set(bytes);
    expect(() => decodeSnapshot(longer, 'hnsw')).toThrow(IndexError);
    expect(() => decodeSnapshot(bytes.subarray(0, 31), 'hnsw')).toThrow(/truncated/);
  });

  it('snapshotKind() reads the kind from the header and rejects non-snapshots with IndexError', () => {
    expect(snapshotKind(encodeSnapshot({ ...parts, kind: 'exact' }))).toBe('exact');
    expect(() => snapshotKind(new Uint8Array(40))).toThrow(IndexError);
    expect(() => snapshotKind(new Uint8Array(2))).toThrow(IndexError);
  });

  it('checksum32() gives the same sum for aligned and unaligned views of the same bytes', () => {
    const bytes = new Uint8Array(64).map((_, i) => (i * 37) & 255);
    const shifted = new Uint8Array(65);
    shifted.set(bytes, 1);
    expect(checksum32(shifted.subarray(1), 8)).toBe(checksum32(bytes, 8));
    const changed = bytes.slice();
    changed[60]! ^= 0x80;
    expect(checksum32(changed, 8)).not.toBe(checksum32(bytes, 8));
  });
});
