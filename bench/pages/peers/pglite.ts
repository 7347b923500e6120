/**
 * PGlite 0.5.14 with pgvector (@electric-sql/pglite-pgvector 0.0.15) in
 * bench/peers: Postgres in WebAssembly over `idb://` (its file system kept in
 * IndexedDB). Rows go in by multi-row INSERTs of {@link BATCH} in one
 * statement each, with `relaxedDurability` (a query returns before the file
 * system is flushed; the default flushes after every query and was 20x slower
 * to fill); the HNSW and full-text (GIN) indexes are built after the load, as
 * pgvector advises for bulk loads; then a CHECKPOINT and a flush of the
 * file system to IndexedDB, awaited: the durable state. Hybrid is reciprocal-rank fusion of the HNSW top 40 and the
 * full-text top 40 in one SQL statement.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { BATCH, HNSW, type PeerSystem } from './system.js';

const DATA_DIR = 'idb://bench-peers-pglite';
/** Candidates each side of the hybrid fusion, and the reciprocal-rank constant. */
const FUSE = 40;
const RRF_K = 60;

const literal = (v: Float32Array): string => `[${Array.from(v).join(',')}]`;
/** Any of the query's words (the corpus' words are [a-z0-9]); an empty query matches nothing. */
const anyWord = (text: string): string =>
  text
    .toLowerCase()
    .match(/[a-z0-9]+/g)
    ?.join(' | ') ?? '';

const VECTOR_SQL = 'SELECT id FROM docs ORDER BY embedding <=> $1::vector LIMIT $2';
const HYBRID_SQL = `
WITH q AS (SELECT to_tsquery('simple', $2) AS t),
v AS (SELECT id, row_number() OVER (ORDER BY d) AS r FROM (SELECT id, embedding <=> $1::vector AS d FROM docs ORDER BY embedding <=> $1::vector LIMIT ${FUSE}) s),
k AS (SELECT id, row_number() OVER (ORDER BY s DESC) AS r FROM (SELECT id, ts_rank_cd(tsv, q.t) AS s FROM docs, q WHERE tsv @@ q.t ORDER BY s DESC LIMIT ${FUSE}) s)
SELECT coalesce(v.id, k.id) AS id, coalesce(1.0 / (${RRF_K} + v.r), 0) + coalesce(1.0 / (${RRF_K} + k.r), 0) AS score
FROM v FULL OUTER JOIN k ON v.id = k.id ORDER BY score DESC LIMIT $3`;

async function openDb(): Promise<PGlite> {
  const db = await PGlite.create(DATA_DIR, { extensions: { vector }, relaxedDurability: true });
  await db.exec(`SET hnsw.ef_search = ${HNSW.efSearch}`);
  return db;
}

/** PGlite + pgvector as a peer. */
export function pglitePeer(): PeerSystem {
  let db: PGlite | undefined;
  const ids = (rows: { id: number }[]): number[] => rows.map((r) => r.id);
  return {
    config: `@electric-sql/pglite 0.5.14 + @electric-sql/pglite-pgvector 0.0.15 (pgvector), ${DATA_DIR}, relaxedDurability; INSERT of ${BATCH} rows per statement, then CREATE INDEX USING hnsw (vector_cosine_ops) WITH (m = ${HNSW.m}, ef_construction = ${HNSW.efConstruction}) and a GIN index on a stored to_tsvector('simple', text); hnsw.ef_search = ${HNSW.efSearch}; CHECKPOINT then the file system flushed to IndexedDB (awaited); hybrid = RRF (k ${RRF_K}) of the HNSW top ${FUSE} and the ts_rank_cd top ${FUSE} (any query word) in one statement`,
    async ingest(corpus, log) {
      const pg = await openDb();
      await pg.exec(`CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE docs (id integer PRIMARY KEY, text text NOT NULL, tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED, embedding vector(${corpus.vectors[0]!.length}) NOT NULL);`);
      for (let i = 0; i < corpus.texts.length; i += BATCH) {
        const end = Math.min(corpus.texts.length, i + BATCH);
        const values: string[] = [];
        const params: unknown[] = [];
        for (let n = i; n < end; n++) {
          values.push(`($${params.length + 1}, $${params.length + 2}, $${params.length + 3}::vector)`);
          params.push(n, corpus.texts[n], literal(corpus.vectors[n]!));
        }
        await pg.query(`INSERT INTO docs (id, text, embedding) VALUES ${values.join(',')}`, params);
        if ((i / BATCH) % 10 === 9) log(`pglite: ${end} inserted`);
      }
      log('pglite: building the HNSW and GIN indexes');
      await pg.exec(`CREATE INDEX docs_embedding ON docs USING hnsw (embedding vector_cosine_ops) WITH (m = ${HNSW.m}, ef_construction = ${HNSW.efConstruction});
        CREATE INDEX docs_tsv ON docs USING gin (tsv);
        CHECKPOINT;`);
      // With relaxedDurability a query only schedules the flush of its file system to IndexedDB, and close() does not
      // flush (IdbFs.closeFs): flush it here and wait, after a checkpoint, so the IndexedDB copy is a consistent state.
      await pg.fs!.syncToFs(false);
      await pg.close();
    },
    async open() {
      db = await openDb();
    },
    async vector(query, _text, k) {
      return ids((await db!.query<{ id: number }>(VECTOR_SQL, [literal(query), k])).rows);
    },
    async hybrid(query, text, k) {
      return ids((await db!.query<{ id: number }>(HYBRID_SQL, [literal(query), anyWord(text), k])).rows);
    },
  };
}
