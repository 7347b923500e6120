/**
 * The keyword index belongs to the analyzer that built it. The store records
 * the analyzer's id in `meta` (like the embedder's); when a store is opened
 * with another analyzer (a new version of the analysis, another language), its
 * terms rows and corpus statistics are rebuilt from the messages and memories
 * in one transaction, so keyword search never mixes two analyses.
 */
import type { Analyzer } from '../../search/analyze.js';
import {
  MEMORY_CORPUS,
  MESSAGE_CORPUS,
  messageTermsFields,
  statsKey,
  termsRowOf,
  type Corpus,
  type CorpusStats,
  type MessageTermsFields,
} from '../../store/keyword-terms.js';
import type { TermsRow } from '../../store/rows.js';
import type { EngramDb } from '../../store/schema.js';
import { storeError } from '../../store/store-error.js';

/** The meta key of the analyzer record. */
export const ANALYZER_KEY = 'analyzer';

/** The analyzer a store's keyword index was built with. */
export interface AnalyzerRecord {
  id: string;
}

/**
 * Makes the keyword index match `analyzer`: records it on a store that has
 * none, rebuilds every terms row when the recorded one differs. Returns
 * whether a rebuild ran. A store written before analyzers were recorded is
 * rebuilt once.
 */
export async function ensureKeywordIndex(db: EngramDb, analyzer: Analyzer): Promise<boolean> {
  try {
    // The usual open: the analyzer is the recorded one, found by one read (no write transaction over four tables).
    if (((await db.meta.get(ANALYZER_KEY))?.value as AnalyzerRecord | undefined)?.id === analyzer.id) return false;
    return await db.transaction('rw', [db.messages, db.memories, db.terms, db.meta], async () => {
      const recorded = (await db.meta.get(ANALYZER_KEY))?.value as AnalyzerRecord | undefined;
      if (recorded?.id === analyzer.id) return false;
      const empty =
        (await db.terms.count()) === 0 && (await db.messages.count()) === 0 && (await db.memories.count()) === 0;
      if (!empty) await rebuildTerms(db, analyzer);
      await db.meta.put({ key: ANALYZER_KEY, value: { id: analyzer.id } satisfies AnalyzerRecord });
      return !empty;
    });
  } catch (e) {
    throw storeError(e, `rebuilding the keyword index for analyzer "${analyzer.id}"`);
  }
}

const BATCH = 2000;

/** Replaces every terms row and both corpora's statistics (inside the caller's transaction). */
async function rebuildTerms(db: EngramDb, analyzer: Analyzer): Promise<void> {
  await db.terms.clear();
  const stats = { [MESSAGE_CORPUS]: { docs: 0, length: 0 }, [MEMORY_CORPUS]: { docs: 0, length: 0 } } satisfies Record<
    string,
    CorpusStats
  >;
  let batch: TermsRow[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length > 0) await db.terms.bulkPut(batch);
    batch = [];
  };
  const messages = await db.messages.toArray();
  for (const m of messages) {
    const row = countedTermsRow(analyzer, MESSAGE_CORPUS, stats[MESSAGE_CORPUS], {
      id: m.id,
      text: m.content,
      fields: messageTermsFields(m),
    });
    if (row !== undefined) batch.push(row);
    if (batch.length >= BATCH) await flush();
  }
  const memories = await db.memories.toArray();
  for (const m of memories) {
    if (m.deletedAt !== undefined) continue;
    const row = countedTermsRow(analyzer, MEMORY_CORPUS, stats[MEMORY_CORPUS], { id: m.id, text: m.text });
    if (row !== undefined) batch.push(row);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  await db.meta.bulkPut([
    { key: statsKey(MESSAGE_CORPUS), value: stats[MESSAGE_CORPUS] },
    { key: statsKey(MEMORY_CORPUS), value: stats[MEMORY_CORPUS] },
  ]);
}

/** The terms row of one document (undefined when it has no terms), its length counted into its corpus's `stats`. */
function countedTermsRow(
  analyzer: Analyzer,
  corpus: Corpus,
  stats: CorpusStats,
  doc: { id: string; text: string; fields?: MessageTermsFields },
): TermsRow | undefined {
  const counts = analyzer.document(doc.text);
  stats.docs += 1;
  stats.length += counts.length;
  return termsRowOf(corpus, doc.id, counts, doc.fields);
}
