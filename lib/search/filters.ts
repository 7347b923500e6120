/**
 * Memory filters: scope (userId, agentId, runId, projectId, sessionId, tier),
 * metadata equality or membership, and created/updated date ranges. Validated
 * once into a predicate; unknown fields are rejected, never ignored.
 */
import { ValidationError } from '../errors.js';
import { TIERS, isLive, type Json, type MemoryRow, type Tier } from '../store/rows.js';
import { SCOPE_FIELDS, type Scope, type ScopeField } from '../store/scope.js';
import {
  isPlainObject,
  optionalId,
  rejectUnknownKeys,
  requireJson,
  requireOneOf,
  requireOptions,
  requireTime,
} from '../util/validate.js';

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

const FILTER_KEYS = [...SCOPE_FIELDS, 'tier', 'metadata', 'createdAt', 'updatedAt'] as const;

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

function compileRange(field: string, value: unknown): [number, number] | undefined {
  if (value === undefined) return undefined;
  requireOptions(field, value, ['from', 'to'], 'must be an object with from and/or to');
  const from = value['from'] === undefined ? -Infinity : requireTime(`${field}.from`, value['from']);
  const to = value['to'] === undefined ? Infinity : requireTime(`${field}.to`, value['to']);
  return [from, to];
}

function sameJson(a: Json | undefined, b: Json): boolean {
  if (a === undefined) return false;
  if (a === b) return true;
  return typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Validates `filters` merged with a call's own scope (`userId` etc. given beside
 * the filters). A scope given twice with different values is a ValidationError.
 */
export function compileFilters(filters: unknown, callScope: Scope = {}, field = 'filters'): CompiledFilter {
  const f: Record<string, unknown> = filters === undefined ? {} : (filters as Record<string, unknown>);
  requireOptions(field, f, FILTER_KEYS);
  const scope: Scope = {};
  for (const key of SCOPE_FIELDS) {
    const own = optionalId(`${field}.${key}`, f[key]);
    const outer = callScope[key];
    if (own !== undefined && outer !== undefined && own !== outer) {
      throw new ValidationError(`${field}.${key}`, `conflicts with ${key} "${outer}" given beside the filters`);
    }
    const value = own ?? outer;
    if (value !== undefined) scope[key] = value;
  }
  let tiers: Set<Tier> | undefined;
  if (f['tier'] !== undefined) {
    const list = Array.isArray(f['tier']) ? (f['tier'] as unknown[]) : [f['tier']];
    if (list.length === 0) throw new ValidationError(`${field}.tier`, 'must name at least one tier');
    tiers = new Set(list.map((t, i) => requireOneOf(`${field}.tier[${i}]`, t, TIERS)));
  }
  const conditions: [string, (v: Json | undefined) => boolean][] = [];
  if (f['metadata'] !== undefined) {
    const meta = f['metadata'];
    if (!isPlainObject(meta))
      throw new ValidationError(`${field}.metadata`, 'must be an object of key -> value or { in: [...] }');
    for (const [key, cond] of Object.entries(meta)) {
      const cf = `${field}.metadata.${key}`;
      if (isPlainObject(cond)) {
        rejectUnknownKeys(cf, cond, ['in']);
        if (!Array.isArray(cond['in'])) throw new ValidationError(`${cf}.in`, 'must be an array');
        const options = (cond['in'] as unknown[]).map((v, i) => requireJson(`${cf}.in[${i}]`, v));
        conditions.push([key, (v) => options.some((o) => sameJson(v, o))]);
      } else {
        const want = requireJson(cf, cond);
        conditions.push([key, (v) => sameJson(v, want)]);
      }
    }
  }
  const created = compileRange(`${field}.createdAt`, f['createdAt']);
  const updated = compileRange(`${field}.updatedAt`, f['updatedAt']);
  const scopeEntries = Object.entries(scope) as [ScopeField, string][];
  const empty =
    scopeEntries.length === 0 &&
    tiers === undefined &&
    conditions.length === 0 &&
    created === undefined &&
    updated === undefined;
  const matchesEntry = (row: ScopeEntry, now: number): boolean => {
    if (!isLive(row, now)) return false;
    for (const [k, v] of scopeEntries) if (row[k] !== v) return false;
    if (tiers !== undefined && !tiers.has(row.tier)) return false;
    if (created !== undefined && (row.createdAt < created[0] || row.createdAt > created[1])) return false;
    if (updated !== undefined && (row.updatedAt < updated[0] || row.updatedAt > updated[1])) return false;
    return true;
  };
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
