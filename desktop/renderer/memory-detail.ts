/**
 * The detail pane of the memories view: one memory's text (editable), scope,
 * tier, times and metadata, its history (every version, oldest first), and
 * delete. Also the "add a memory" form, which shares the pane.
 */
import { NotFoundError, type MemoryHistoryEntry, type MemoryItem } from '../../lib/index.js';
import { formatTime, h, replace } from '../../ui/dom.js';
import type { AppContext } from './app-context.js';
import { TIER_LABELS } from './memory-filters.js';

const SCOPE_FIELDS = ['userId', 'agentId', 'runId', 'projectId', 'sessionId'] as const;

function fullTime(at: number): string {
  return new Date(at).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

function historyItem(entry: MemoryHistoryEntry): HTMLLIElement {
  return h(
    'li',
    { class: `history-entry op-${entry.op.toLowerCase()}`, attrs: { 'data-op': entry.op } },
    h('span', { class: 'badge' }, entry.op),
    h('span', { class: 'muted small' }, ` v${entry.version} · ${fullTime(entry.at)}`),
    entry.op === 'UPDATE' ? h('div', { class: 'before' }, entry.previous ?? '') : null,
    entry.memory === null ? null : h('div', { class: 'after' }, entry.memory),
  );
}

/** The right-hand pane of the memories view. */
export class MemoryDetail {
  readonly root = h('aside', {
    class: 'detail card',
    attrs: { 'data-testid': 'memory-detail', 'aria-live': 'polite' },
  });
  readonly #ctx: AppContext;
  #id: string | undefined;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.empty();
  }

  /** The id shown, if any. */
  get shownId(): string | undefined {
    return this.#id;
  }

  /** Shows the placeholder (`hint` says what to do; by default: pick a memory or add one). */
  empty(hint = 'Pick a memory to see its details and history, or add one.'): void {
    this.#id = undefined;
    replace(this.root, h('p', { class: 'muted', attrs: { 'data-testid': 'detail-empty' } }, hint));
  }

  /** Shows one memory and its history. */
  async show(id: string): Promise<void> {
    const { engram } = this.#ctx;
    const [memory, history] = await Promise.all([engram.get(id), engram.history(id)]);
    this.#id = id;
    if (memory === undefined) {
      replace(
        this.root,
        h('p', { class: 'muted' }, 'This memory was deleted.'),
        h('h3', {}, 'History'),
        h('ol', { class: 'history', attrs: { 'data-testid': 'memory-history' } }, ...history.map(historyItem)),
      );
      return;
    }
    this.#render(memory, history);
  }

  /** Shows the add form. */
  showAdd(defaults: { userId: string; agentId: string }): void {
    this.#id = undefined;
    const text = h('textarea', {
      attrs: { rows: '4', required: true, placeholder: 'What should be remembered?', 'data-testid': 'add-text' },
    });
    const user = h('input', {
      attrs: { placeholder: 'user id (optional)', value: defaults.userId, 'data-testid': 'add-user' },
    });
    const agent = h('input', {
      attrs: { placeholder: 'agent id (optional)', value: defaults.agentId, 'data-testid': 'add-agent' },
    });
    const run = h('input', { attrs: { placeholder: 'run id (optional)', 'data-testid': 'add-run' } });
    const submit = h(
      'button',
      { class: 'primary', attrs: { type: 'submit', 'data-testid': 'add-submit' } },
      'Add memory',
    );
    const form = h(
      'form',
      { class: 'stack', attrs: { 'data-testid': 'add-form' } },
      h('h2', {}, 'Add a memory'),
      text,
      h('div', { class: 'row' }, user, agent, run),
      h('div', { class: 'row' }, submit),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      submit.disabled = true;
      const scope = { userId: user.value.trim(), agentId: agent.value.trim(), runId: run.value.trim() };
      const options = Object.fromEntries(Object.entries(scope).filter(([, v]) => v !== ''));
      this.#ctx.engram
        .add(text.value, options)
        .then(async ({ results }) => {
          this.#ctx.changed();
          const added = results[0];
          if (added === undefined) throw new NotFoundError('memory', 'just added');
          await this.show(added.id);
        })
        .catch((e: unknown) => {
          submit.disabled = false;
          this.#ctx.showError(e);
        });
    });
    replace(this.root, form);
    text.focus();
  }

  #render(memory: MemoryItem, history: MemoryHistoryEntry[]): void {
    const text = h('textarea', { attrs: { rows: '4', 'data-testid': 'detail-text', 'aria-label': 'Memory text' } });
    text.value = memory.memory;
    const save = h(
      'button',
      { class: 'primary', attrs: { type: 'submit', disabled: true, 'data-testid': 'detail-save' } },
      'Save',
    );
    const remove = h(
      'button',
      { class: 'danger', attrs: { type: 'button', 'data-testid': 'detail-delete' } },
      'Delete',
    );
    text.addEventListener('input', () => {
      save.disabled = text.value.trim() === '' || text.value === memory.memory;
    });
    const form = h('form', { class: 'stack' }, text, h('div', { class: 'row' }, save, remove));
    /** After an edit or a delete: the views re-read the store, and this pane shows what is left of the memory. */
    const changed = (change: Promise<unknown>): void => {
      change
        .then(async () => {
          this.#ctx.changed();
          await this.show(memory.id);
        })
        .catch((e: unknown) => {
          this.#ctx.showError(e);
        });
    };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      save.disabled = true;
      changed(this.#ctx.engram.update(memory.id, text.value));
    });
    remove.addEventListener('click', () => {
      if (!window.confirm(`Delete this memory?\n\n${memory.memory}`)) return;
      changed(this.#ctx.engram.delete(memory.id));
    });
    const facts: [string, string][] = [
      ['tier', TIER_LABELS[memory.tier]],
      ...SCOPE_FIELDS.filter((k) => memory[k] !== undefined).map((k): [string, string] => [
        k.replace('Id', ''),
        memory[k] ?? '',
      ]),
      ['created', fullTime(memory.createdAt)],
      ['updated', fullTime(memory.updatedAt)],
      ['version', String(memory.version)],
    ];
    if (memory.key !== undefined) facts.push(['key', memory.key]);
    if (memory.expiresAt !== undefined) facts.push(['expires', fullTime(memory.expiresAt)]);
    if (Object.keys(memory.metadata).length > 0) facts.push(['metadata', JSON.stringify(memory.metadata)]);
    replace(
      this.root,
      h('h2', {}, 'Memory ', h('span', { class: 'muted small mono' }, memory.id)),
      form,
      h(
        'dl',
        { class: 'facts', attrs: { 'data-testid': 'detail-facts' } },
        ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', { attrs: { 'data-fact': k } }, v)]),
      ),
      h('h3', {}, `History (${history.length})`),
      h('ol', { class: 'history', attrs: { 'data-testid': 'memory-history' } }, ...history.map(historyItem)),
      h('p', { class: 'muted small' }, `Last change ${formatTime(memory.updatedAt)}`),
    );
  }
}
