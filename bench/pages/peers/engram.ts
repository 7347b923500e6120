/**
 * engram in bench/peers, filled four ways with the vectors precomputed (a
 * table embedder looks each text up), then flush() (the HNSW snapshot) and
 * close(); search() in 'vector' and 'hybrid' mode after the reopen:
 * - `engram`: add() in batches of {@link BATCH}, as every peer inserts (each
 *   add() a bulk write for the engine: BULK_WRITE, lib/engine/engine-store.ts);
 * - `engram-small`: add() of {@link SMALL_BATCH} per call, as an app adds
 *   (each a small write): the store the others are compared with;
 * - `engram-resumed`: filled as `engram-small`, closed, then a second session
 *   adds {@link RESUMED_EXTRA} more (far from every query) by add() of
 *   {@link SMALL_BATCH} and closes: its first compaction deletes the change
 *   log the first session left in one piece, late in the session;
 * - `engram-bulk`: one add() of the whole corpus (the bulk path of add());
 * - `engram-import`: Engram.import of an export of a store filled as `engram`
 *   is (the import path; only the import is timed).
 * The bulk-filled stores are compared with the small batches' after the
 * reopen: a search must not be slower in a store because of how it was
 * filled (issue 27: a compaction of the change log in one piece at the end of
 * a fill, b2d9b7f, doubled the per-query time after the next open).
 */
import { Engram, type Embedder } from '../../../lib/index.js';
import { documentOfText, PEER_DIMS, type PeerCorpus } from '../../util/peer-corpus.js';
import { BATCH, HNSW, type PeerSystem } from './system.js';
import { requested } from './idb-value.js';

const NAME = 'bench-peers-engram';
/** The store an import's export is taken from (deleted before the import). */
const SOURCE = 'bench-peers-engram-source';

/** Memories per add() of the app-like fill: below the engine's BULK_WRITE (256), so each is a small write. */
const SMALL_BATCH = 100;

/** Memories the second session of the resumed fill adds. */
const RESUMED_EXTRA = 1000;

/** How the store is filled. */
export type EngramFill = 'batched' | 'small' | 'resumed' | 'bulk' | 'import';

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

/** add() of the corpus in calls of `batch` texts. */
async function addAll(e: Engram, texts: readonly string[], batch: number, log: (line: string) => void): Promise<void> {
  for (let i = 0; i < texts.length; i += batch) {
    await e.add(
      texts.slice(i, i + batch).map((content) => ({ role: 'user' as const, content })),
      { userId: 'u', dedupe: 'off' },
    );
    if ((i + batch) % 10_000 === 0) log(`engram: ${i + batch} added`);
  }
}

/** Deletes an IndexedDB database (the import's source store) and waits for it. */
async function deleteDatabase(name: string): Promise<void> {
  await requested(indexedDB.deleteDatabase(name));
}

const CONFIGS: Record<EngramFill, string> = {
  batched: `engram (this tree): add() of ${BATCH} texts per call with precomputed vectors, flush(), close(); HNSW M ${HNSW.m}, efConstruction ${HNSW.efConstruction}, efSearch ${HNSW.efSearch} (defaults); IndexedDB through Dexie, each add() one committed transaction`,
  small: `engram (this tree), filled by add() of ${SMALL_BATCH} texts per call (small writes, as an app adds), flush(), close(); otherwise as engram`,
  resumed: `engram (this tree), filled as engram-small, closed, then opened again for ${RESUMED_EXTRA} more memories (far from every query) by add() of ${SMALL_BATCH} per call, closed; the second session is timed too; otherwise as engram`,
  bulk: 'engram (this tree), filled by one add() of every text (the bulk path of add(), one transaction), flush(), close(); otherwise as engram',
  import: `engram (this tree), filled by Engram.import(mode replace) of an export of a store filled as engram is (add() of ${BATCH} per call; that store deleted before the import), flush(), close(); only the import and the flush are timed; otherwise as engram`,
};

/** engram as a peer, its store filled as `fill` says. */
export function engramPeer(fill: EngramFill = 'batched'): PeerSystem {
  const embedder = new TableEmbedder();
  let engram: Engram | undefined;
  let importMs: number | undefined;
  const ids = (results: { memory: string }[]): number[] => results.map((r) => documentOfText(r.memory));
  const fillStore = async (corpus: PeerCorpus, log: (line: string) => void): Promise<void> => {
    if (fill !== 'import') {
      const e = await Engram.open({ name: NAME, embedder });
      const batch = fill === 'bulk' ? corpus.texts.length : fill === 'batched' ? BATCH : SMALL_BATCH;
      await addAll(e, corpus.texts, batch, log);
      await e.flush();
      await e.close();
      if (fill === 'resumed') {
        // Texts no query shares a word with, vectors opposite to the corpus': they change no query's hits.
        const extra = corpus.vectors
          .slice(0, RESUMED_EXTRA)
          .map((v, i) => ({ text: `xq${i}zz`, vector: v.map((x) => -x) }));
        for (const { text, vector } of extra) embedder.table.set(text, vector);
        const again = await Engram.open({ name: NAME, embedder });
        await addAll(
          again,
          extra.map((x) => x.text),
          SMALL_BATCH,
          log,
        );
        await again.close();
      }
      return;
    }
    const source = await Engram.open({ name: SOURCE, embedder });
    await addAll(source, corpus.texts, BATCH, log);
    const file = await source.export();
    await source.close();
    await deleteDatabase(SOURCE);
    log(`engram: export of ${(file.size / 2 ** 20).toFixed(1)} MiB; importing`);
    const t0 = performance.now();
    const e = await Engram.import(file, { name: NAME, embedder, mode: 'replace' });
    await e.flush();
    await e.close();
    importMs = performance.now() - t0;
  };
  return {
    config: CONFIGS[fill],
    async ingest(corpus, log) {
      corpus.texts.forEach((t, i) => embedder.table.set(t, corpus.vectors[i]!));
      await fillStore(corpus, log);
    },
    ingestMs: () => importMs,
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
