/**
 * Checks at the door. Each throws a ValidationError that names the field, so a
 * caller's bad input is rejected before anything is written.
 */
import { ValidationError } from '../errors.js';
import type { Json, Metadata } from '../store/rows.js';
import { utf8Length } from './hash.js';

/** A non-empty string of at most `maxBytes` UTF-8 bytes. */
export function requireText(field: string, value: unknown, maxBytes: number): string {
  if (typeof value !== 'string') throw new ValidationError(field, `must be a string, got ${describe(value)}`);
  if (value.trim() === '') throw new ValidationError(field, 'must not be empty');
  const bytes = utf8Length(value);
  if (bytes > maxBytes) throw new ValidationError(field, `is ${bytes} bytes, over the maximum of ${maxBytes}`);
  return value;
}

/** A non-empty identifier string (thread, agent, user, label…). */
export function requireId(field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '')
    throw new ValidationError(field, `must be a non-empty string, got ${describe(value)}`);
  if (value.length > 512) throw new ValidationError(field, 'must be at most 512 characters');
  return value;
}

/** An optional identifier: undefined stays undefined. */
export function optionalId(field: string, value: unknown): string | undefined {
  return value === undefined ? undefined : requireId(field, value);
}

/** An integer within [min, max]. */
export function requireInt(field: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new ValidationError(field, `must be an integer, got ${describe(value)}`);
  if (value < min || value > max) throw new ValidationError(field, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** Epoch milliseconds from a Date, an ISO string or a number. */
export function requireTime(field: string, value: unknown): number {
  let ms: number;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'number') ms = value;
  else if (typeof value === 'string' && value.trim() !== '') ms = Date.parse(value);
  else
    throw new ValidationError(
      field,
      `must be a Date, an ISO date string or epoch milliseconds, got ${describe(value)}`,
    );
  if (!Number.isFinite(ms)) throw new ValidationError(field, `is not a valid date: ${String(value)}`);
  return ms;
}

/** One of a fixed set of strings. */
export function requireOneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new ValidationError(field, `must be one of ${allowed.join(', ')}, got ${describe(value)}`);
  }
  return value as T;
}

/** A plain object of JSON values (metadata) whose JSON text is at most `maxBytes` UTF-8 bytes, like any text. */
export function requireMetadata(field: string, value: unknown, maxBytes: number): Metadata {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw new ValidationError(field, `must be a plain object, got ${describe(value)}`);
  requireJson(field, value);
  const bytes = utf8Length(JSON.stringify(value));
  if (bytes > maxBytes) throw new ValidationError(field, `is ${bytes} bytes as JSON, over the maximum of ${maxBytes}`);
  return value as Metadata;
}

/** Any JSON value (finite numbers, plain objects, arrays, strings, booleans, null). */
export function requireJson(field: string, value: unknown, depth = 0): Json {
  if (depth > 64) throw new ValidationError(field, 'is nested too deeply');
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ValidationError(field, 'must contain only finite numbers');
    return value;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => requireJson(`${field}[${i}]`, v, depth + 1));
    return value as Json[];
  }
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) requireJson(`${field}.${k}`, v, depth + 1);
    return value as Json;
  }
  throw new ValidationError(field, `must be JSON-serialisable, got ${describe(value)}`);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * An options (or arguments) object at the door: a plain object whose keys are
 * all known. Narrows `value`; the fields themselves are checked by the caller.
 * @example
 * requireOptions('options', options, ['limit', 'offset'])
 */
export function requireOptions<T>(
  field: string,
  value: T,
  known: readonly string[],
  hint = 'must be an object',
): asserts value is T & Record<string, unknown> {
  if (!isPlainObject(value)) throw new ValidationError(field, hint);
  rejectUnknownKeys(field, value, known);
}

/** Rejects option keys the callee does not know, naming the first unknown one. */
export function rejectUnknownKeys(field: string, value: object, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key))
      throw new ValidationError(`${field}.${key}`, `is not a known option (known: ${known.join(', ')})`);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN';
  return typeof value;
}
