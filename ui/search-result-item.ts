/**
 * One memory search result with its score, as both the demo page and the
 * desktop renderer show it: the text, a bar scaled to the best score, and the
 * score named by what produced it (cosine, BM25, or fused RRF with cosine).
 */
import type { SearchMode, SearchResult } from '../lib/index.js';
import { h } from './dom.js';

/** The score as people read it, e.g. "cosine 0.82" or "RRF 0.033 · cosine 0.71". */
export function scoreLabel(mode: SearchMode, result: Pick<SearchResult, 'score' | 'similarity'>): string {
  if (mode === 'vector') return `cosine ${result.score.toFixed(2)}`;
  if (mode === 'keyword') return `BM25 ${result.score.toFixed(2)}`;
  return `RRF ${result.score.toFixed(3)} · cosine ${(result.similarity ?? 0).toFixed(2)}`;
}

/** Options of {@link searchResultItem}. */
export interface SearchResultItemOptions {
  /** Results under this cosine similarity are dimmed (vector and hybrid modes). */
  minSimilarity?: number;
  /** The highest score of the result list, to scale the bar of BM25 and RRF scores. */
  maxScore: number;
  /** Called when the result is clicked (the desktop opens the memory). */
  onOpen?: (id: string) => void;
}

/**
 * A `<li class="result">` for one search result.
 * @example
 * list.append(...results.map((r) => searchResultItem(r, 'hybrid', { maxScore })))
 */
export function searchResultItem(result: SearchResult, mode: SearchMode, options: SearchResultItemOptions): HTMLLIElement {
  const below = options.minSimilarity !== undefined && mode !== 'keyword' && (result.similarity ?? 1) < options.minSimilarity;
  const width = mode === 'vector' ? Math.max(0, result.score) : result.score / Math.max(options.maxScore, 1e-9);
  const bar = h('span', { class: 'fill' });
  bar.style.width = `${(Math.min(1, width) * 100).toFixed(0)}%`;
  const open = options.onOpen;
  return h(
    'li',
    {
      class: `result${below ? ' below' : ''}${open === undefined ? '' : ' clickable'}`,
      attrs: {
        'data-id': result.id,
        'data-score': String(result.score),
        title: below && options.minSimilarity !== undefined ? `below the recall threshold (${options.minSimilarity})` : undefined,
        tabindex: open === undefined ? undefined : '0',
      },
      on:
        open === undefined
          ? {}
          : {
              click: () => {
                open(result.id);
              },
              keydown: (event) => {
                if (event.key === 'Enter') open(result.id);
              },
            },
    },
    h('span', { class: 'text' }, result.memory),
    h('span', { class: 'scorebar' }, bar),
    h('span', { class: 'score' }, scoreLabel(mode, result)),
  );
}
