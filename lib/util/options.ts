/**
 * Declarative options: one spec per options type, a check for each of its keys.
 * A spec is written `{ … } satisfies OptionsSpec<SomeOptions>`, so a key the
 * interface has and the spec lacks (or the other way round) fails to compile,
 * and a required key's check cannot be an optional one. `checkOptions` checks
 * an options object against its spec at the door: a plain object, no unknown
 * key, each field checked in the spec's order, with a ValidationError that names
 * the field (`options.limit`).
 * @example
 * const SEARCH = { limit: withDefault(int(1, 1000), 10), signal: optional(abortSignal) } satisfies OptionsSpec<SearchOptions>
 * const { limit, signal } = checkOptions('options', options, SEARCH)
 */
import { ValidationError } from '../errors.js';
import type { Metadata } from '../store/rows.js';
import {
  requireId,
  requireInt,
  requireMetadata,
  requireOneOf,
  requireOptions,
  requireText,
  requireTime,
} from './validate.js';

/**
 * Checks one field: returns the value, checked (and narrowed, or defaulted), or
 * throws a ValidationError naming `field`. An optional field's check is given
 * undefined when the field is absent.
 */
export type Check<V> = (field: string, value: unknown) => V;

/**
 * A check for every key of the options type `T`, optional keys included (their
 * check accepts undefined: {@link optional}, {@link withDefault}).
 */
export type OptionsSpec<T> = { readonly [K in keyof T]-?: Check<T[K]> };

/** What {@link checkOptions} returns for a spec: each key with its check's result. */
export type Checked<S> = { -readonly [K in keyof S]: S[K] extends Check<infer V> ? V : never };

/**
 * Checks `value` against `spec`: a plain object (`hint` otherwise) whose keys are
 * all in the spec, each field checked in the spec's order and named `prefix` + key
 * (`options.limit`; a change to update() names its fields bare: `text`).
 */
export function checkOptions<S extends Record<string, Check<unknown>>>(
  field: string,
  value: unknown,
  spec: S,
  hint?: string,
  prefix = `${field}.`,
): Checked<S> {
  requireOptions(field, value, Object.keys(spec), hint);
  const out: Record<string, unknown> = {};
  for (const [key, check] of Object.entries(spec)) out[key] = check(`${prefix}${key}`, value[key]);
  return out as Checked<S>;
}

/** A check of a nested options object against its own spec (`options.retry.attempts`). */
export function nested<S extends Record<string, Check<unknown>>>(spec: S, hint?: string): Check<Checked<S>> {
  return (field, value) => checkOptions(field, value, spec, hint);
}

/** Undefined stays undefined; anything else goes through `check`. */
export function optional<V>(check: Check<V>): Check<V | undefined> {
  return (field, value) => (value === undefined ? undefined : check(field, value));
}

/** Undefined becomes `fallback`; anything else goes through `check`. */
export function withDefault<V>(check: Check<V>, fallback: V): Check<V> {
  return (field, value) => (value === undefined ? fallback : check(field, value));
}

/** Anything but undefined or null ('is required'); its shape is checked by the caller (named in the spec's comment). */
export function present<V>(): Check<V> {
  return (field, value) => {
    if (value === undefined || value === null) throw new ValidationError(field, 'is required');
    return value as V;
  };
}

/** Whatever was given, unchecked here: for a field whose check needs more than its value (named in the spec's comment). */
export function checkedByCaller<V>(): Check<V | undefined> {
  return (_field, value) => value as V | undefined;
}

/** An identifier: a non-empty string of at most 512 characters. */
export const id: Check<string> = requireId;

/** An integer within [min, max]. */
export function int(min: number, max?: number): Check<number> {
  return (field, value) => requireInt(field, value, min, max);
}

/** One of a fixed set of strings. */
export function oneOf<T extends string>(allowed: readonly T[]): Check<T> {
  return (field, value) => requireOneOf(field, value, allowed);
}

/** A non-empty text of at most `maxBytes` UTF-8 bytes. */
export function nonEmptyText(maxBytes: number): Check<string> {
  return (field, value) => requireText(field, value, maxBytes);
}

/** A moment as epoch milliseconds, given as a Date, an ISO date string or epoch milliseconds. */
export const time: Check<number> = requireTime;

/** Metadata: a plain object of JSON values of at most `maxBytes` as JSON. */
export function metadata(maxBytes: number): Check<Metadata> {
  return (field, value) => requireMetadata(field, value, maxBytes);
}

/** Any string, the empty one included. */
export const string: Check<string> = (field, value) => {
  if (typeof value !== 'string') throw new ValidationError(field, 'must be a string');
  return value;
};

export const boolean: Check<boolean> = (field, value) => {
  if (typeof value !== 'boolean') throw new ValidationError(field, 'must be a boolean');
  return value;
};

export const finiteNumber: Check<number> = (field, value) => {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ValidationError(field, 'must be a finite number');
  return value;
};

export const abortSignal: Check<AbortSignal> = (field, value) => {
  if (!(value instanceof AbortSignal)) throw new ValidationError(field, 'must be an AbortSignal');
  return value;
};

/** A function of the type the options declare (only `typeof` can be checked). */
export function func<F>(): Check<F> {
  return (field, value) => {
    if (typeof value !== 'function') throw new ValidationError(field, 'must be a function');
    return value as F;
  };
}

/** An array whose every item passes `check`, each named by its index (`options.tiers[1]`). */
export function listOf<V>(check: Check<V>, hint = 'must be an array'): Check<V[]> {
  return (field, value) => {
    if (!Array.isArray(value)) throw new ValidationError(field, hint);
    return value.map((item, i) => check(`${field}[${i}]`, item));
  };
}

/** The fields of checked options that hold a value (an absent optional field is left out, not undefined). */
export function definedOnly<T extends object>(checked: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(checked)) if (v !== undefined) out[k] = v;
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}

/** The checks of a scope type: each of `fields` an optional identifier. */
export function scopeSpec<F extends string>(fields: readonly F[]): { readonly [K in F]: Check<string | undefined> } {
  return Object.fromEntries(fields.map((f) => [f, optional(id)])) as { readonly [K in F]: Check<string | undefined> };
}
