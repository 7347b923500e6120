/**
 * Memory filters: scope (userId, agentId, runId, projectId, sessionId, tier),
 * metadata equality or membership, and created/updated date ranges. Validated
 * once into a predicate; unknown fields are rejected, never ignored.
 */
import { ValidationError } from '../errors.js';
import { TIERS, isLive, type Json, type MemoryRow, type Tier } from '../store/rows.js';
import { SCOPE_FIELDS, type Scope, type ScopeField } from '../store/scope.js';
import { isPlainObject, rejectUnknownKeys, requireJson } from '../util/validate.js';
import {
  checkOptions,
  definedOnly,
  listOf,
  oneOf,
  optional,
  scopeSpec,
  time,
  type Check,
  type OptionsSpec,
} from '../util/options.js';

/** A date range; either end may be open. Dates, ISO strings or epoch ms. */
export interface DateRange {
  from?: Date | string | number;
  to?: Date | string | number;
}

/** A metadata condition: a value to equal, or `{ in: [...] }` for membership. */
export type MetadataCondition = Json | { in: Json[] };

/**
 * Filters of a memory search or listing.
 * @example
 * { tier: ['project', 'long_term'], metadata: { topic: { in: ['food', 'travel'] } }, createdAt: { from: '2026-01-01' } }
 */
export interface MemoryFilters {
  userId?: string;
  agentId?: string;
  runId?: string;
  projectId?: string;
  sessionId?: string;
  tier?: Tier | Tier[];
  metadata?: Record<string, MetadataCondition>;
  createdAt?: DateRange;
  updatedAt?: DateRange;
}

/** The fields of a memory that every condition but metadata looks at. */
export type ScopeEntry = Pick<MemoryRow, 'tier' | 'createdAt' | 'updatedAt' | 'expiresAt' | 'deletedAt' | ScopeField>;

/** A validated filter. */
export interface CompiledFilter {
  scope: Scope;
  tiers?: ReadonlySet<Tier>;
  /** True when nothing but liveness restricts the result. */
  readonly empty: boolean;
  /** True when metadata conditions need the whole row. */
  readonly needsMetadata: boolean;
  /** True when the filter holds scope values only (no tier, metadata or date condition): liveness and those values decide. */
  readonly scopeOnly: boolean;
  /** Whether a live row passes (tombstones and expired rows never do). */
  matches(row: MemoryRow, now: number): boolean;
  /** Every condition but metadata, on the fields an index keeps in memory. */
  matchesEntry(entry: ScopeEntry, now: number): boolean;
}

/** The checks of a {@link DateRange}. */
const DATE_RANGE_SPEC = { from: optional(time), to: optional(time) } satisfies OptionsSpec<DateRange>;

/** A date range, its ends as epoch milliseconds. */
const dateRange: Check<{ from?: number; to?: number }> = (field, value) =>
  definedOnly(checkOptions(field, value, DATE_RANGE_SPEC, 'must be an object with from and/or to'));

/** One tier or a non-empty list of them. */
const tierOrTiers: Check<Tier[]> = (field, value) => {
  if (!Array.isArray(value)) return [oneOf(TIERS)(`${field}[0]`, value)];
  if (value.length === 0) throw new ValidationError(field, 'must name at least one tier');
  return listOf(oneOf(TIERS))(field, value);
};

/** Metadata conditions: key -> a JSON value to equal, or `{ in: [...] }` (a plain object always means membership). */
const metadataConditions: Check<Record<string, MetadataCondition>> = (field, value) => {
  if (!isPlainObject(value)) throw new ValidationError(field, 'must be an object of key -> value or { in: [...] }');
  for (const [key, cond] of Object.entries(value)) {
    const cf = `${field}.${key}`;
    if (!isPlainObject(cond)) requireJson(cf, cond);
    else {
      rejectUnknownKeys(cf, cond, ['in']);
      listOf(requireJson)(`${cf}.in`, cond['in']);
    }
  }
  return value as Record<string, MetadataCondition>;
};

/** The checks of {@link MemoryFilters}: scope ids, tiers, metadata conditions, date ranges. */
const FILTERS_SPEC = {
  ...scopeSpec(SCOPE_FIELDS),
  tier: optional(tierOrTiers),
  metadata: optional(metadataConditions),
  createdAt: optional(dateRange),
  updatedAt: optional(dateRange),
} satisfies OptionsSpec<MemoryFilters>;

/** The filters' scope merged with the call's own; a field given in both with different values is a conflict. */
function mergeScope(own: { [K in ScopeField]: string | undefined }, callScope: Scope, field: string): Scope {
  const scope: Scope = {};
  for (const key of SCOPE_FIELDS) {
    const outer = callScope[key];
    if (own[key] !== undefined && outer !== undefined && own[key] !== outer) {
      throw new ValidationError(`${field}.${key}`, `conflicts with ${key} "${outer}" given beside the filters`);
    }
    const value = own[key] ?? outer;
    if (value !== undefined) scope[key] = value;
  }
  return scope;
}

/** Checked metadata conditions as tests of a row's value under each key. */
function metadataTests(meta: Record<string, MetadataCondition> = {}): [string, (v: Json | undefined) => boolean][] {
  return Object.entries(meta).map(([key, cond]) => {
    if (isPlainObject(cond)) {
      const options = (cond as { in: Json[] }).in;
      return [key, (v) => options.some((o) => sameJson(v, o))];
    }
    return [key, (v) => sameJson(v, cond)];
  });
}

/** A checked range as inclusive bounds, an open end unbounded. */
function bounds(range: { from?: number; to?: number } | undefined): [number, number] | undefined {
  return range === undefined ? undefined : [range.from ?? -Infinity, range.to ?? Infinity];
}

function sameJson(a: Json | undefined, b: Json): boolean {
  if (a === undefined) return false;
  if (a === b) return true;
  return typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b);
}

/** The test of a scope entry: live, of the scope and the tiers, created and updated within the bounds. */
function entryTest(parts: {
  scopeEntries: readonly [ScopeField, string][];
  tiers: ReadonlySet<Tier> | undefined;
  created: [number, number] | undefined;
  updated: [number, number] | undefined;
}): (row: ScopeEntry, now: number) => boolean {
  const { scopeEntries, tiers, created, updated } = parts;
  return (row, now) => {
    if (!isLive(row, now)) return false;
    for (const [k, v] of scopeEntries) if (row[k] !== v) return false;
    if (tiers !== undefined && !tiers.has(row.tier)) return false;
    if (created !== undefined && (row.createdAt < created[0] || row.createdAt > created[1])) return false;
    if (updated !== undefined && (row.updatedAt < updated[0] || row.updatedAt > updated[1])) return false;
    return true;
  };
}

/**
 * Validates `filters` merged with a call's own scope (`userId` etc. given beside
 * the filters). A scope given twice with different values is a ValidationError.
 */
export function compileFilters(filters: unknown, callScope: Scope = {}, field = 'filters'): CompiledFilter {
  const f = checkOptions(field, filters === undefined ? {} : filters, FILTERS_SPEC);
  const scope = mergeScope(f, callScope, field);
  const tiers = f.tier === undefined ? undefined : new Set(f.tier);
  const conditions = metadataTests(f.metadata);
  const created = bounds(f.createdAt);
  const updated = bounds(f.updatedAt);
  const scopeEntries = Object.entries(scope) as [ScopeField, string][];
  const empty =
    scopeEntries.length === 0 &&
    tiers === undefined &&
    conditions.length === 0 &&
    created === undefined &&
    updated === undefined;
  const matchesEntry = entryTest({ scopeEntries, tiers, created, updated });
  return {
    scope,
    ...(tiers === undefined ? {} : { tiers }),
    empty,
    needsMetadata: conditions.length > 0,
    scopeOnly: tiers === undefined && conditions.length === 0 && created === undefined && updated === undefined,
    matchesEntry,
    matches(row, now) {
      if (!matchesEntry(row, now)) return false;
      // Own properties only: `__proto__`, `constructor`… name no metadata a row does not hold.
      for (const [k, test] of conditions)
        if (!test(Object.hasOwn(row.metadata, k) ? row.metadata[k] : undefined)) return false;
      return true;
    },
  };
}
