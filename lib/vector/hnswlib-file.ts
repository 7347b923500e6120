/**
 * Reads and checks the file that hnswlib's `saveIndex` writes, as compiled to
 * wasm32 (size_t and labeltype are 4 bytes; see native/). HnswIndex runs this
 * over a snapshot before handing it to `readIndex`, because hnswlib trusts the
 * file completely: a bad length or neighbour id would make the WASM code read
 * out of bounds instead of failing cleanly.
 *
 * File layout: a 56-byte header (offsetLevel0, maxElements, count,
 * sizeDataPerElement, labelOffset, offsetData: u32; maxLevel: i32;
 * enterPoint: u32; maxM, maxM0, M: u32; mult: f64; efConstruction: u32), then
 * `count` level-0 records of sizeDataPerElement bytes (link count u16, flags u8,
 * reserved u8, maxM0 neighbour ids u32, the vector, the label u32), then per
 * element a u32 byte length and that many bytes of upper-level links.
 */
import { IndexError } from '../errors.js';

/**
 * What {@link inspectHnswlibFile} learnt from a valid file.
 * @example
 * const { count, deleted } = inspectHnswlibFile(payload, 384);
 */
export interface HnswlibFileInfo {
  /** Elements stored, deleted ones included. */
  count: number;
  m: number;
  efConstruction: number;
  /** Labels of every element, deleted ones included (each once: a repeated label is corrupt). */
  labels: Set<number>;
  /** The largest label, -1 when there is none. */
  maxLabel: number;
  /** Labels marked deleted. */
  deleted: Set<number>;
  /** Where the level-0 block (after the header) ends and the upper-level link lists begin. */
  level0End: number;
}

/** Bytes of the file's header (the fields listed above), before the level-0 block. */
export const HNSWLIB_HEADER_BYTES = 56;
const DELETE_MARK = 0x01;

/**
 * Verifies the structure of an hnswlib index file for `dimensions`-long vectors
 * and returns its labels. Throws {@link IndexError} when anything is inconsistent.
 * @example
 * const info = inspectHnswlibFile(payload, 384);
 */
export function inspectHnswlibFile(bytes: Uint8Array, dimensions: number): HnswlibFileInfo {
  const fail = (why: string): never => {
    throw new IndexError(`hnswlib index data is corrupt: ${why}`);
  };
  if (!Number.isInteger(dimensions) || dimensions < 1) fail(`bad dimensions ${dimensions}`);
  if (bytes.length < HNSWLIB_HEADER_BYTES) fail('shorter than its header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (at: number): number => view.getUint32(at, true);
  const offsetLevel0 = u32(0);
  const maxElements = u32(4);
  const count = u32(8);
  const sizeDataPerElement = u32(12);
  const labelOffset = u32(16);
  const offsetData = u32(20);
  const maxLevel = view.getInt32(24, true);
  const enterPoint = u32(28);
  const maxM = u32(32);
  const maxM0 = u32(36);
  const m = u32(40);
  const mult = view.getFloat64(44, true);
  const efConstruction = u32(52);

  if (m < 2 || m > 4096 || maxM !== m || maxM0 !== 2 * m) fail(`bad M (${m}, ${maxM}, ${maxM0})`);
  const sizeLinksLevel0 = maxM0 * 4 + 4;
  const sizeLinks = maxM * 4 + 4;
  if (offsetLevel0 !== 0 || offsetData !== sizeLinksLevel0) fail('bad level-0 offsets');
  if (labelOffset !== offsetData + dimensions * 4) fail(`element size does not fit ${dimensions} dimensions`);
  if (sizeDataPerElement !== labelOffset + 4) fail('bad element size');
  if (count > maxElements) fail('more elements than capacity');
  if (!Number.isFinite(mult) || mult <= 0) fail('bad level multiplier');
  if (count === 0 ? maxLevel !== -1 : maxLevel < 0 || maxLevel > 64 || enterPoint >= count) fail('bad entry point');
  const level0End = HNSWLIB_HEADER_BYTES + count * sizeDataPerElement;
  if (level0End > bytes.length) fail('truncated level-0 data');

  const labels = new Set<number>();
  const deleted = new Set<number>();
  let maxLabel = -1;
  const checkLinks = (at: number, limit: number): void => {
    const links = view.getUint16(at, true);
    if (links > limit) fail('too many links');
    for (let j = 0; j < links; j++) if (u32(at + 4 + j * 4) >= count) fail('link to a missing element');
  };
  for (let i = 0; i < count; i++) {
    const base = HNSWLIB_HEADER_BYTES + i * sizeDataPerElement;
    checkLinks(base, maxM0);
    const label = u32(base + labelOffset);
    if (labels.has(label)) fail(`duplicate label ${label}`);
    labels.add(label);
    if (label > maxLabel) maxLabel = label;
    if ((view.getUint8(base + 2) & DELETE_MARK) !== 0) deleted.add(label);
  }
  let at = level0End;
  for (let i = 0; i < count; i++) {
    if (at + 4 > bytes.length) fail('truncated link lists');
    const size = u32(at);
    at += 4;
    if (size % sizeLinks !== 0 || size / sizeLinks > maxLevel || at + size > bytes.length) fail('bad link list');
    for (let level = 0; level < size / sizeLinks; level++) checkLinks(at + level * sizeLinks, maxM);
    at += size;
  }
  if (at !== bytes.length) fail(`${bytes.length - at} unexpected trailing bytes`);
  return { count, m, efConstruction, labels, maxLabel, deleted, level0End };
}
