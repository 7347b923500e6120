/**
 * The embedder a store's vectors are made with: `{ id, dimensions }` in `meta`. It
 * changes only by a re-embed's switch (lib/engine/vectors/reembed.ts), so the caches
 * of another instance read it with the log head and each write (one more `meta` get in
 * transactions that read `meta` anyway) to learn that the store moved to another model.
 */
import type { EngramDb } from './schema.js';

/** The embedder a store was written with. */
export interface EmbedderRecord {
  id: string;
  dimensions: number;
}

/** The `meta` key of the record. */
export const EMBEDDER_KEY = 'embedder';

/** The record's id and dimension when `value` is a well-formed embedder record. */
export function embedderRecordOf(value: unknown): EmbedderRecord | undefined {
  const record = value as Partial<EmbedderRecord> | null;
  if (
    typeof record === 'object' &&
    record !== null &&
    typeof record.id === 'string' &&
    typeof record.dimensions === 'number' &&
    Number.isInteger(record.dimensions) &&
    record.dimensions > 0
  ) {
    return { id: record.id, dimensions: record.dimensions };
  }
  return undefined;
}

/** The recorded embedder's id; undefined when none is recorded or the record is damaged. */
export async function readEmbedderId(db: EngramDb): Promise<string | undefined> {
  return embedderRecordOf((await db.meta.get(EMBEDDER_KEY))?.value)?.id;
}
