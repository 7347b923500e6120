/**
 * The write side of the keyword index: one terms row per document (message or
 * memory), plus each corpus's statistics in `meta`.
 * The store keeps these rows in the same transaction as the document, so the
 * keyword index can never disagree with the text. How a text becomes terms (the
 * analyzer) is handed in by the engine; this file only lays the rows out.
 */
import type { MessageRow, Role, TermsRow } from './rows.js';

/** The corpus of conversation messages (stored as 'm' in terms rows). */
export const MESSAGE_CORPUS = 'm';
/** The corpus of long-term memories (stored as 'v' in terms rows). */
export const MEMORY_CORPUS = 'v';

/** Which document collection a terms row belongs to. */
export type Corpus = typeof MESSAGE_CORPUS | typeof MEMORY_CORPUS;

/** Document count and total length of a corpus, for BM25's length normalisation. */
export interface CorpusStats {
  docs: number;
  length: number;
}

/** The indexable terms of a text with their counts, and its length in terms. */
export interface TermCounts {
  terms: Map<string, number>;
  length: number;
}

/** Turns a text into the terms it is indexed under (the engine's analyzer). */
export type Analyzer = (text: string) => TermCounts;

/** Fields copied into a message's terms row so that message filters need no other read. */
export interface MessageTermsFields {
  threadId?: string;
  agentId?: string;
  userId?: string;
  role?: Role;
}

/** A terms row read back with readable names. */
export interface TermsEntry extends MessageTermsFields {
  corpus: Corpus;
  docId: string;
  /** Distinct terms, each prefixed with the corpus (see {@link termKey}). */
  keys: readonly string[];
  /** Count of each term, aligned with `keys`. */
  counts: readonly number[];
  /** Document length in indexed terms. */
  length: number;
}

/** The meta key under which a corpus's statistics live. */
export function statsKey(corpus: Corpus): string {
  return `stats:${corpus}`;
}

/** The indexed form of a term: prefixed with its corpus. */
export function termKey(corpus: Corpus, term: string): string {
  return `${corpus}:${term}`;
}

/** The filterable fields of a message, as its terms row keeps them. */
export function messageTermsFields(m: MessageRow): MessageTermsFields {
  return {
    threadId: m.threadId,
    role: m.role,
    ...(m.agentId === undefined ? {} : { agentId: m.agentId }),
    ...(m.userId === undefined ? {} : { userId: m.userId }),
  };
}

/**
 * The terms row of one document, or undefined when the text has no indexable
 * term (only stopwords or punctuation).
 */
export function termsRowOf(
  corpus: Corpus,
  id: string,
  counts: TermCounts,
  fields: MessageTermsFields = {},
): TermsRow | undefined {
  if (counts.terms.size === 0) return undefined;
  return {
    c: corpus,
    d: id,
    k: [...counts.terms.keys()].map((t) => termKey(corpus, t)),
    f: [...counts.terms.values()],
    n: counts.length,
    ...(fields.threadId === undefined ? {} : { t: fields.threadId }),
    ...(fields.agentId === undefined ? {} : { a: fields.agentId }),
    ...(fields.userId === undefined ? {} : { u: fields.userId }),
    ...(fields.role === undefined ? {} : { r: fields.role }),
  };
}

/** Reads a stored terms row under readable names; the only reader of its one-letter fields. */
export function readTermsRow(row: TermsRow): TermsEntry {
  return {
    corpus: row.c,
    docId: row.d,
    keys: row.k,
    counts: row.f,
    length: row.n,
    ...(row.t === undefined ? {} : { threadId: row.t }),
    ...(row.a === undefined ? {} : { agentId: row.a }),
    ...(row.u === undefined ? {} : { userId: row.u }),
    ...(row.r === undefined ? {} : { role: row.r }),
  };
}
