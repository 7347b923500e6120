/**
 * The store's generation: a number in `meta` bumped by every store-wide change
 * that does not go through the change log row by row (reset, a replacing
 * import). Caches of the store (the vector index, the keyword postings) record
 * the generation they were built from; when the stored one differs, another
 * instance (a second tab, a second Engram on the same name) replaced the store
 * under them, and they reload from the store instead of replaying the log.
 * Checking costs one `meta` read, done before every catch-up with the log.
 */
import type { EngramDb } from './schema.js';

/** The `meta` key of the generation number. */
export const GENERATION_KEY = 'generation';

/** The store's generation (0 when never bumped, or when the row is damaged). */
export async function readGeneration(db: EngramDb): Promise<number> {
  return generationOf((await db.meta.get(GENERATION_KEY))?.value);
}

/** The generation a `meta` value holds (0 when absent, or when the row is damaged). */
export function generationOf(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : 0;
}

/**
 * Bumps the generation. Call it inside the transaction that makes the
 * store-wide change (it needs the `meta` table in scope), so the change and
 * the new number land together.
 */
export async function bumpGeneration(db: EngramDb): Promise<number> {
  const next = (await readGeneration(db)) + 1;
  await db.meta.put({ key: GENERATION_KEY, value: next });
  return next;
}
