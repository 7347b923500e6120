/**
 * Search over the active scope's memories by meaning (vector), by keyword
 * (BM25), or both fused (hybrid, what the chat's recall uses), and BM25 over
 * the conversation log (MemGPT recall memory).
 */
import { isRecalled, retrievalProfile, type SearchMode } from '../lib/index.js';
import { recallThreshold } from '../ui/chat-panel.js';
import type { DemoContext } from './context.js';
import { byId, formatMs, formatTime, h, replace } from '../ui/dom.js';
import { searchResultItem } from '../ui/search-result-item.js';
import { renderModes } from '../ui/search-modes.js';
import { labelOf } from './settings.js';

type Mode = SearchMode | 'log';

const MODES: { mode: Mode; label: string; hint: string }[] = [
  {
    mode: 'vector',
    label: 'Meaning',
    hint: 'Cosine similarity between the embedding of the query and of each memory: finds paraphrases that share no words.',
  },
  { mode: 'keyword', label: 'Keyword', hint: 'BM25 over the words of each memory: exact terms only, no embedding.' },
  {
    mode: 'hybrid',
    label: 'Hybrid',
    hint: 'One relevance from both: the similarity, raised by keyword matches (the rarer and more complete, the more); the chat recalls this way.',
  },
  {
    mode: 'log',
    label: 'Chat log',
    hint: 'BM25 over every message of this user and agent, trimmed ones included (MemGPT recall memory).',
  },
];

const LIMIT = 5;

/** The "Search memories" card. */
export class SearchPanel {
  readonly #ctx: DemoContext;
  readonly #input = byId('search-input', 'input');
  readonly #button = byId('search-button', 'button');
  readonly #modes = byId('search-mode');
  readonly #hint = byId('search-hint');
  readonly #results = byId('search-results', 'ol');
  #mode: Mode = 'vector';
  #run = 0;

  constructor(ctx: DemoContext) {
    this.#ctx = ctx;
    byId('search-form', 'form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.search();
    });
    this.#renderModes();
  }

  /** Lets the user search (once the model is ready). */
  enable(): void {
    this.#input.disabled = false;
    this.#button.disabled = false;
  }

  /** Runs the current query again (after a change in the store or the scope). */
  async render(): Promise<void> {
    byId('search-scope').textContent = `in ${labelOf(this.#ctx.scope.userId)} × ${labelOf(this.#ctx.scope.agentId)}`;
    await this.search();
  }

  /** Searches with the current query and mode. */
  async search(): Promise<void> {
    const query = this.#input.value.trim();
    const run = ++this.#run;
    if (query === '') {
      replace(this.#results);
      this.#results.dataset['state'] = 'idle';
      return;
    }
    const { engram, scope } = this.#ctx;
    this.#results.dataset['state'] = 'searching';
    const t0 = performance.now();
    let items: HTMLLIElement[];
    try {
      if (this.#mode === 'log') {
        const { results, total } = await engram.recall.textSearch(query, {
          userId: scope.userId,
          agentId: scope.agentId,
          count: LIMIT,
        });
        items = results.map((r, i) =>
          h(
            'li',
            { class: 'result', attrs: { 'data-rank': String(i + 1) } },
            h('span', { class: `role ${r.role}` }, r.role),
            h('span', { class: 'text' }, r.content),
            h('span', { class: 'meta muted small' }, formatTime(Date.parse(r.timestamp))),
          ),
        );
        if (total > results.length)
          items.push(h('li', { class: 'muted small' }, `${total - results.length} more match`));
      } else {
        const mode = this.#mode;
        const { results } = await engram.search(query, {
          userId: scope.userId,
          agentId: scope.agentId,
          mode,
          limit: LIMIT,
        });
        const minScore = await recallThreshold(engram);
        const profile = retrievalProfile((await engram.ready()).embedderId);
        // Recall is a hybrid search: there a result is judged as recall judges it (its evidence too).
        items = results.map((r) =>
          searchResultItem(r, mode, { minScore, ...(mode === 'hybrid' ? { below: !isRecalled(r, profile) } : {}) }),
        );
      }
    } catch (e) {
      this.#ctx.showError(e);
      items = [];
    }
    if (run !== this.#run) return; // a newer search has started
    const ms = performance.now() - t0;
    replace(
      this.#results,
      ...(items.length === 0
        ? [h('li', { class: 'empty muted small' }, `No match in ${labelOf(scope.userId)} × ${labelOf(scope.agentId)}.`)]
        : items),
      h('li', { class: 'took muted small' }, `${items.length === 0 ? 'searched' : 'found'} in ${formatMs(ms)}`),
    );
    this.#results.dataset['state'] = 'done';
  }

  #renderModes(): void {
    renderModes(this.#modes, MODES, this.#mode, (mode) => {
      this.#mode = mode;
      this.#renderModes();
      void this.search();
    });
    this.#hint.textContent = MODES.find((m) => m.mode === this.#mode)?.hint ?? '';
  }
}
