/**
 * The duplicate rule of add(), applied to memories a merging import brings:
 * an imported live memory is the same as a standing one (or one imported just
 * before it) of the same tier and exactly the same scope when it has the same
 * key, or the same text, or (keyless) the same statement said slightly
 * differently: equal comparable text and close vectors (near-duplicates.ts).
 * Such a memory is not stored again under its other id.
 */
import { SCOPE_FIELDS, type Scope } from '../../store/scope.js';
import { isLive, type MemoryRow, type VectorRow } from '../../store/rows.js';
import { readCurrentVectors } from '../../store/current-vector.js';
import type { EngineStore } from '../engine-store.js';
import { cosine, NEAR_DUPLICATE_SIMILARITY } from '../memories/near-duplicates.js';

function scopeOf(row: MemoryRow): Scope {
  const scope: Scope = {};
  for (const k of SCOPE_FIELDS) if (row[k] !== undefined) scope[k] = row[k];
  return scope;
}

function slotOf(row: MemoryRow): string {
  return JSON.stringify([row.tier, ...SCOPE_FIELDS.map((k) => row[k] ?? null)]);
}

interface Known {
  row: MemoryRow;
  /** The vector (read by load() for the rows an import could repeat; null when not needed). */
  vector: Float32Array | undefined | null;
}

/** The memories sharing the value of `scope`'s first set field (through its index), or every unscoped one for an empty scope. */
function memoriesUnder(core: EngineStore, scope: Scope): Promise<MemoryRow[]> {
  const field = SCOPE_FIELDS.find((k) => scope[k] !== undefined);
  return field === undefined
    ? core.db.memories.filter((r) => SCOPE_FIELDS.every((k) => r[k] === undefined)).toArray()
    : core.db.memories.where(field).equals(scope[field]!).toArray();
}

/** The distinct scopes of the live rows of `incoming`. */
function liveScopes(incoming: readonly MemoryRow[]): Iterable<Scope> {
  const scopes = new Map<string, Scope>();
  for (const row of incoming)
    if (row.deletedAt === undefined) scopes.set(JSON.stringify(SCOPE_FIELDS.map((k) => row[k] ?? null)), scopeOf(row));
  return scopes.values();
}

/** Standing memories of the slots (tier and scope) an import touches, and the ones it adds. */
export class ImportDuplicates {
  readonly #core: EngineStore;
  /** By slot: by key ('k:…') or text ('t:…'), and by comparable text ('c:…'). */
  readonly #slots = new Map<string, Map<string, Known[]>>();

  private constructor(core: EngineStore) {
    this.#core = core;
  }

  /** Reads the live memories of every slot of `incoming` (call inside the import's transaction). */
  static async load(core: EngineStore, incoming: readonly MemoryRow[]): Promise<ImportDuplicates> {
    const found = new ImportDuplicates(core);
    const scopes = liveScopes(incoming);
    const now = core.now();
    for (const scope of scopes) {
      const rows = await memoriesUnder(core, scope);
      for (const row of rows) {
        const live = isLive(row, now);
        if (live && SCOPE_FIELDS.every((k) => row[k] === scope[k])) found.#remember(row, null);
      }
    }
    // The vectors of standing memories an incoming one could repeat (same comparable text),
    // read in one go: standing() then never waits, which a long import transaction cannot afford.
    const candidates = found.#sameComparable(incoming);
    const vectors = await readCurrentVectors(
      core.db,
      candidates.map((k) => k.row.id),
    );
    candidates.forEach((known, i) => {
      known.vector = vectors[i]?.vector;
    });
    return found;
  }

  /** The standing memories whose comparable text a keyless row of `incoming` shares in its slot. */
  #sameComparable(incoming: readonly MemoryRow[]): Known[] {
    const wanted = new Set(
      incoming
        .filter((row) => row.key === undefined)
        .map((row) => `${slotOf(row)}|c:${this.#core.analyzer.comparable(row.text)}`),
    );
    const candidates: Known[] = [];
    for (const [slotName, slot] of this.#slots) {
      for (const [name, known] of slot)
        if (name.startsWith('c:') && wanted.has(`${slotName}|${name}`)) candidates.push(...known);
    }
    return candidates;
  }

  #names(row: MemoryRow): string[] {
    return row.key !== undefined
      ? [`k:${row.key}`]
      : [`t:${row.text}`, `c:${this.#core.analyzer.comparable(row.text)}`];
  }

  #remember(row: MemoryRow, vector: Float32Array | undefined | null): void {
    const slot = this.#slots.get(slotOf(row)) ?? new Map<string, Known[]>();
    this.#slots.set(slotOf(row), slot);
    for (const name of this.#names(row)) slot.set(name, [...(slot.get(name) ?? []), { row, vector }]);
  }

  /**
   * The standing memory an imported one repeats, if any; otherwise records the
   * imported one (so a later line repeating it is caught too) and returns undefined.
   */
  standing(row: MemoryRow, vector: VectorRow | undefined): MemoryRow | undefined {
    if (row.deletedAt !== undefined) return undefined;
    const slot = this.#slots.get(slotOf(row));
    const [exact, comparable] = this.#names(row);
    const same = slot?.get(exact!)?.[0];
    if (same !== undefined) return same.row;
    for (const known of comparable === undefined ? [] : (slot?.get(comparable) ?? [])) {
      if (
        known.vector !== undefined &&
        known.vector !== null &&
        vector !== undefined &&
        cosine(known.vector, vector.vector) >= NEAR_DUPLICATE_SIMILARITY
      )
        return known.row;
    }
    this.#remember(row, vector?.vector);
    return undefined;
  }
}
