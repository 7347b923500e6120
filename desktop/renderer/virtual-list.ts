/**
 * A virtualised list: only the rows in view (plus a few) exist in the DOM, and
 * rows are read a page at a time as the user scrolls, so a list of 100k
 * memories costs as much to show as a list of 50.
 */
import { h, replace } from '../../ui/dom.js';

/** Pause in scrolling after which the pages in view are read. */
const LOAD_DELAY_MS = 80;

/** The rows [start, end) to render for a scroll position. */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  total: number,
  overscan: number,
): { start: number; end: number } {
  if (total <= 0 || rowHeight <= 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const count = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, Math.min(total - 1, first) - overscan);
  const end = Math.min(total, first + count + overscan);
  return { start, end: Math.max(start, end) };
}

/** The pages [first, last] that hold rows [start, end). */
export function pagesFor(start: number, end: number, pageSize: number): number[] {
  if (end <= start) return [];
  const pages: number[] = [];
  for (let p = Math.floor(start / pageSize); p <= Math.floor((end - 1) / pageSize); p++) pages.push(p);
  return pages;
}

/** Where the rows come from: how many there are and a page reader. */
export interface RowSource<T> {
  total: number;
  load(offset: number, limit: number): Promise<T[]>;
}

/** Options of a {@link VirtualList}. */
export interface VirtualListOptions<T> {
  /** Height of every row in CSS pixels. */
  rowHeight: number;
  /** Rows read per page. @default 200 */
  pageSize?: number;
  /** Rows rendered beyond the viewport on each side. @default 8 */
  overscan?: number;
  /** Builds a row's element. */
  renderRow(item: T, index: number): HTMLElement;
  /** Called when a page fails to load. */
  onError(error: unknown): void;
  /** Shown when the source is empty. */
  emptyText: string;
}

/**
 * A scrolling list over a RowSource.
 * @example
 * const list = new VirtualList(el, { rowHeight: 56, renderRow: (m) => h('div', {}, m.memory), onError })
 * list.setSource({ total, load: (offset, limit) => engram.getAll({ offset, limit }).then((r) => r.results) })
 */
export class VirtualList<T> {
  readonly root: HTMLElement;
  readonly #options: Required<Omit<VirtualListOptions<T>, 'renderRow' | 'onError' | 'emptyText'>> &
    Pick<VirtualListOptions<T>, 'renderRow' | 'onError' | 'emptyText'>;
  readonly #spacer = h('div', { class: 'vlist-spacer' });
  readonly #rows = h('div', { class: 'vlist-rows' });
  #source: RowSource<T> = { total: 0, load: () => Promise.resolve([]) };
  #pages = new Map<number, T[]>();
  #loading = new Set<number>();
  #generation = 0;
  #frame = 0;
  #loadTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(root: HTMLElement, options: VirtualListOptions<T>) {
    this.root = root;
    this.#options = { pageSize: 200, overscan: 8, ...options };
    root.classList.add('vlist');
    replace(root, this.#spacer, this.#rows);
    root.addEventListener('scroll', () => {
      this.#schedule();
    });
    new ResizeObserver(() => {
      this.#schedule();
    }).observe(root);
  }

  /** Number of rows in the source. */
  get total(): number {
    return this.#source.total;
  }

  /** Rows currently in the DOM. */
  get renderedRows(): number {
    return this.#rows.childElementCount;
  }

  /** Shows a new source from the top (or keeps the scroll position with `keepScroll`). */
  setSource(source: RowSource<T>, keepScroll = false): void {
    this.#source = source;
    this.#pages = new Map();
    this.#loading = new Set();
    this.#generation++;
    this.#spacer.style.height = `${source.total * this.#options.rowHeight}px`;
    if (!keepScroll) this.root.scrollTop = 0;
    this.#render();
  }

  /** Renders the visible rows again from the loaded pages (after a selection change). */
  redraw(): void {
    this.#render();
  }

  /** The loaded row at `index`, if its page is in memory. */
  itemAt(index: number): T | undefined {
    return this.#pages.get(Math.floor(index / this.#options.pageSize))?.[index % this.#options.pageSize];
  }

  #schedule(): void {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#render();
    });
  }

  #render(): void {
    const { rowHeight, overscan, pageSize, renderRow } = this.#options;
    const { start, end } = visibleRange(
      this.root.scrollTop,
      this.root.clientHeight,
      rowHeight,
      this.#source.total,
      overscan,
    );
    const rows: HTMLElement[] = [];
    if (this.#source.total === 0) rows.push(h('p', { class: 'vlist-empty muted' }, this.#options.emptyText));
    for (let i = start; i < end; i++) {
      const item = this.itemAt(i);
      const row = item === undefined ? h('div', { class: 'vlist-row loading muted small' }, '…') : renderRow(item, i);
      row.classList.add('vlist-row');
      row.style.top = `${i * rowHeight}px`;
      row.style.height = `${rowHeight}px`;
      row.dataset['index'] = String(i);
      rows.push(row);
    }
    replace(this.#rows, ...rows);
    // Pages are read once scrolling pauses, so a fast fling through 100k rows
    // does not queue a read for every page it passes.
    clearTimeout(this.#loadTimer);
    const missing = pagesFor(start, end, pageSize).filter((page) => !this.#pages.has(page) && !this.#loading.has(page));
    if (missing.length === 0) return;
    this.#loadTimer = setTimeout(
      () => {
        for (const page of missing) void this.#load(page);
      },
      this.#pages.size === 0 ? 0 : LOAD_DELAY_MS,
    );
  }

  async #load(page: number): Promise<void> {
    const generation = this.#generation;
    this.#loading.add(page);
    try {
      const items = await this.#source.load(page * this.#options.pageSize, this.#options.pageSize);
      if (generation !== this.#generation) return;
      this.#pages.set(page, items);
      this.#render();
    } catch (e) {
      if (generation === this.#generation) this.#options.onError(e);
    } finally {
      if (generation === this.#generation) this.#loading.delete(page);
    }
  }
}
