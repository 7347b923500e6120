/**
 * One memory search result with its score, as both the demo page and the
 * desktop renderer show it: the text, a bar as long as the relevance (in
 * [0, 1] in every mode), and the scores that made it (cosine, BM25).
 */
import type { SearchMode, SearchResult } from '../lib/index.js';
import { h } from './dom.js';

/** The score as people read it, e.g. "cosine 0.82" or "relevance 0.74 · cosine 0.71 · BM25 2.10". */
export function scoreLabel(
  mode: SearchMode,
  result: Pick<SearchResult, 'score' | 'similarity' | 'keywordScore'>,
): string {
  if (mode === 'vector') return `cosine ${result.score.toFixed(2)}`;
  if (mode === 'keyword') return `relevance ${result.score.toFixed(2)} · BM25 ${(result.keywordScore ?? 0).toFixed(2)}`;
  const bm25 = result.keywordScore === undefined ? '' : ` · BM25 ${result.keywordScore.toFixed(2)}`;
  return `relevance ${result.score.toFixed(2)} · cosine ${(result.similarity ?? 0).toFixed(2)}${bm25}`;
}

/** Options of {@link searchResultItem}. */
export interface SearchResultItemOptions {
  /** Results under this relevance are dimmed and say why on hover. */
  minScore?: number;
  /** Whether the result falls under the recall cut, when the caller judges more than the score (isRecalled). */
  below?: boolean;
  /** Called when the result is clicked or Enter is pressed on it (the desktop opens the memory). */
  onOpen?: (id: string) => void;
}

/**
 * A `<li class="result">` for one search result.
 * @example
 * list.append(...results.map((r) => searchResultItem(r, 'hybrid', { minScore: 0.35 })))
 */
export function searchResultItem(
  result: SearchResult,
  mode: SearchMode,
  options: SearchResultItemOptions = {},
): HTMLLIElement {
  const { minScore, onOpen } = options;
  const below = options.below ?? (minScore !== undefined && result.score < minScore);
  const bar = h('span', { class: 'fill' });
  bar.style.width = `${(Math.min(1, Math.max(0, result.score)) * 100).toFixed(0)}%`;
  return h(
    'li',
    {
      class: `result${below ? ' below' : ''}${onOpen === undefined ? '' : ' clickable'}`,
      attrs: {
        'data-id': result.id,
        'data-score': String(result.score),
        title: below ? `below the recall threshold (${minScore})` : undefined,
        tabindex: onOpen === undefined ? undefined : '0',
      },
      on:
        onOpen === undefined
          ? {}
          : {
              click: () => {
                onOpen(result.id);
              },
              keydown: (event) => {
                if (event.key === 'Enter') onOpen(result.id);
              },
            },
    },
    h('span', { class: 'text' }, result.memory),
    h('span', { class: 'scorebar' }, bar),
    h('span', { class: 'score' }, scoreLabel(mode, result)),
  );
}
