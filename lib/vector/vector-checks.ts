/**
 * Input checks shared by every VectorIndex: run in JS before anything is
 * touched, so a bad vector never reaches storage or WASM.
 */
import { DimensionMismatchError, ValidationError } from '../errors.js';

/**
 * Throws {@link DimensionMismatchError} when `vector` is not `dimensions` long and
 * {@link ValidationError} when it is not a Float32Array or holds NaN/±Infinity.
 * @example
 * assertVector(new Float32Array(384), 384, 'vector');
 */
export function assertVector(vector: unknown, dimensions: number, field: string): asserts vector is Float32Array {
  if (!(vector instanceof Float32Array)) throw new ValidationError(field, 'must be a Float32Array');
  if (vector.length !== dimensions) throw new DimensionMismatchError(dimensions, vector.length, field);
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i]))
      throw new ValidationError(field, `element ${i} is ${String(vector[i])}; vectors must be finite`);
  }
}

/**
 * Throws {@link ValidationError} unless `id` is a non-empty string.
 * @example
 * assertId('01J9Z…', 'id');
 */
export function assertId(id: unknown, field: string): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) throw new ValidationError(field, 'must be a non-empty string');
}

/**
 * Checks every item of a batch (its id, its vector: see assertId, assertVector) before any goes in.
 * @example
 * assertItems([{ id: 'a', vector: new Float32Array(384) }], 384);
 */
export function assertItems(items: readonly { id: unknown; vector: unknown }[], dimensions: number): void {
  items.forEach((item, i) => {
    assertId(item.id, `items[${i}].id`);
    assertVector(item.vector, dimensions, `items[${i}].vector`);
  });
}

/**
 * Throws {@link ValidationError} unless `k` is a non-negative safe integer.
 * @example
 * assertK(10);
 */
export function assertK(k: unknown): asserts k is number {
  if (typeof k !== 'number' || !Number.isSafeInteger(k) || k < 0)
    throw new ValidationError('k', 'must be a non-negative integer');
}

/**
 * Throws {@link ValidationError} unless `value` is an integer in [min, max].
 * @example
 * assertIntegerIn(16, 'm', 2, 256);
 */
export function assertIntegerIn(value: unknown, field: string, min: number, max: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(field, `must be an integer between ${min} and ${max}`);
  }
}

/**
 * Writes the unit-length version of `vector` into `out` (at `offset`) and returns
 * the original norm. A zero vector is copied as zeros: it has no direction, so
 * it scores 0 against everything, as it does inside hnswlib.
 * @example
 * const unit = new Float32Array(3);
 * normalizeInto(new Float32Array([3, 0, 4]), unit, 0); // unit = [0.6, 0, 0.8]
 */
export function normalizeInto(vector: Float32Array, out: Float32Array, offset: number): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  const scale = norm > 0 ? 1 / norm : 0;
  for (let i = 0; i < vector.length; i++) out[offset + i] = vector[i]! * scale;
  return norm;
}

/**
 * Why a stored vector cannot go into an index of `dimensions` (not a
 * Float32Array, another length, NaN/±Infinity), or undefined when it can.
 * For data read back from storage, where a bad row is skipped, not thrown.
 * @example
 * vectorDefect(new Float32Array([1, NaN]), 2); // 'element 1 is NaN'
 */
export function vectorDefect(vector: unknown, dimensions: number): string | undefined {
  if (!(vector instanceof Float32Array)) return 'not a Float32Array';
  if (vector.length !== dimensions) return `${vector.length} dimensions instead of ${dimensions}`;
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i])) return `element ${i} is ${String(vector[i])}`;
  }
  return undefined;
}
