/**
 * The envelope every VectorIndex snapshot is wrapped in: a fixed header
 * (magic, format version, kind, dimensions, lengths, checksum), kind-specific
 * numeric parameters, the id table, then the payload (the vectors for
 * ExactIndex, hnswlib's own index file for HnswIndex).
 *
 * Layout (little-endian; every section starts 4-byte aligned):
 *
 * | offset | size | field |
 * |---|---|---|
 * | 0  | 8 | magic `ENGRAMVX` |
 * | 8  | 2 | format version (1) |
 * | 10 | 1 | kind: 1 exact, 2 hnsw |
 * | 11 | 1 | reserved, 0 |
 * | 12 | 4 | dimensions |
 * | 16 | 4 | P: number of u32 params |
 * | 20 | 4 | T: byte length of the id table (padded to 4) |
 * | 24 | 4 | L: byte length of the payload (unpadded) |
 * | 28 | 4 | checksum (FNV-1a over the 32-bit words from offset 32 to the end) |
 * | 32 | 4P | params |
 * |    | T | id table: count u32, then per entry label u32, flags u32 (reserved, 0), utf8 length u32, utf8 bytes, padding to 4 |
 * |    | L (+pad) | payload |
 *
 * Decoding checks every length and the checksum before handing anything out,
 * so truncated or corrupted bytes fail with IndexError, never later.
 */
import { IndexError } from '../errors.js';

const MAGIC = 'ENGRAMVX';
const HEADER_BYTES = 32;
/**
 * Current envelope version. Bump when the layout changes; decoders reject other versions.
 * @example
 * if (SNAPSHOT_FORMAT_VERSION !== 1) migrate();
 */
export const SNAPSHOT_FORMAT_VERSION = 1;

/**
 * Which index wrote the snapshot.
 * @example
 * const kind: SnapshotKind = snapshotKind(bytes);
 */
export type SnapshotKind = 'exact' | 'hnsw';
const KIND_CODES: Record<SnapshotKind, number> = { exact: 1, hnsw: 2 };

/**
 * One id table row: the index's internal label for `id`, and bit flags (reserved, 0 for now).
 * @example
 * const row: SnapshotIdEntry = { id: 'm1', label: 0, flags: 0 };
 */
export interface SnapshotIdEntry {
  id: string;
  label: number;
  flags: number;
}

/**
 * The decoded parts of a snapshot.
 * @example
 * const { kind, dimensions, ids, payload } = decodeSnapshot(bytes, 'exact');
 */
export interface SnapshotParts {
  kind: SnapshotKind;
  dimensions: number;
  params: readonly number[];
  ids: readonly SnapshotIdEntry[];
  payload: Uint8Array;
}

const pad4 = (n: number): number => (n + 3) & ~3;

/**
 * Serialises snapshot parts into one byte array.
 * @example
 * const bytes = encodeSnapshot({ kind: 'exact', dimensions: 3, params: [], ids: [{ id: 'a', label: 0, flags: 0 }], payload });
 */
export function encodeSnapshot(parts: SnapshotParts): Uint8Array {
  const encoder = new TextEncoder();
  const encodedIds = parts.ids.map((entry) => encoder.encode(entry.id));
  const idBytes = idTableBytes(encodedIds);
  const paramsBytes = parts.params.length * 4;
  const total = HEADER_BYTES + paramsBytes + idBytes + pad4(parts.payload.length);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  const target: Target = { out, view };
  writeHeader(target, parts, idBytes);
  let at = HEADER_BYTES;
  for (const value of parts.params) {
    view.setUint32(at, value, true);
    at += 4;
  }
  at = writeIdTable(target, at, parts.ids, encodedIds);
  out.set(parts.payload, at);
  view.setUint32(28, checksum32(out, HEADER_BYTES), true);
  return out;
}

/** The bytes a snapshot is encoded into, and a view of them for the words. */
interface Target {
  out: Uint8Array;
  view: DataView;
}

/** The id table's byte length: its count, then each entry (label, flags, length, the id padded to 4 bytes). */
function idTableBytes(encodedIds: readonly Uint8Array[]): number {
  let idBytes = 4;
  for (const bytes of encodedIds) idBytes += 12 + pad4(bytes.length);
  return idBytes;
}

/** Writes the fixed header (see the layout above) but its checksum, written last. */
function writeHeader({ out, view }: Target, parts: SnapshotParts, idBytes: number): void {
  for (let i = 0; i < MAGIC.length; i++) out[i] = MAGIC.charCodeAt(i);
  view.setUint16(8, SNAPSHOT_FORMAT_VERSION, true);
  view.setUint8(10, KIND_CODES[parts.kind]);
  view.setUint32(12, parts.dimensions, true);
  view.setUint32(16, parts.params.length, true);
  view.setUint32(20, idBytes, true);
  view.setUint32(24, parts.payload.length, true);
}

/** Writes the id table at `at` (`encodedIds`: each entry's id as UTF-8); returns where it ends. */
function writeIdTable(
  { out, view }: Target,
  at: number,
  ids: readonly SnapshotIdEntry[],
  encodedIds: readonly Uint8Array[],
): number {
  view.setUint32(at, ids.length, true);
  at += 4;
  ids.forEach((entry, i) => {
    const bytes = encodedIds[i]!;
    view.setUint32(at, entry.label, true);
    view.setUint32(at + 4, entry.flags, true);
    view.setUint32(at + 8, bytes.length, true);
    out.set(bytes, at + 12);
    at += 12 + pad4(bytes.length);
  });
  return at;
}

/** Options of {@link decodeSnapshot}. */
export interface DecodeOptions {
  /**
   * Verify the checksum over the whole snapshot (its cost: bench/results/REPORT.md, "Measurements cited by the code"). A
   * caller that skips it must call {@link snapshotChecksumHolds} later and
   * drop what it decoded when that fails; the structure is checked either way.
   * @default true
   */
  checksum?: boolean;
}

/**
 * Parses and verifies a snapshot. Throws {@link IndexError} on anything
 * malformed: wrong magic, version or kind, inconsistent lengths, bad checksum.
 * The returned payload is a view into `bytes` (no copy).
 * @example
 * const parts = decodeSnapshot(bytes, 'hnsw');
 */
export function decodeSnapshot(
  input: Uint8Array,
  expectedKind: SnapshotKind,
  options: DecodeOptions = {},
): SnapshotParts {
  if (!(input instanceof Uint8Array)) throw new IndexError('snapshot must be a Uint8Array');
  if (input.length < HEADER_BYTES) throw new IndexError(`snapshot is truncated: ${input.length} bytes`);
  // Word access needs 4-byte alignment; copy once if the caller's view is unaligned.
  const bytes = input.byteOffset % 4 === 0 ? input : input.slice();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = readHeader(bytes, view, expectedKind);
  if (options.checksum !== false && !snapshotChecksumHolds(bytes))
    throw new IndexError('snapshot checksum mismatch: the bytes are corrupt');
  const params: number[] = [];
  for (let i = 0; i < header.paramCount; i++) params.push(view.getUint32(HEADER_BYTES + i * 4, true));
  const idsStart = HEADER_BYTES + header.paramCount * 4;
  const idsEnd = idsStart + header.idBytes;
  const ids = readIdTable(bytes, view, idsStart, idsEnd);
  const payload = bytes.subarray(idsEnd, idsEnd + header.payloadLength);
  return { kind: header.kind, dimensions: header.dimensions, params, ids, payload };
}

/** The fixed header of a snapshot, checked (see the layout above). */
interface SnapshotHeader {
  kind: SnapshotKind;
  dimensions: number;
  paramCount: number;
  /** The id table's byte length: a multiple of 4, and at least its count. */
  idBytes: number;
  payloadLength: number;
}

/**
 * Reads and checks the header of `bytes` (at least HEADER_BYTES long): magic, version, a kind that
 * is `expectedKind`, and lengths that add up to exactly the bytes given. Throws IndexError otherwise.
 */
function readHeader(bytes: Uint8Array, view: DataView, expectedKind: SnapshotKind): SnapshotHeader {
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC.charCodeAt(i)) throw new IndexError('not an engram vector index snapshot (bad magic)');
  }
  const version = view.getUint16(8, true);
  if (version !== SNAPSHOT_FORMAT_VERSION) throw new IndexError(`unsupported snapshot format version ${version}`);
  const kindCode = view.getUint8(10);
  const kind = (Object.keys(KIND_CODES) as SnapshotKind[]).find((k) => KIND_CODES[k] === kindCode);
  if (kind === undefined) throw new IndexError(`unknown snapshot kind ${kindCode}`);
  if (kind !== expectedKind) throw new IndexError(`snapshot holds a ${kind} index, expected ${expectedKind}`);
  const dimensions = view.getUint32(12, true);
  const paramCount = view.getUint32(16, true);
  const idBytes = view.getUint32(20, true);
  const payloadLength = view.getUint32(24, true);
  const expectedTotal = HEADER_BYTES + paramCount * 4 + idBytes + pad4(payloadLength);
  if (idBytes % 4 !== 0 || idBytes < 4 || expectedTotal !== bytes.length) {
    throw new IndexError(`snapshot is truncated or corrupt: expected ${expectedTotal} bytes, got ${bytes.length}`);
  }
  return { kind, dimensions, paramCount, idBytes, payloadLength };
}

/**
 * The id table from `start` to `end`: its count, then its entries, each inside the table and its
 * id valid UTF-8, the last ending exactly at `end`. Throws IndexError otherwise.
 */
function readIdTable(bytes: Uint8Array, view: DataView, start: number, end: number): SnapshotIdEntry[] {
  const count = view.getUint32(start, true);
  let at = start + 4;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const ids: SnapshotIdEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 12 > end) throw new IndexError('snapshot id table is truncated');
    const label = view.getUint32(at, true);
    const flags = view.getUint32(at + 4, true);
    const length = view.getUint32(at + 8, true);
    if (at + 12 + length > end) throw new IndexError('snapshot id table is truncated');
    let id: string;
    try {
      id = decoder.decode(bytes.subarray(at + 12, at + 12 + length));
    } catch (cause) {
      throw new IndexError('snapshot id table holds invalid UTF-8', { cause });
    }
    ids.push({ id, label, flags });
    at += 12 + pad4(length);
  }
  if (at !== end) throw new IndexError('snapshot id table length does not match its entries');
  return ids;
}

/**
 * Whether a snapshot's stored checksum matches its bytes (false for anything
 * too short to hold one).
 * @example
 * if (!snapshotChecksumHolds(bytes)) rebuild();
 */
export function snapshotChecksumHolds(bytes: Uint8Array): boolean {
  if (!(bytes instanceof Uint8Array) || bytes.length < HEADER_BYTES) return false;
  return (
    new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(28, true) ===
    checksum32(bytes, HEADER_BYTES)
  );
}

/**
 * Which index kind wrote `bytes`, from the header alone (no checksum pass).
 * Throws {@link IndexError} when the bytes are not a snapshot.
 * @example
 * const index = snapshotKind(bytes) === 'hnsw' ? await HnswIndex.restore(bytes) : ExactIndex.restore(bytes);
 */
export function snapshotKind(bytes: Uint8Array): SnapshotKind {
  if (!(bytes instanceof Uint8Array) || bytes.length < HEADER_BYTES)
    throw new IndexError('not an engram vector index snapshot (too short)');
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC.charCodeAt(i)) throw new IndexError('not an engram vector index snapshot (bad magic)');
  }
  const code = bytes[10];
  const kind = (Object.keys(KIND_CODES) as SnapshotKind[]).find((k) => KIND_CODES[k] === code);
  if (kind === undefined) throw new IndexError(`unknown snapshot kind ${String(code)}`);
  return kind;
}

/**
 * FNV-1a over 32-bit little-endian words of `bytes` from `start` (both lengths
 * multiples of 4). Cheap enough for hundreds of megabytes; detects corruption,
 * not tampering.
 * @example
 * const sum = checksum32(bytes, 32);
 */
export function checksum32(bytes: Uint8Array, start: number): number {
  let hash = 0x811c9dc5;
  const words = (bytes.length - start) >>> 2;
  if ((bytes.byteOffset + start) % 4 === 0 && LITTLE_ENDIAN) {
    const view = new Uint32Array(bytes.buffer, bytes.byteOffset + start, words);
    for (let i = 0; i < words; i++) hash = Math.imul(hash ^ view[i]!, 0x01000193);
  } else {
    const view = new DataView(bytes.buffer, bytes.byteOffset + start, words * 4);
    for (let i = 0; i < words; i++) hash = Math.imul(hash ^ view.getUint32(i * 4, true), 0x01000193);
  }
  return hash >>> 0;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
