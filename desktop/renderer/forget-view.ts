/**
 * Forget a user (the right to be forgotten): shows what is stored about a user
 * id, asks for confirmation, then `engram.forget({ userId })` removes their
 * memories (leaving text-free tombstones for sync), messages, core memory,
 * traces, history, vectors and keyword terms, and says what it removed.
 */
import type { ForgetResult } from '../../lib/index.js';
import { h, replace } from '../../ui/dom.js';
import type { AppContext, View } from './app-context.js';

/** What forget() removed, as one line. */
export function forgetSummary(userId: string, r: ForgetResult): string {
  return `Forgot ${userId}: ${r.memories} memories, ${r.messages} messages, ${r.blocks} core memory blocks, ${r.traces} traces, ${r.history} history entries, ${r.vectors} vectors.`;
}

/** The forget view. */
export class ForgetView implements View {
  readonly name = 'forget';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #user = h('input', {
    attrs: { placeholder: 'user id, e.g. ana', required: true, 'data-testid': 'forget-user', 'aria-label': 'User id' },
  });
  readonly #preview = h('p', { attrs: { 'data-testid': 'forget-preview' } });
  readonly #button = h(
    'button',
    { class: 'danger', attrs: { type: 'submit', disabled: true, 'data-testid': 'forget-button' } },
    'Forget this user…',
  );
  readonly #result = h('p', { attrs: { 'data-testid': 'forget-result', 'data-state': 'idle' } });
  #counts = { memories: 0, messages: 0 };

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    let timer: ReturnType<typeof setTimeout> | undefined;
    this.#user.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => void this.#previewUser(), 200);
    });
    const form = h(
      'form',
      { class: 'card stack' },
      h('h2', {}, 'Forget a user'),
      h('div', { class: 'row' }, this.#user, this.#button),
      this.#preview,
      this.#result,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#forget();
    });
    this.root = h(
      'section',
      { class: 'view forget-view', attrs: { 'data-view': 'forget' } },
      h('header', { class: 'view-head' }, h('h1', {}, 'Forget')),
      h(
        'p',
        { class: 'muted small' },
        'Removes everything stored about one user on this device: memories, conversations, core memory, traces, their history and vectors. Deleted memories leave a text-free tombstone so sync can delete them on your other devices too. This cannot be undone.',
      ),
      form,
    );
  }

  async show(): Promise<void> {
    await this.#previewUser();
  }

  async #previewUser(): Promise<void> {
    const userId = this.#user.value.trim();
    this.#button.disabled = true;
    if (userId === '') {
      replace(this.#preview, h('span', { class: 'muted small' }, 'Enter a user id to see what is stored about them.'));
      this.#preview.dataset['state'] = 'idle';
      return;
    }
    const { engram } = this.#ctx;
    const [memories, messages] = await Promise.all([
      engram.getAll({ userId, limit: 1 }),
      engram.recall.dateSearch(0, Date.now(), { userId, count: 1 }),
    ]);
    if (this.#user.value.trim() !== userId) return;
    this.#counts = { memories: memories.total, messages: messages.total };
    replace(this.#preview, `Stored about ${userId}: ${memories.total} memories and ${messages.total} messages.`);
    this.#preview.dataset['state'] = 'ready';
    this.#button.disabled = false;
  }

  async #forget(): Promise<void> {
    const userId = this.#user.value.trim();
    if (userId === '') return;
    const { memories, messages } = this.#counts;
    if (
      !window.confirm(
        `Forget everything stored about “${userId}”?\n\n${memories} memories and ${messages} messages, with their history, core memory and traces, will be removed from this device. This cannot be undone.`,
      )
    )
      return;
    this.#button.disabled = true;
    try {
      const removed = await this.#ctx.engram.forget({ userId });
      this.#result.textContent = forgetSummary(userId, removed);
      this.#result.dataset['state'] = 'done';
      this.#ctx.changed();
    } catch (e) {
      this.#result.dataset['state'] = 'failed';
      this.#ctx.showError(e);
    }
    await this.#previewUser();
  }
}
