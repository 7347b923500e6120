/**
 * The memories view: a filter bar, a hybrid / meaning / keyword search box
 * with scores, the virtualised list of every matching memory (newest first),
 * and the detail pane (history, edit, delete, add).
 */
import type { MemoryItem, SearchMode } from '../../lib/index.js';
import { formatMs, formatTime, h, replace } from '../../ui/dom.js';
import { searchResultItem } from '../../ui/search-result-item.js';
import { renderModes } from '../../ui/search-modes.js';
import type { AppContext, View } from './app-context.js';
import { MemoryDetail } from './memory-detail.js';
import { findMatches } from './memory-matches.js';
import { FilterBar, TIER_LABELS, toMemoryFilters, type FilterValues } from './memory-filters.js';
import { VirtualList } from './virtual-list.js';

const ROW_HEIGHT = 58;
const MODES: { mode: SearchMode; label: string }[] = [
  { mode: 'hybrid', label: 'Hybrid' },
  { mode: 'vector', label: 'Meaning' },
  { mode: 'keyword', label: 'Keyword' },
];

function memoryRow(memory: MemoryItem, onOpen: (id: string) => void, selected: boolean): HTMLElement {
  const scope = [
    memory.userId === undefined ? null : `user ${memory.userId}`,
    memory.agentId === undefined ? null : `agent ${memory.agentId}`,
    memory.projectId === undefined ? null : `project ${memory.projectId}`,
  ]
    .filter((s) => s !== null)
    .join(' · ');
  return h(
    'div',
    {
      class: `memory-row${selected ? ' selected' : ''}`,
      attrs: { 'data-id': memory.id, role: 'button', tabindex: '0' },
      on: {
        click: () => {
          onOpen(memory.id);
        },
        keydown: (event) => {
          if (event.key === 'Enter') onOpen(memory.id);
        },
      },
    },
    h('span', { class: 'text' }, memory.memory),
    h(
      'span',
      { class: 'meta muted small' },
      h('span', { class: `tier tier-${memory.tier}` }, TIER_LABELS[memory.tier]),
      ` ${scope === '' ? 'no scope' : scope} · ${formatTime(memory.createdAt)} · v${memory.version}`,
    ),
  );
}

/** The memories view. */
export class MemoriesView implements View {
  readonly name = 'memories';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #detail: MemoryDetail;
  readonly #filters: FilterBar;
  readonly #list: VirtualList<MemoryItem>;
  readonly #query = h('input', {
    attrs: {
      type: 'search',
      placeholder: 'Search memories by meaning or keyword…',
      'data-testid': 'search-input',
      'aria-label': 'Search',
    },
  });
  readonly #modes = h('div', { class: 'segmented', attrs: { role: 'radiogroup', 'aria-label': 'Search mode' } });
  readonly #results = h('ol', { class: 'results', attrs: { 'data-testid': 'search-results', 'data-state': 'idle' } });
  readonly #count = h('span', { attrs: { 'data-testid': 'memory-total' } }, '…');
  readonly #heading = h('span', { class: 'muted small', attrs: { 'data-testid': 'list-heading' } });
  /** What an empty store shows instead of the list: the first things to do. */
  readonly #welcome: HTMLElement;
  #mode: SearchMode = 'hybrid';
  #run = 0;
  /** The latest reload: an earlier one that answers after it (other filters) leaves the list alone. */
  #reload = 0;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#detail = new MemoryDetail(ctx);
    this.#filters = new FilterBar(() => {
      void this.reload();
    });
    const listEl = h('div', { class: 'list', attrs: { 'data-testid': 'memory-list' } });
    this.#list = new VirtualList<MemoryItem>(listEl, {
      rowHeight: ROW_HEIGHT,
      renderRow: (m) => memoryRow(m, (id) => void this.open(id), m.id === this.#detail.shownId),
      onError: (e) => {
        ctx.showError(e);
      },
      emptyText: 'No memories here. Add one, import an export file, or loosen the filters.',
    });
    const step = (label: string, testid: string, action: () => void, why: string): HTMLLIElement =>
      h(
        'li',
        {},
        h(
          'button',
          {
            class: 'link',
            attrs: { type: 'button', 'data-testid': testid },
            on: {
              click: () => {
                action();
              },
            },
          },
          label,
        ),
        h('span', { class: 'muted' }, ` ${why}`),
      );
    this.#welcome = h(
      'div',
      { class: 'welcome', attrs: { 'data-testid': 'empty-store', hidden: true } },
      h('h2', {}, 'Nothing remembered yet'),
      h(
        'p',
        { class: 'muted' },
        'engram keeps what you and your agents want remembered, on this device only. To begin:',
      ),
      h(
        'ol',
        {},
        step(
          'Add a memory',
          'welcome-add',
          () => {
            this.#openAdd();
          },
          'by hand: a fact, a preference, a name.',
        ),
        step(
          'Connect an agent',
          'welcome-agents',
          () => {
            ctx.navigate('agents');
          },
          'so that Claude Desktop, Cursor or a script saves and recalls memories here, over MCP.',
        ),
        step(
          'Import an export file',
          'welcome-import',
          () => {
            ctx.navigate('transfer');
          },
          'from engram on another device, or a backup.',
        ),
      ),
    );
    const searchForm = h(
      'form',
      { class: 'searchbar', attrs: { 'data-testid': 'search-form', role: 'search' } },
      this.#query,
      this.#modes,
      h('button', { class: 'primary', attrs: { type: 'submit', 'data-testid': 'search-button' } }, 'Search'),
      h(
        'button',
        { attrs: { type: 'button', 'data-testid': 'search-clear' }, on: { click: () => void this.#clearSearch() } },
        'Clear',
      ),
    );
    searchForm.addEventListener('submit', (event) => {
      event.preventDefault();
      this.#newSearch();
    });
    const add = h(
      'button',
      {
        class: 'primary',
        attrs: { type: 'button', 'data-testid': 'add-open' },
        on: {
          click: () => {
            this.#openAdd();
          },
        },
      },
      '+ Add memory',
    );
    this.root = h(
      'section',
      { class: 'view memories-view', attrs: { 'data-view': 'memories' } },
      h('header', { class: 'view-head' }, h('h1', {}, 'Memories ', h('span', { class: 'count' }, this.#count)), add),
      searchForm,
      this.#filters.root,
      h(
        'div',
        { class: 'split' },
        h(
          'div',
          { class: 'list-pane card' },
          h('div', { class: 'list-head' }, this.#heading),
          this.#welcome,
          this.#results,
          listEl,
        ),
        this.#detail.root,
      ),
    );
    this.#renderModes();
  }

  async show(): Promise<void> {
    await this.reload();
  }

  /** Re-reads the list (and the search, when a query is active) keeping the scroll position. */
  async reload(keepScroll = false): Promise<void> {
    const filters = toMemoryFilters(this.#filters.values());
    const engram = this.#ctx.engram;
    const reload = ++this.#reload;
    const [{ total }, all] = await Promise.all([engram.getAll({ filters, limit: 1 }), engram.getAll({ limit: 1 })]);
    if (reload !== this.#reload) return;
    this.#count.textContent = String(all.total);
    this.#welcome.hidden = all.total > 0;
    this.#list.setSource(
      { total, load: (offset, limit) => engram.getAll({ filters, offset, limit }).then((r) => r.results) },
      keepScroll,
    );
    if (this.#query.value.trim() === '') {
      this.#heading.textContent = this.#listHeading(total, all.total);
      this.#list.root.hidden = all.total === 0;
    } else await this.search();
  }

  /** Opens a memory in the detail pane. */
  async open(id: string): Promise<void> {
    await this.#detail.show(id);
    this.#list.redraw();
  }

  /** Refreshes after a change elsewhere (an edit, a delete, an import). */
  async refresh(): Promise<void> {
    await this.reload(true);
    const shown = this.#detail.shownId;
    if (shown !== undefined) await this.#detail.show(shown);
  }

  /** Runs the query in the current mode within the filters. */
  async search(): Promise<void> {
    const query = this.#query.value.trim();
    const run = ++this.#run;
    if (query === '') {
      this.#results.dataset['state'] = 'idle';
      replace(this.#results);
      this.#list.root.hidden = false;
      return;
    }
    const mode = this.#mode;
    this.#results.dataset['state'] = 'searching';
    const started = performance.now();
    try {
      const { matches, weaker, threshold, needsEvidence } = await findMatches(this.#ctx.engram, query, {
        mode,
        filters: toMemoryFilters(this.#filters.values()),
      });
      const took = performance.now() - started;
      if (run !== this.#run) return;
      // A result is a match as recall decides (memory-matches.ts): hybrid fills its limit with whatever is nearest,
      // and under a per-query fusion the nearest scores high whatever it says. The rest is listed on request, dimmed.
      const onOpen = (id: string): void => void this.open(id);
      this.#list.root.hidden = true;
      this.#welcome.hidden = true;
      this.#heading.textContent = `${matches.length === 0 ? 'No match' : `${matches.length} best match${matches.length === 1 ? '' : 'es'}`} for “${query}” · ${MODES.find((m) => m.mode === mode)?.label ?? mode} · ${formatMs(took)}`;
      const more = h(
        'li',
        { class: 'more' },
        h(
          'button',
          {
            class: 'link',
            attrs: { type: 'button', 'data-testid': 'search-show-weaker' },
            on: {
              click: () => {
                more.replaceWith(
                  ...weaker.map((r) => searchResultItem(r, mode, { onOpen, minScore: threshold, below: true })),
                );
              },
            },
          },
          `Show ${weaker.length} weaker result${weaker.length === 1 ? '' : 's'} (${mode === 'vector' ? 'cosine' : 'relevance'} below ${threshold.toFixed(2)}${needsEvidence ? ', or no keyword match and a low cosine' : ''})`,
        ),
      );
      replace(
        this.#results,
        ...matches.map((r) => searchResultItem(r, mode, { onOpen })),
        weaker.length === 0 || mode === 'keyword' ? null : more,
      );
    } catch (e) {
      this.#ctx.showError(e);
      replace(this.#results);
    }
    this.#results.dataset['state'] = 'done';
  }

  #listHeading(listed: number, all: number): string {
    const values: FilterValues = this.#filters.values();
    const filtered = Object.values(values).some((v) => v !== '');
    return filtered ? `${listed} of ${all} match the filters · newest first` : `${all} memories · newest first`;
  }

  /** A search the user started (submit, mode): the detail pane no longer shows what was picked before it. */
  #newSearch(): void {
    if (this.#query.value.trim() !== '' && this.#detail.shownId !== undefined) {
      this.#detail.empty('Pick a result to see its details and history.');
      this.#list.redraw();
    }
    void this.search();
  }

  async #clearSearch(): Promise<void> {
    this.#query.value = '';
    await this.search();
    await this.reload(true);
  }

  #openAdd(): void {
    const values = this.#filters.values();
    this.#detail.showAdd({ userId: values.userId.trim(), agentId: values.agentId.trim() });
  }

  #renderModes(): void {
    renderModes(this.#modes, MODES, this.#mode, (mode) => {
      this.#mode = mode;
      this.#renderModes();
      this.#newSearch();
    });
  }
}
