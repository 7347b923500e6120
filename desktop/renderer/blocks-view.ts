/**
 * The core memory view: an agent's labelled blocks (MemGPT core memory), each
 * editable within its character limit; a value past the limit cannot be saved
 * (and engram would refuse it with LimitExceededError anyway).
 */
import type { Block } from '../../lib/index.js';
import { formatTime, h, replace } from '../../ui/dom.js';
import type { AppContext, View } from './app-context.js';

/** The core memory view. */
export class BlocksView implements View {
  readonly name = 'blocks';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #agent = h('input', {
    attrs: {
      placeholder: 'agent id',
      value: 'assistant',
      required: true,
      'data-testid': 'blocks-agent',
      'aria-label': 'Agent id',
    },
  });
  readonly #list = h('div', { class: 'blocks', attrs: { 'data-testid': 'blocks' } });

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    const pick = h(
      'form',
      { class: 'row' },
      h('label', {}, 'Agent ', this.#agent),
      h('button', { attrs: { type: 'submit', 'data-testid': 'blocks-load' } }, 'Show blocks'),
    );
    pick.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.show();
    });
    const label = h('input', {
      attrs: { placeholder: 'label, e.g. persona', required: true, 'data-testid': 'block-new-label' },
    });
    const limit = h('input', {
      attrs: {
        type: 'number',
        min: '1',
        max: '100000',
        value: '2000',
        'data-testid': 'block-new-limit',
        'aria-label': 'Character limit',
      },
    });
    const add = h(
      'form',
      { class: 'row' },
      label,
      h('label', { class: 'small muted' }, 'limit ', limit),
      h('button', { attrs: { type: 'submit', 'data-testid': 'block-new' } }, 'New block'),
    );
    add.addEventListener('submit', (event) => {
      event.preventDefault();
      this.#blocks()
        .set(label.value.trim(), '', { limit: Number(limit.value) })
        .then(() => {
          label.value = '';
          return this.show();
        })
        .catch((e: unknown) => {
          this.#ctx.showError(e);
        });
    });
    this.root = h(
      'section',
      { class: 'view blocks-view', attrs: { 'data-view': 'blocks' } },
      h(
        'header',
        { class: 'view-head' },
        h('h1', {}, 'Core memory'),
        h('p', { class: 'muted small' }, 'Blocks an agent always keeps in its context, each with a character limit.'),
      ),
      h('div', { class: 'card' }, pick, add),
      this.#list,
    );
  }

  async show(): Promise<void> {
    const blocks = await this.#blocks().list();
    replace(
      this.#list,
      ...(blocks.length === 0
        ? [h('p', { class: 'muted card' }, `Agent “${this.#agent.value}” has no core memory blocks.`)]
        : blocks.map((b) => this.#blockCard(b))),
    );
  }

  #blocks(): ReturnType<AppContext['engram']['blocks']> {
    return this.#ctx.engram.blocks(this.#agent.value.trim());
  }

  #blockCard(block: Block): HTMLElement {
    const value = h('textarea', {
      attrs: { rows: '5', 'data-testid': `block-value-${block.label}`, 'aria-label': `${block.label} value` },
    });
    value.value = block.value;
    const counter = h('span', { class: 'small', attrs: { 'data-testid': `block-count-${block.label}` } });
    const save = h(
      'button',
      { class: 'primary', attrs: { type: 'submit', disabled: true, 'data-testid': `block-save-${block.label}` } },
      'Save',
    );
    const update = (): void => {
      const over = value.value.length > block.limit;
      counter.textContent = `${value.value.length} / ${block.limit}${over ? ' · over the limit' : ''}`;
      counter.classList.toggle('over', over);
      save.disabled = over || value.value === block.value;
    };
    value.addEventListener('input', update);
    update();
    const form = h(
      'form',
      { class: 'card block stack', attrs: { 'data-block': block.label } },
      h(
        'div',
        { class: 'row spread' },
        h('h2', {}, block.label),
        h('span', { class: 'muted small' }, `v${block.version} · ${formatTime(block.updatedAt)}`),
      ),
      value,
      h('div', { class: 'row spread' }, counter, save),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      save.disabled = true;
      this.#blocks()
        .set(block.label, value.value)
        .then(() => this.show())
        .catch((e: unknown) => {
          this.#ctx.showError(e);
          update();
        });
    });
    return form;
  }
}
