/**
 * Orama 3.1.18 in bench/peers: insertMultiple() of every document, then its
 * documented save() (a plain object) written to IndexedDB by structured clone;
 * open reads it back and load()s it into a new instance. Its vector search is
 * a scan (no HNSW: nothing to match); hybrid mode fuses its BM25 with that scan.
 */
import { create, insertMultiple, load, save, search, type AnyOrama, type RawData } from '@orama/orama';
import { PEER_DIMS } from '../../util/peer-corpus.js';
import { BATCH, type PeerSystem } from './system.js';
import { idbGet, idbPut } from './idb-value.js';

const SCHEMA = { text: 'string', n: 'number', embedding: `vector[${PEER_DIMS}]` } as const;
const STORE = 'bench-peers-orama';

function fresh(): AnyOrama {
  return create({ schema: SCHEMA });
}

/** Orama as a peer. */
export function oramaPeer(): PeerSystem {
  let db: AnyOrama | undefined;
  const ns = (hits: { document: unknown }[]): number[] => hits.map((h) => (h.document as { n: number }).n);
  return {
    config: `@orama/orama 3.1.18: insertMultiple() in batches of ${BATCH}, save() written to IndexedDB (structured clone, one put); open = get + load(); vector search is a brute-force scan (similarity threshold 0, so it always returns k); hybrid = its BM25 + vector fusion (default weights)`,
    async ingest(corpus) {
      const orama = fresh();
      await insertMultiple(
        orama,
        corpus.texts.map((text, n) => ({ text, n, embedding: Array.from(corpus.vectors[n]!) })),
        BATCH,
      );
      await idbPut(STORE, save(orama));
    },
    async open() {
      const raw = await idbGet<RawData>(STORE);
      db = fresh();
      load(db, raw);
    },
    async vector(query, _text, k) {
      const r = await search(db!, {
        mode: 'vector',
        vector: { value: Array.from(query), property: 'embedding' },
        similarity: 0,
        limit: k,
        includeVectors: false,
      });
      return ns(r.hits);
    },
    async hybrid(query, text, k) {
      const r = await search(db!, {
        mode: 'hybrid',
        term: text,
        vector: { value: Array.from(query), property: 'embedding' },
        similarity: 0,
        limit: k,
        includeVectors: false,
      });
      return ns(r.hits);
    },
  };
}
