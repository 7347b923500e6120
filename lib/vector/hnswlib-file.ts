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

/** The header's fields (see the file comment). */
interface HnswlibHeader {
  offsetLevel0: number;
  maxElements: number;
  count: number;
  sizeDataPerElement: number;
  labelOffset: number;
  offsetData: number;
  maxLevel: number;
  enterPoint: number;
  maxM: number;
  maxM0: number;
  m: number;
  mult: number;
  efConstruction: number;
}

/** What the level-0 records hold of the elements: their labels, the largest, and the deleted ones. */
type Level0Labels = Pick<HnswlibFileInfo, 'labels' | 'maxLabel' | 'deleted'>;

function corrupt(why: string): never {
  throw new IndexError(`hnswlib index data is corrupt: ${why}`);
}

/**
 * Verifies the structure of an hnswlib index file for `dimensions`-long vectors
 * and returns its labels. Throws {@link IndexError} when anything is inconsistent.
 * @example
 * const info = inspectHnswlibFile(payload, 384);
 */
export function inspectHnswlibFile(bytes: Uint8Array, dimensions: number): HnswlibFileInfo {
  if (!Number.isInteger(dimensions) || dimensions < 1) corrupt(`bad dimensions ${dimensions}`);
  if (bytes.length < HNSWLIB_HEADER_BYTES) corrupt('shorter than its header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = readHeader(view);
  const level0End = checkHeader(header, dimensions, bytes.length);
  const { labels, maxLabel, deleted } = readLevel0(view, header);
  checkUpperLevels(view, header, level0End);
  const { count, m, efConstruction } = header;
  return { count, m, efConstruction, labels, maxLabel, deleted, level0End };
}

function readHeader(view: DataView): HnswlibHeader {
  const u32 = (at: number): number => view.getUint32(at, true);
  return {
    offsetLevel0: u32(0),
    maxElements: u32(4),
    count: u32(8),
    sizeDataPerElement: u32(12),
    labelOffset: u32(16),
    offsetData: u32(20),
    maxLevel: view.getInt32(24, true),
    enterPoint: u32(28),
    maxM: u32(32),
    maxM0: u32(36),
    m: u32(40),
    mult: view.getFloat64(44, true),
    efConstruction: u32(52),
  };
}

/** Checks the header against itself, `dimensions` and the file's length; returns where the level-0 block ends. */
function checkHeader(h: HnswlibHeader, dimensions: number, length: number): number {
  const { m, maxM, maxM0, count } = h;
  if (m < 2 || m > 4096 || maxM !== m || maxM0 !== 2 * m) corrupt(`bad M (${m}, ${maxM}, ${maxM0})`);
  const sizeLinksLevel0 = maxM0 * 4 + 4;
  if (h.offsetLevel0 !== 0 || h.offsetData !== sizeLinksLevel0) corrupt('bad level-0 offsets');
  if (h.labelOffset !== h.offsetData + dimensions * 4) corrupt(`element size does not fit ${dimensions} dimensions`);
  if (h.sizeDataPerElement !== h.labelOffset + 4) corrupt('bad element size');
  if (count > h.maxElements) corrupt('more elements than capacity');
  if (!Number.isFinite(h.mult) || h.mult <= 0) corrupt('bad level multiplier');
  if (count === 0 ? h.maxLevel !== -1 : h.maxLevel < 0 || h.maxLevel > 64 || h.enterPoint >= count)
    corrupt('bad entry point');
  const level0End = HNSWLIB_HEADER_BYTES + count * h.sizeDataPerElement;
  if (level0End > length) corrupt('truncated level-0 data');
  return level0End;
}

/** Checks each element's level-0 links and reads its label and delete mark; a repeated label is corrupt. */
function readLevel0(view: DataView, h: HnswlibHeader): Level0Labels {
  const labels = new Set<number>();
  const deleted = new Set<number>();
  let maxLabel = -1;
  for (let i = 0; i < h.count; i++) {
    const base = HNSWLIB_HEADER_BYTES + i * h.sizeDataPerElement;
    checkLinks(view, base, h.maxM0, h.count);
    const label = view.getUint32(base + h.labelOffset, true);
    if (labels.has(label)) corrupt(`duplicate label ${label}`);
    labels.add(label);
    if (label > maxLabel) maxLabel = label;
    if ((view.getUint8(base + 2) & DELETE_MARK) !== 0) deleted.add(label);
  }
  return { labels, maxLabel, deleted };
}

/** Checks each element's upper-level link lists, from `level0End` to exactly the end of the file. */
function checkUpperLevels(view: DataView, h: HnswlibHeader, level0End: number): void {
  const sizeLinks = h.maxM * 4 + 4;
  const length = view.byteLength;
  let at = level0End;
  for (let i = 0; i < h.count; i++) {
    if (at + 4 > length) corrupt('truncated link lists');
    const size = view.getUint32(at, true);
    at += 4;
    if (size % sizeLinks !== 0 || size / sizeLinks > h.maxLevel || at + size > length) corrupt('bad link list');
    for (let level = 0; level < size / sizeLinks; level++) checkLinks(view, at + level * sizeLinks, h.maxM, h.count);
    at += size;
  }
  if (at !== length) corrupt(`${length - at} unexpected trailing bytes`);
}

/** Checks one link list at `at`: at most `limit` links, each to one of the `count` elements. */
function checkLinks(view: DataView, at: number, limit: number, count: number): void {
  const links = view.getUint16(at, true);
  if (links > limit) corrupt('too many links');
  for (let j = 0; j < links; j++)
    if (view.getUint32(at + 4 + j * 4, true) >= count) corrupt('link to a missing element');
}
