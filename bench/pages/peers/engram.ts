/**
 * engram in bench/peers: add() in batches of {@link BATCH} with the vectors
 * precomputed (a table embedder looks each text up), then flush() (the HNSW
 * snapshot) and close(); search() in 'vector' and 'hybrid' mode.
 */
import { Engram, type Embedder } from '../../../lib/index.js';
import { documentOfText, PEER_DIMS } from '../../util/peer-corpus.js';
import { BATCH, HNSW, type PeerSystem } from './system.js';

const NAME = 'bench-peers-engram';

/** Looks vectors up by text: no model in the timing. */
class TableEmbedder implements Embedder {
  readonly id = 'bench-peers-table-384';
  readonly dimensions = PEER_DIMS;
  readonly table = new Map<string, Float32Array>();
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    await Promise.resolve();
    return texts.map((t) => {
      const v = this.table.get(t);
      if (v === undefined) throw new RangeError(`no vector for ${t}`);
      return v;
    });
  }
  async dispose(): Promise<void> {}
}

/** engram as a peer. */
export function engramPeer(): PeerSystem {
  const embedder = new TableEmbedder();
  let engram: Engram | undefined;
  const ids = (results: { memory: string }[]): number[] => results.map((r) => documentOfText(r.memory));
  return {
    config: `engram (this tree): add() of ${BATCH} texts per call with precomputed vectors, flush(), close(); HNSW M ${HNSW.m}, efConstruction ${HNSW.efConstruction}, efSearch ${HNSW.efSearch} (defaults); IndexedDB through Dexie, each add() one committed transaction`,
    async ingest(corpus, log) {
      corpus.texts.forEach((t, i) => embedder.table.set(t, corpus.vectors[i]!));
      const e = await Engram.open({ name: NAME, embedder });
      for (let i = 0; i < corpus.texts.length; i += BATCH) {
        await e.add(
          corpus.texts.slice(i, i + BATCH).map((content) => ({ role: 'user' as const, content })),
          { userId: 'u', dedupe: 'off' },
        );
        if ((i / BATCH) % 10 === 9) log(`engram: ${i + BATCH} added`);
      }
      await e.flush();
      await e.close();
    },
    async open() {
      engram = await Engram.open({ name: NAME, embedder });
    },
    async vector(query, text, k) {
      embedder.table.set(text, query);
      return ids((await engram!.search(text, { mode: 'vector', limit: k })).results);
    },
    async hybrid(query, text, k) {
      embedder.table.set(text, query);
      return ids((await engram!.search(text, { mode: 'hybrid', limit: k })).results);
    },
  };
}
