/**
 * A memory's current vector, as every reader of a `VectorRow` takes it. A re-embed
 * stages the new model's vector beside the current one (`VectorRow.staged`), then its
 * switch only changes the recorded embedder (lib/engine/vectors/reembed.ts): from that
 * moment a row's staged vector of the recorded model is the memory's vector, before and
 * after the rows are rewritten in small transactions (and when a crash came in between,
 * for good). Readers therefore never look at `vector` / `staged` themselves: the index's
 * fill and catch-up, near-duplicate checks, search's stored scores, export, sync's push
 * and forgetting's counts all go through this file.
 */
import { readEmbedderId } from './embedder-record.js';
import type { VectorRow } from './rows.js';
import type { EngramDb } from './schema.js';

/** A memory's vector and the model that made it. */
export interface CurrentVector {
  vector: Float32Array;
  embedderId: string;
}

/**
 * The vector row `row` holds for a store whose recorded model is `recorded`: its staged
 * vector when that one is of the recorded model and the row's own is not (switched, not
 * yet rewritten); otherwise its own. Undefined when there is no row.
 * @example
 * const current = currentVector(await db.vectors.get(id), await readEmbedderId(db));
 */
export function currentVector(row: VectorRow | undefined, recorded: string | undefined): CurrentVector | undefined {
  if (row === undefined) return undefined;
  const { staged } = row;
  if (staged !== undefined && recorded !== undefined && staged.embedderId === recorded && row.embedderId !== recorded)
    return { vector: staged.vector, embedderId: staged.embedderId };
  return { vector: row.vector, embedderId: row.embedderId };
}

/**
 * The vector of model `model` that row `row` holds, its own or staged; undefined when it
 * holds none of that model. For readers that work with one model's vectors (an index of
 * `model`, a query or a new memory embedded by it): on a store recorded with `model` it is
 * the row's current vector whenever that one is of `model`.
 * @example
 * const vector = vectorOfModel(row, embedder.id);
 */
export function vectorOfModel(row: VectorRow | undefined, model: string): Float32Array | undefined {
  if (row === undefined) return undefined;
  if (row.embedderId === model) return row.vector;
  return row.staged?.embedderId === model ? row.staged.vector : undefined;
}

/**
 * The current vectors of memories `ids` (see {@link currentVector}), with the recorded
 * model read in the same go. Inside a transaction, `meta` and `vectors` must be in scope.
 */
export async function readCurrentVectors(db: EngramDb, ids: readonly string[]): Promise<(CurrentVector | undefined)[]> {
  const [recorded, rows] = await Promise.all([readEmbedderId(db), db.vectors.bulkGet([...ids])]);
  return rows.map((row) => currentVector(row, recorded));
}
