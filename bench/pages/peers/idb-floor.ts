/**
 * The floor of engram's storage layout in bench/peers: not a peer but a
 * reference. The rows engram's add() writes for each document (its memory
 * row, vector row, keyword terms row and change-log entry, in engram's schema
 * with its indexes; the corpus statistics and the log's end once per
 * transaction), written with IndexedDB alone, {@link BATCH} documents per
 * transaction, one transaction after the other, each committed before the
 * next: no engine, no duplicate check, no vector or keyword index, no
 * snapshot. Every row is built before the clock starts, so what is timed is
 * IndexedDB's own work (structured clone, keys and index entries, commit).
 * No store of this layout can be durable faster.
 *
 * Two other layouts, to show what a change of layout could buy (engram
 * writes neither): `vectors` writes each transaction's vectors as one row (a
 * Float32Array of the batch's vectors, with their ids) instead of a row per
 * document; `blocks` also writes the batch's terms rows as one row and its
 * change-log entries as one entry naming every record.
 *
 * Open reads every vector row; a vector query is an exact scan (no index).
 * No hybrid search.
 */
import { memoryHash } from '../../../lib/engine/memories/memories.js';
import { ENGLISH_ANALYZER } from '../../../lib/search/analyze.js';
import { MEMORY_CORPUS, statsKey, termsRowOf } from '../../../lib/store/keyword-terms.js';
import type { ChangeRow, MemoryRow, TermsRow, VectorRow } from '../../../lib/store/rows.js';
import { ExactIndex } from '../../../lib/vector/exact-index.js';
import { PEER_DIMS } from '../../util/peer-corpus.js';
import { committed, requested } from './idb-value.js';
import { BATCH, type PeerSystem } from './system.js';

const NAME = 'bench-peers-idb-floor';
const EMBEDDER = 'bench-table/384';
const ORIGIN = 'bench-device';

/** Which rows go one per document (`rows`, engram's layout) and which one per transaction. */
export type Packing = 'rows' | 'vectors' | 'blocks';

/** The rows of one transaction. */
interface Batch {
  memories: MemoryRow[];
  vectors: VectorRow[];
  terms: TermsRow[];
  changes: ChangeRow[];
}

/** A packed vector row: the batch's vectors end to end, `ids[i]` owning `vectors[i·dims … (i+1)·dims)`. */
interface PackedVectors {
  id: string;
  ids: string[];
  vectors: Float32Array;
  embedderId: string;
}

/** engram's tables as its schema (lib/store/schema.ts, v5) declares those this layout writes, with the same indexes. */
function openDb(): Promise<IDBDatabase> {
  const req = indexedDB.open(NAME, 1);
  req.onupgradeneeded = () => {
    const db = req.result;
    const memories = db.createObjectStore('memories', { keyPath: 'id' });
    for (const field of ['hash', 'userId', 'agentId', 'runId', 'projectId', 'sessionId'])
      memories.createIndex(field, field);
    memories.createIndex('[tier+key]', ['tier', 'key']);
    db.createObjectStore('vectors', { keyPath: 'id' });
    db.createObjectStore('terms', { keyPath: ['c', 'd'] });
    db.createObjectStore('changes', { keyPath: 'seq', autoIncrement: true }).createIndex('recordId', 'recordId');
    db.createObjectStore('meta', { keyPath: 'key' });
  };
  return requested(req);
}

/** Document `n`'s record id, shaped as engram's (a UUID's 36 characters); {@link documentOf} reads `n` back. */
function idOf(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

function documentOf(id: string): number {
  return Number(id.slice(-12));
}

/** The rows engram's add() writes for document `n` (lib/store/rows.ts; its hash as add() makes it), added into `batch`. */
function addRows(batch: Batch, n: number, text: string, vector: Float32Array, at: number): void {
  const id = idOf(n);
  batch.memories.push({
    id,
    text,
    tier: 'long_term',
    userId: 'u',
    metadata: {},
    hash: memoryHash('long_term', { userId: 'u' }, text),
    createdAt: at,
    updatedAt: at,
    accessCount: 0,
    version: 1,
    origin: ORIGIN,
  });
  batch.vectors.push({ id, vector, embedderId: EMBEDDER });
  const terms = termsRowOf(MEMORY_CORPUS, id, ENGLISH_ANALYZER.document(text));
  if (terms !== undefined) batch.terms.push(terms);
  batch.changes.push({ table: 'memories', recordId: id, op: 'add', at });
}

/** The corpus's rows, {@link BATCH} documents per transaction, as engram's peer adds them (userId 'u'). */
function batches(texts: readonly string[], vectors: readonly Float32Array[]): Batch[] {
  const at = Date.now();
  const out: Batch[] = [];
  for (let start = 0; start < texts.length; start += BATCH) {
    const batch: Batch = { memories: [], vectors: [], terms: [], changes: [] };
    for (let n = start; n < Math.min(texts.length, start + BATCH); n++) addRows(batch, n, texts[n]!, vectors[n]!, at);
    out.push(batch);
  }
  return out;
}

function packedVectors(batch: Batch, index: number): PackedVectors {
  const vectors = new Float32Array(batch.vectors.length * PEER_DIMS);
  batch.vectors.forEach((v, i) => {
    vectors.set(v.vector, i * PEER_DIMS);
  });
  return { id: `block-${index}`, ids: batch.vectors.map((v) => v.id), vectors, embedderId: EMBEDDER };
}

/** What one transaction puts in each table, laid out as `packing` says. */
function laidOut(batch: Batch, index: number, packing: Packing): Record<string, readonly unknown[]> {
  if (packing === 'rows') return { ...batch };
  const vectors = [packedVectors(batch, index)];
  if (packing === 'vectors') return { ...batch, vectors };
  const recordIds = batch.changes.map((c) => c.recordId);
  return {
    memories: batch.memories,
    vectors,
    terms: [{ c: MEMORY_CORPUS, d: `block-${index}`, rows: batch.terms }],
    changes: [{ table: 'memories', recordIds, op: 'add', at: batch.changes[0]?.at }],
  };
}

/** Writes one transaction's rows, resolving once it has committed. */
async function write(
  db: IDBDatabase,
  rows: Record<string, readonly unknown[]>,
  docs: number,
  length: number,
): Promise<void> {
  const tx = db.transaction(['memories', 'vectors', 'terms', 'changes', 'meta'], 'readwrite');
  const put = (table: string, values: readonly unknown[]): void => {
    const store = tx.objectStore(table);
    for (const value of values) store.put(value);
  };
  for (const [table, values] of Object.entries(rows)) put(table, values);
  put('meta', [
    { key: statsKey(MEMORY_CORPUS), value: { docs, length } },
    { key: 'changes.floor', value: { seq: 0, last: docs } },
  ]);
  await committed(tx);
}

const LAYOUTS: Record<Packing, string> = {
  rows: 'per document its memory row, vector row, keyword terms row and change-log entry',
  vectors:
    "per document its memory row, keyword terms row and change-log entry, the transaction's vectors in one row (a layout engram does not have)",
  blocks:
    "per document its memory row; the transaction's vectors in one row, its terms rows in one row and its change-log entries in one entry (a layout engram does not have)",
};

/** The floor of engram's layout, or of another (see {@link Packing}). */
export function idbFloorPeer(packing: Packing): PeerSystem {
  let index: ExactIndex | undefined;
  let writeMs: number | undefined;
  return {
    config: `engram's rows written with IndexedDB alone (not a peer: the floor of a layout): ${LAYOUTS[packing]}; engram's schema and indexes, ${BATCH} documents per transaction, each committed before the next; every row built before the clock (only IndexedDB's work is timed), no engine, no index, no snapshot; open reads every vector row, a query is an exact scan`,
    async ingest(corpus) {
      const all = batches(corpus.texts, corpus.vectors);
      const rows = all.map((batch, i) => laidOut(batch, i, packing));
      const db = await openDb();
      const t0 = performance.now();
      let docs = 0;
      let length = 0;
      for (const [i, batch] of all.entries()) {
        docs += batch.memories.length;
        length += batch.terms.reduce((sum, t) => sum + t.n, 0);
        await write(db, rows[i]!, docs, length);
      }
      writeMs = performance.now() - t0;
      db.close();
    },
    ingestMs: () => writeMs,
    async open(n) {
      const db = await openDb();
      const rows = await requested(db.transaction('vectors', 'readonly').objectStore('vectors').getAll());
      db.close();
      index = ExactIndex.create({ dimensions: PEER_DIMS, capacity: n });
      const items =
        packing !== 'rows'
          ? (rows as PackedVectors[]).flatMap((b) =>
              b.ids.map((id, i) => ({ id, vector: b.vectors.subarray(i * PEER_DIMS, (i + 1) * PEER_DIMS) })),
            )
          : (rows as VectorRow[]).map((r) => ({ id: r.id, vector: r.vector }));
      index.addMany(items);
    },
    async vector(query, _text, k) {
      await Promise.resolve();
      return index!.search(query, k).map((hit) => documentOf(hit.id));
    },
  };
}
