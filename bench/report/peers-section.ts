/**
 * The peers section of bench/results/REPORT.md (bench/peers.ts): each
 * system's configuration, the table per size with a ratio to engram in every
 * row, and for every row a peer still wins, by how much and why.
 */
import { BASELINE, peerTable, peerWins, type PeerFigures, type PeerWin } from '../util/peer-table.js';
import { markdownTable } from './goals.js';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One size of bench/peers' result file. */
interface PeerSize {
  n: number;
  queries: number;
  figures: PeerFigures[];
}

const isPeerSize = (v: unknown): v is PeerSize =>
  isRecord(v) &&
  typeof v['n'] === 'number' &&
  Array.isArray(v['figures']) &&
  v['figures'].every((f) => isRecord(f) && typeof f['system'] === 'string');

/**
 * Why a peer beats engram on a row, by system and the row's first words;
 * what is known of how each system does the work (its configuration), not a
 * figure (the figures are in the table).
 */
const WHY: Record<string, string> = {
  'hnswlib-wasm|insert':
    'the bare index keeps no texts, rows, change log or keyword postings and writes one file at the end, while engram commits each batch of 1,000 (rows, vectors, change log, keyword terms) in an IndexedDB transaction and snapshots the index at flush()',
  'hnswlib-wasm|vector':
    "it is the same HNSW in one WebAssembly call that returns labels; engram's search() also looks the query's vector up through its embedder, checks scope and tombstones, and reads the ten rows from IndexedDB to return their texts and metadata",
  'hnswlib-wasm|new process': 'it reads one index file and has no rows or keyword index to open',
  'hnswlib-wasm|JS heap': 'it holds the graph and vectors only: no keyword index, no row cache',
  'orama|insert':
    "Orama inserts into in-memory structures and writes one structured-clone snapshot at the end: nothing is durable before that write, and a crash during the insert loses every document, while engram commits each batch of 1,000 as rows (per memory its row, vector, keyword terms and change-log entry). Those rows written with IndexedDB alone, with no engine at all, take longer than Orama's whole insert and save (the idb-floor column): no engine can meet Orama here in this layout. The idb-floor-vectors and idb-floor-blocks columns are the floors of two layouts engram does not have (vectors, or vectors, terms and change-log entries, one row per batch)",
  'orama|first hybrid':
    "Orama's open (counted in its open-to-first-answer row) restores its whole BM25 index from the snapshot before the first query; engram opens without it and loads its keyword postings from IndexedDB at the first keyword or hybrid query",
  'orama|JS heap': 'Orama holds every document and vector as JavaScript objects',
  'pglite|insert':
    "PGlite builds its HNSW once over all rows after the load (pgvector's advice for bulk loads) and flushes its file system to IndexedDB once at the end (relaxedDurability)",
  'pglite|vector':
    "pgvector's HNSW runs inside Postgres in one call and returns ids; engram's search() adds its per-query work (the query vector through the embedder, scope, reading the ten rows)",
  'pglite|first hybrid':
    'PGlite loads its whole file system, GIN full-text index included, into memory at open (counted in its open-to-first-answer row); engram loads its keyword postings from IndexedDB at the first keyword or hybrid query',
  'pglite|hybrid': 'its full-text side is a GIN index lookup inside Postgres',
  'entitydb|insert':
    'EntityDB writes each row as given (one small IndexedDB transaction per document) and builds no index, history, change log or keyword terms',
  'orama|vector':
    "its vector search is a brute-force scan in JavaScript over arrays held in memory, with no I/O per query: at this size the scan costs less than engram's per-query work (the query vector through the embedder, scope, reading the ten rows from IndexedDB); the scan grows linearly with N",
  'orama|hybrid':
    'Orama answers wholly from memory (documents, BM25 index and vectors in the JS heap: its memory row); engram reads the rows it returns from IndexedDB',
  'orama|recall': 'its vector search is an exact scan: recall 1 by construction',
  'entitydb|recall': 'its vector search is an exact scan: recall 1 by construction',
  'pglite|recall':
    'pgvector builds its own HNSW graph (another insertion order and other random levels) at the same M, efConstruction and efSearch',
  'hnswlib-wasm|recall':
    'it builds its own HNSW graph (another insertion order and other random levels) at the same M, efConstruction and efSearch',
  'entitydb|JS heap':
    'EntityDB holds nothing between queries: each query reads every row from IndexedDB (its vector latency is that cost)',
  'entitydb|new process':
    'it has nothing to load at open: each query reads every row from IndexedDB instead (its vector latency is that cost)',
};

function why(win: PeerWin): string {
  const key = Object.keys(WHY).find((k) => {
    const [system, start] = k.split('|') as [string, string];
    return system === win.system && win.metric.startsWith(start);
  });
  return key === undefined ? 'see its configuration above' : WHY[key]!;
}

const value = (metric: string, v: number): string =>
  metric.startsWith('recall') ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0);

/** The section's Markdown lines, from bench/results/peers.json. */
export function peersSection(json: unknown): string[] {
  const sizes =
    isRecord(json) && Array.isArray(json['sizes']) && json['sizes'].every(isPeerSize) ? json['sizes'] : undefined;
  if (sizes === undefined || sizes.length === 0) return ['_The result file has a shape this report does not know._'];
  const rounds = isRecord(json) && typeof json['rounds'] === 'number' ? json['rounds'] : 1;
  const entityQueries = isRecord(json) && typeof json['entityQueries'] === 'number' ? json['entityQueries'] : undefined;
  const first = sizes[0]!;
  const body = [
    'engram against the libraries people would pick instead, on one corpus: seeded 384-d unit vectors (clustered) with a short chat-like text each, and queries (a vector near the data and two words a person would type), ' +
      'all precomputed, so no embedding is timed; the same Chromium, a fresh browser profile (its own directory) per system and round, the system order rotated between rounds. ' +
      'Insert: every document to a durable state in IndexedDB, as each system persists (configurations below). Then a new browser process on that profile: open from the persisted state to the first vector answer, the first hybrid query, ' +
      `${first.queries} vector and hybrid queries one by one (p50/p95 over every query of every round${entityQueries === undefined ? '' : `; EntityDB answers ${entityQueries}, at seconds each`}), recall@10 against the exact top-10, ` +
      "then the vector and the hybrid queries once more (the second passes of engram's fill table: IndexedDB's first few hundred reads after a reopen are slower), " +
      'and the memory the open system holds over the page before it opened (V8 heap plus ArrayBuffer backing stores, WebAssembly memories among them, after a collection: DevTools Runtime.getHeapUsage). ' +
      `Times of insert and open are medians of ${rounds} round(s). Every request a page makes is checked to go to the bench's own server: every WASM file and extension comes from node_modules, nothing from a CDN. ` +
      "Each cell: the figure, then in brackets its ratio to engram's (above 1x: larger than engram's, i.e. slower or bigger; for recall, better).",
    '',
    '#### Configurations',
    '',
    ...first.figures.map((f) => `- **${f.system}**: ${f.config}`),
  ];
  for (const size of sizes) {
    const rows = peerTable(size.figures, size.n);
    const columns = Object.keys(rows[0] ?? {});
    body.push(
      '',
      markdownTable(
        columns,
        rows.map((r) => columns.map((c) => String(r[c] ?? ''))),
        columns.map((_, i) => (i === 0 ? 'l' : 'r')),
      ),
    );
  }
  const wins = sizes.flatMap((s) => peerWins(s.figures).map((w) => ({ n: s.n, ...w })));
  body.push('', '#### Where a peer still wins', '');
  if (wins.length === 0) body.push(`No peer beats ${BASELINE} on any row.`);
  for (const w of wins) {
    body.push(
      `- N = ${w.n.toLocaleString('en-US')}, **${w.system}**, ${w.metric}: ${value(w.metric, w.peer)} against engram's ${value(w.metric, w.engram)}, ${w.factor.toFixed(2)}x better. Why: ${why(w)}.`,
    );
  }
  return body;
}
