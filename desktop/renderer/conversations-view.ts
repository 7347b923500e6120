/**
 * The conversations view: threads (from the conversation log, newest first),
 * one thread's messages, and MemGPT recall search over every message, by text
 * (BM25) or by date range, a page at a time.
 */
import type { RecallPage, RecallResult } from '../../lib/index.js';
import { formatTime, h, replace } from '../../ui/dom.js';
import type { AppContext, View } from './app-context.js';
import { dayBound } from './memory-filters.js';

/** Messages read to list threads (the newest ones). */
const THREAD_SCAN = 5000;
const PAGE = 20;

/** A thread as listed: its id, message count (within the scan) and newest message. */
export interface ThreadSummary {
  threadId: string;
  messages: number;
  last: RecallResult;
}

/** Groups messages (oldest first) into threads, most recently active first. */
export function summarizeThreads(messages: readonly RecallResult[]): ThreadSummary[] {
  const threads = new Map<string, ThreadSummary>();
  for (const m of messages) {
    const t = threads.get(m.threadId);
    if (t === undefined) threads.set(m.threadId, { threadId: m.threadId, messages: 1, last: m });
    else {
      t.messages++;
      if (m.timestamp >= t.last.timestamp) t.last = m;
    }
  }
  return [...threads.values()].sort((a, b) => (a.last.timestamp < b.last.timestamp ? 1 : -1));
}

function messageItem(m: RecallResult): HTMLLIElement {
  return h(
    'li',
    { class: `message role-${m.role}`, attrs: { 'data-id': m.id } },
    h('span', { class: `role ${m.role}` }, m.role),
    h('span', { class: 'text' }, m.content),
    h(
      'span',
      { class: 'meta muted small' },
      `${m.threadId} · ${new Date(m.timestamp).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' })}`,
    ),
  );
}

/** The conversations view. */
export class ConversationsView implements View {
  readonly name = 'conversations';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #threads = h('ol', { class: 'threads', attrs: { 'data-testid': 'threads' } });
  readonly #messages = h('ol', { class: 'messages', attrs: { 'data-testid': 'recall-results', 'data-state': 'idle' } });
  readonly #title = h('h2', { attrs: { 'data-testid': 'messages-title' } }, 'Messages');
  readonly #more = h('button', { attrs: { type: 'button', hidden: true, 'data-testid': 'recall-more' } }, 'More');
  readonly #text = h('input', {
    attrs: { type: 'search', placeholder: 'Words in any message…', 'data-testid': 'recall-text' },
  });
  readonly #from = h('input', { attrs: { type: 'date', 'data-testid': 'recall-from', 'aria-label': 'From' } });
  readonly #to = h('input', { attrs: { type: 'date', 'data-testid': 'recall-to', 'aria-label': 'To' } });
  #next: ((start: number) => Promise<RecallPage>) | undefined;
  #shown = 0;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    const textForm = h(
      'form',
      { class: 'row' },
      this.#text,
      h('button', { class: 'primary', attrs: { type: 'submit', 'data-testid': 'recall-text-button' } }, 'Search text'),
    );
    textForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const query = this.#text.value.trim();
      if (query === '') return;
      void this.#page(`Messages matching “${query}”`, (start) =>
        this.#ctx.engram.recall.textSearch(query, { start, count: PAGE }),
      );
    });
    const dateForm = h(
      'form',
      { class: 'row' },
      h('label', { class: 'small muted' }, 'from ', this.#from),
      h('label', { class: 'small muted' }, 'to ', this.#to),
      h('button', { attrs: { type: 'submit', 'data-testid': 'recall-date-button' } }, 'Search dates'),
    );
    dateForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const from = dayBound(this.#from.value, false) ?? 0;
      const to = dayBound(this.#to.value, true) ?? Date.now();
      void this.#page(
        `Messages from ${new Date(from).toLocaleDateString()} to ${new Date(to).toLocaleDateString()}`,
        (start) => this.#ctx.engram.recall.dateSearch(from, to, { start, count: PAGE }),
      );
    });
    this.#more.addEventListener('click', () => void this.#append());
    this.root = h(
      'section',
      { class: 'view conversations-view', attrs: { 'data-view': 'conversations' } },
      h('header', { class: 'view-head' }, h('h1', {}, 'Conversations')),
      h('div', { class: 'card recall-search' }, h('h2', {}, 'Recall search'), textForm, dateForm),
      h(
        'div',
        { class: 'split' },
        h('div', { class: 'card threads-pane' }, h('h2', {}, 'Threads'), this.#threads),
        h('div', { class: 'card messages-pane' }, this.#title, this.#messages, this.#more),
      ),
    );
  }

  async show(): Promise<void> {
    const now = Date.now();
    const { engram } = this.#ctx;
    // The newest messages: read the total first, then the last THREAD_SCAN of them.
    const { total } = await engram.recall.dateSearch(0, now, { count: 1 });
    const start = Math.max(0, total - THREAD_SCAN);
    const { results } =
      total === 0 ? { results: [] } : await engram.recall.dateSearch(0, now, { start, count: THREAD_SCAN });
    const threads = summarizeThreads(results);
    replace(
      this.#threads,
      ...(threads.length === 0
        ? [
            h(
              'li',
              { class: 'muted small' },
              'No conversations yet. An assistant built on engram stores its threads here.',
            ),
          ]
        : threads.map((t) =>
            h(
              'li',
              {
                class: 'thread',
                attrs: { 'data-thread': t.threadId, role: 'button', tabindex: '0' },
                on: { click: () => void this.#openThread(t.threadId) },
              },
              h('span', { class: 'name' }, t.threadId),
              h(
                'span',
                { class: 'muted small' },
                `${t.messages} message${t.messages === 1 ? '' : 's'} · ${formatTime(Date.parse(t.last.timestamp))}`,
              ),
              h('span', { class: 'text small' }, t.last.content),
            ),
          )),
    );
  }

  async #openThread(threadId: string): Promise<void> {
    await this.#page(`Thread ${threadId}`, (start) =>
      this.#ctx.engram.recall.dateSearch(0, Date.now(), { threadId, start, count: PAGE }),
    );
  }

  async #page(title: string, next: (start: number) => Promise<RecallPage>): Promise<void> {
    this.#title.textContent = title;
    this.#next = next;
    this.#shown = 0;
    replace(this.#messages);
    await this.#append();
  }

  async #append(): Promise<void> {
    const next = this.#next;
    if (next === undefined) return;
    this.#messages.dataset['state'] = 'searching';
    try {
      const { results, total } = await next(this.#shown);
      this.#shown += results.length;
      this.#messages.append(...results.map(messageItem));
      if (this.#shown === 0) this.#messages.append(h('li', { class: 'muted small empty' }, 'No message matches.'));
      this.#more.hidden = this.#shown >= total;
      this.#more.textContent = `More (${total - this.#shown} left)`;
      this.#messages.dataset['total'] = String(total);
    } catch (e) {
      this.#ctx.showError(e);
    }
    this.#messages.dataset['state'] = 'done';
  }
}
