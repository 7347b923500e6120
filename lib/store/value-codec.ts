/**
 * Rows as bytes, for sealing at rest (row-sealing.ts): what IndexedDB would
 * store by structured clone, limited to what engram's rows hold: JSON values,
 * `undefined` fields (dropped, as rows keep optional fields absent), non-finite
 * numbers, and typed arrays (vectors, snapshot bytes, postings columns). The
 * skeleton is JSON (the engine's native parser is the fastest there is); each
 * typed array is a placeholder in it and its bytes follow, 8-byte aligned, so a
 * large one is read back as a view of the opened bytes without a copy.
 * Anything else (a Map, a Date, a class) is refused when written, never stored
 * in a form that would read back differently.
 */
import { StoreError } from '../errors.js';

/** Typed array kinds, by their code in the encoding. */
const ARRAY_KINDS = [
  Uint8Array,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
  Uint8ClampedArray,
] as const;
type ArrayKind = (typeof ARRAY_KINDS)[number];
export type AnyTypedArray = InstanceType<ArrayKind>;

/**
 * Placeholders are objects with one key starting with NUL, which no engram row
 * writes but user metadata could: such an object is escaped as its entries.
 */
const MARK = '\u0000';
const BYTES = '\u0000b';
const NUMBER = '\u0000n';
const ENTRIES = '\u0000o';
/** {@link MARK} as JSON.stringify writes it in a string or key (it escapes every control character). */
const ESCAPED_MARK = JSON.stringify(MARK).slice(1, -1);

const ALIGN = 8;
const HEADER = 8; // u32 skeleton length, u32 typed-array count
/** One of each for every call (neither keeps state between whole decodes or encodes). */
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

function kindOf(value: AnyTypedArray): number {
  for (let i = 0; i < ARRAY_KINDS.length; i++) if (value.constructor === ARRAY_KINDS[i]) return i;
  return -1;
}

function unsupported(what: string): StoreError {
  return new StoreError(`a row holds ${what}, which an encrypted store cannot keep`);
}

/** The value with typed arrays replaced by placeholders (pushed to `arrays`), ready for JSON. */
function skeleton(value: unknown, arrays: AnyTypedArray[]): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Object.is(value, -0)) return { [NUMBER]: '-0' }; // String(-0) is '0'
      return Number.isFinite(value) ? value : { [NUMBER]: String(value) };
    case 'undefined':
      return undefined;
    case 'object':
      if (value === null) return null;
      if (Array.isArray(value)) return value.map((v) => skeleton(v, arrays) ?? null);
      if (ArrayBuffer.isView(value)) return arrayPlaceholder(value as AnyTypedArray, arrays);
      return recordSkeleton(value, arrays);
    default:
      throw unsupported(`a ${typeof value}`);
  }
}

/** The placeholder of a typed array, pushed to `arrays` (its bytes follow the skeleton). */
function arrayPlaceholder(typed: AnyTypedArray, arrays: AnyTypedArray[]): unknown {
  if (kindOf(typed) < 0) throw unsupported(typed.constructor.name);
  arrays.push(typed);
  return { [BYTES]: arrays.length - 1 };
}

/** A plain object's skeleton, field by field; one with a key starting with NUL is escaped as its entries. */
function recordSkeleton(value: object, arrays: AnyTypedArray[]): unknown {
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null)
    throw unsupported(`a ${(value as { constructor?: { name?: string } }).constructor?.name ?? 'class'}`);
  const out: Record<string, unknown> = {};
  let marked = false;
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith(MARK)) marked = true;
    const s = skeleton(v, arrays);
    if (s !== undefined) out[k] = s;
  }
  return marked ? { [ENTRIES]: Object.entries(out) } : out;
}

/**
 * Whether JSON.stringify writes `value` exactly as {@link skeleton} would: nothing in it needs a
 * placeholder (a typed array, a non-finite number, -0, a key starting with NUL) or is refused (a
 * class, a function). Most rows (a memory, a message, a terms row) are such: their JSON is written
 * without the skeleton's copy. Walks without allocating.
 */
function jsonAsIs(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!jsonAsIs(value[i])) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      const record = value as Record<string, unknown>;
      for (const k of Object.keys(record)) if (k.startsWith(MARK) || !jsonAsIs(record[k])) return false;
      return true;
    }
    default:
      return false;
  }
}

/** A row ready to be written as bytes ({@link writeValue}): its JSON (typed arrays as placeholders) and the arrays. */
export interface RowParts {
  json: string;
  arrays: AnyTypedArray[];
}

/** The parts of a row's bytes; a value an encrypted store cannot keep is a StoreError. */
export function rowParts(value: unknown): RowParts {
  const arrays: AnyTypedArray[] = [];
  // JSON.stringify(undefined) is undefined (its type says string): a row of nothing is written as null.
  const json = (JSON.stringify(jsonAsIs(value) ? value : skeleton(value, arrays)) as string | undefined) ?? 'null';
  return { json, arrays };
}

/** The most bytes {@link writeValue} writes for `parts` (UTF-8 takes at most 3 bytes per UTF-16 code unit). */
export function maxValueBytes({ json, arrays }: RowParts): number {
  let size = HEADER + 3 * json.length;
  for (const a of arrays) size += ALIGN + 8 + a.byteLength;
  return size;
}

/**
 * Writes the bytes of `parts` at the start of `target` (at least {@link maxValueBytes} long) and
 * returns how many it wrote: the sealing writes a row straight into the cipher's memory.
 */
export function writeValue({ json, arrays }: RowParts, target: Uint8Array): number {
  const { written } = ENCODER.encodeInto(json, target.subarray(HEADER));
  const view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  view.setUint32(0, written, true);
  view.setUint32(4, arrays.length, true);
  let size = HEADER + written;
  for (const a of arrays) {
    const at = Math.ceil((size + 8) / ALIGN) * ALIGN; // kind (u32) + length (u32), then the aligned bytes
    target.fill(0, size, at - 8);
    view.setUint32(at - 8, kindOf(a), true);
    view.setUint32(at - 4, a.byteLength, true);
    target.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    size = at + a.byteLength;
  }
  return size;
}

/**
 * The bytes of a row.
 * @example
 * decodeValue(encodeValue({ id: 'a', vector: new Float32Array([1, 2]) })) // equal again
 */
export function encodeValue(value: unknown): Uint8Array {
  const parts = rowParts(value);
  const out = new Uint8Array(maxValueBytes(parts));
  return out.slice(0, writeValue(parts, out));
}

function damaged(detail: string): StoreError {
  return new StoreError(`a sealed row does not decode: ${detail}`);
}

function revive(value: unknown, arrays: readonly AnyTypedArray[]): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = revive(value[i], arrays);
    return value;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && keys[0]!.startsWith(MARK)) {
    const inner = record[keys[0]!];
    if (keys[0] === BYTES && typeof inner === 'number' && arrays[inner] !== undefined) return arrays[inner];
    if (keys[0] === NUMBER && typeof inner === 'string') return Number(inner);
    if (keys[0] === ENTRIES && Array.isArray(inner)) {
      const out: Record<string, unknown> = {};
      for (const entry of inner as unknown[]) {
        if (!Array.isArray(entry) || typeof entry[0] !== 'string') throw damaged('bad escaped object');
        out[entry[0]] = revive(entry[1], arrays);
      }
      return out;
    }
    throw damaged('bad placeholder');
  }
  for (const k of keys) record[k] = revive(record[k], arrays);
  return record;
}

/**
 * The row `bytes` were made from ({@link encodeValue}). Typed arrays are views
 * of `bytes` when aligned (the caller hands over bytes it no longer uses).
 * Malformed bytes are a StoreError.
 */
export function decodeValue(bytes: Uint8Array): unknown {
  if (bytes.length < HEADER) throw damaged('too short');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const jsonLength = view.getUint32(0, true);
  const count = view.getUint32(4, true);
  if (HEADER + jsonLength > bytes.length) throw damaged('bad length');
  const arrays = readArrays(bytes, view, HEADER + jsonLength, count);
  const json = DECODER.decode(bytes.subarray(HEADER, HEADER + jsonLength));
  const parsed = parseSkeleton(json);
  // Every placeholder has a key starting with NUL, which JSON writes as the escape below: without
  // one (a memory, a message, most rows), there is nothing to revive and the parsed value is the row.
  return count === 0 && !json.includes(ESCAPED_MARK) ? parsed : revive(parsed, arrays);
}

/** The `count` typed arrays stored after the skeleton (from `at`): views of `bytes` where aligned, copies where not. */
function readArrays(bytes: Uint8Array, view: DataView, at: number, count: number): AnyTypedArray[] {
  const arrays: AnyTypedArray[] = [];
  for (let i = 0; i < count; i++) {
    at = Math.ceil((at + 8) / ALIGN) * ALIGN;
    if (at > bytes.length) throw damaged('bad array header');
    const Kind = ARRAY_KINDS[view.getUint32(at - 8, true)];
    const byteLength = view.getUint32(at - 4, true);
    if (Kind === undefined || at + byteLength > bytes.length || byteLength % Kind.BYTES_PER_ELEMENT !== 0)
      throw damaged('bad array');
    const start = bytes.byteOffset + at;
    arrays.push(
      start % Kind.BYTES_PER_ELEMENT === 0
        ? new Kind(bytes.buffer as ArrayBuffer, start, byteLength / Kind.BYTES_PER_ELEMENT)
        : new Kind(bytes.slice(at, at + byteLength).buffer),
    );
    at += byteLength;
  }
  return arrays;
}

/** The skeleton's JSON parsed; JSON that does not parse is a damaged row. */
function parseSkeleton(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch (e) {
    throw new StoreError('a sealed row does not decode: bad JSON', { cause: e });
  }
}
