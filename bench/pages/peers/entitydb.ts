/**
 * EntityDB 1.0.11 in bench/peers: IndexedDB rows of {vector, text}, each
 * insertManualVectors() its own transaction (its API has no batch), and
 * queryManualVectors(), which reads every row and computes the cosine in
 * JavaScript. The vectors are given precomputed (its own model is never
 * loaded: xenova-offline.ts). Durable once a transaction over its store
 * completes after the last insert. No HNSW, no hybrid.
 */
import './xenova-offline.js';
import { EntityDB } from '@babycommando/entity-db';
import type { PeerSystem } from './system.js';

interface Row {
  n: number;
}

/** Waits until every insert before it has committed: a later transaction over the same store runs after them. */
async function settled(db: EntityDB): Promise<void> {
  const idb = await (
    db as unknown as { dbPromise: Promise<{ transaction: (s: string, m: string) => { done: Promise<void> } }> }
  ).dbPromise;
  await idb.transaction('vectors', 'readwrite').done;
}

/** EntityDB as a peer. */
export function entityDbPeer(): PeerSystem {
  let db: EntityDB | undefined;
  return {
    config:
      'EntityDB 1.0.11 (@babycommando/entity-db): insertManualVectors() per document (one IndexedDB transaction each, Float32Array vectors), queryManualVectors() scans every row (getAll + JavaScript cosine); its transformers.js model never loaded (remote and local models off)',
    async ingest(corpus, log) {
      const entity = new EntityDB({ vectorPath: 'vector' });
      for (let n = 0; n < corpus.texts.length; n++) {
        await entity.insertManualVectors({ vector: corpus.vectors[n], text: corpus.texts[n], n });
        if (n % 10_000 === 9_999) log(`entitydb: ${n + 1} inserted`);
      }
      await settled(entity);
    },
    async open() {
      db = new EntityDB({ vectorPath: 'vector' });
      await (db as unknown as { dbPromise: Promise<unknown> }).dbPromise;
    },
    async vector(query, _text, k) {
      const hits = (await db!.queryManualVectors(Array.from(query), { limit: k })) as Row[];
      return hits.map((h) => h.n);
    },
  };
}
