/**
 * hnswlib-wasm 0.8.2 in bench/peers: the bare index the design first named,
 * no store of texts. addPoints() of every vector with its document index as
 * label (in batches of {@link BATCH}), writeIndex() into Emscripten's IDBFS
 * and a sync of that file system to IndexedDB: the durable state. Open =
 * load the module, sync IDBFS in, readIndex(). No hybrid search.
 */
import { loadHnswlib, syncFileSystem, type HierarchicalNSW } from 'hnswlib-wasm';
import { PEER_DIMS } from '../../util/peer-corpus.js';
import { BATCH, HNSW, type PeerSystem } from './system.js';

const FILE = 'bench-peers.dat';
const SEED = 100;

/** hnswlib-wasm as a peer. */
export function hnswlibPeer(): PeerSystem {
  let index: HierarchicalNSW | undefined;
  return {
    config: `hnswlib-wasm 0.8.2 (bare index, no texts): cosine space, initIndex(N, M ${HNSW.m}, efConstruction ${HNSW.efConstruction}), addPoints() of ${BATCH} per call, setEfSearch(${HNSW.efSearch}); writeIndex() to its IDBFS file system, then syncFS to IndexedDB`,
    async ingest(corpus, log) {
      const lib = await loadHnswlib();
      const built = new lib.HierarchicalNSW('cosine', PEER_DIMS, '');
      built.initIndex(corpus.vectors.length, HNSW.m, HNSW.efConstruction, SEED);
      for (let i = 0; i < corpus.vectors.length; i += BATCH) {
        const end = Math.min(corpus.vectors.length, i + BATCH);
        built.addPoints(
          corpus.vectors.slice(i, end),
          Array.from({ length: end - i }, (_, j) => i + j),
          false,
        );
        if ((i / BATCH) % 10 === 9) log(`hnswlib-wasm: ${end} added`);
      }
      await built.writeIndex(FILE);
      await syncFileSystem('write');
    },
    async open(n) {
      const lib = await loadHnswlib();
      await syncFileSystem('read');
      // Its sync callback can run before IDBFS has populated the file (seen under load): wait until the file is there.
      for (let waited = 0; !lib.EmscriptenFileSystemManager.checkFileExists(FILE); waited += 20) {
        if (waited > 30_000) throw new RangeError(`${FILE} not in IDBFS after 30 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      index = new lib.HierarchicalNSW('cosine', PEER_DIMS, '');
      await index.readIndex(FILE, n);
      index.setEfSearch(HNSW.efSearch);
    },
    async vector(query, _text, k) {
      await Promise.resolve();
      return index!.searchKnn(query, k, undefined).neighbors;
    },
  };
}
