/**
 * The memories of the active user and agent, newest first, each with a delete
 * button (engram keeps a tombstone for sync; the memory leaves search at once).
 */
import type { DemoContext } from './context.js';
import { byId, formatTime, h, replace } from '../ui/dom.js';
import { labelOf } from './settings.js';

const LIST_LIMIT = 200;

/** The "Stored memories" card. */
export class MemoryPanel {
  readonly #ctx: DemoContext;
  readonly #list = byId('memory-list', 'ol');
  readonly #count = byId('memory-count');
  readonly #deleteAll = byId('delete-scope', 'button');
  /** The latest render: an earlier one that answers after it (another scope's) leaves the card alone. */
  #render = 0;

  constructor(ctx: DemoContext) {
    this.#ctx = ctx;
    this.#deleteAll.addEventListener('click', () => void this.#deleteScope());
  }

  /** Renders the scope's memories. */
  async render(): Promise<void> {
    const { engram, scope } = this.#ctx;
    const render = ++this.#render;
    const { results, total } = await engram.getAll({ userId: scope.userId, agentId: scope.agentId, limit: LIST_LIMIT });
    // Switching user, then agent, renders twice: the first read may answer last (a loaded machine).
    if (render !== this.#render) return;
    this.#count.textContent = String(total);
    this.#deleteAll.disabled = total === 0;
    // Whose memories the card shows (the chat title may change first: panels render side by side).
    this.#list.dataset['scope'] = `${scope.userId}/${scope.agentId}`;
    replace(
      this.#list,
      ...(results.length === 0
        ? [
            h(
              'li',
              { class: 'empty muted small' },
              `${labelOf(scope.agentId)} remembers nothing about ${labelOf(scope.userId)} yet.`,
            ),
          ]
        : results.map((m) =>
            h(
              'li',
              { class: 'memory', attrs: { 'data-id': m.id } },
              h('span', { class: 'text' }, m.memory),
              h('span', { class: 'meta muted small' }, `${formatTime(m.createdAt)} · v${m.version}`),
              h(
                'button',
                {
                  class: 'icon danger',
                  attrs: { type: 'button', title: 'Delete this memory', 'aria-label': `Delete memory: ${m.memory}` },
                  on: { click: () => void this.#delete(m.id) },
                },
                '×',
              ),
            ),
          )),
      total > results.length ? h('li', { class: 'muted small' }, `… and ${total - results.length} more`) : null,
    );
  }

  async #delete(id: string): Promise<void> {
    try {
      await this.#ctx.engram.delete(id);
    } catch (e) {
      this.#ctx.showError(e);
    }
    await this.#ctx.refresh();
  }

  async #deleteScope(): Promise<void> {
    const { scope } = this.#ctx;
    if (
      !window.confirm(
        `Delete every memory ${labelOf(scope.agentId)} has about ${labelOf(scope.userId)}? The chat stays.`,
      )
    )
      return;
    try {
      await this.#ctx.engram.deleteAll({ userId: scope.userId, agentId: scope.agentId });
    } catch (e) {
      this.#ctx.showError(e);
    }
    await this.#ctx.refresh();
  }
}
