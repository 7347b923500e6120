/**
 * The user and agent switch, and a grid of how many memories each pair holds:
 * switching shows that each pair sees only its own thread and memories.
 */
import type { DemoContext } from './context.js';
import { byId, h, replace } from '../ui/dom.js';
import { AGENTS, USERS, saveScope, type Scope } from './settings.js';

/** The "Who is talking" card. */
export class ScopePanel {
  readonly #ctx: DemoContext;
  readonly #users = byId('user-switch');
  readonly #agents = byId('agent-switch');
  readonly #grid = byId('isolation', 'table');
  #enabled = false;

  constructor(ctx: DemoContext) {
    this.#ctx = ctx;
  }

  /** Allows switching (once the store is open). */
  enable(): void {
    this.#enabled = true;
  }

  /** Renders the switches and the counts per pair. */
  async render(): Promise<void> {
    const { scope, engram } = this.#ctx;
    replace(
      this.#users,
      ...USERS.map((u) => this.#button(u.label, `user-${u.id}`, scope.userId === u.id, { ...scope, userId: u.id })),
    );
    replace(
      this.#agents,
      ...AGENTS.map((a) => this.#button(a.label, `agent-${a.id}`, scope.agentId === a.id, { ...scope, agentId: a.id })),
    );
    const counts = await Promise.all(
      USERS.flatMap((u) =>
        AGENTS.map(async (a) => ({
          u: u.id,
          a: a.id,
          n: (await engram.getAll({ userId: u.id, agentId: a.id, limit: 1 })).total,
        })),
      ),
    );
    const count = (u: string, a: string): number => counts.find((c) => c.u === u && c.a === a)?.n ?? 0;
    replace(
      this.#grid,
      h('caption', { class: 'muted small' }, 'Memories per user and agent'),
      h('thead', {}, h('tr', {}, h('th'), ...AGENTS.map((a) => h('th', { attrs: { scope: 'col' } }, a.label)))),
      h(
        'tbody',
        {},
        ...USERS.map((u) =>
          h(
            'tr',
            {},
            h('th', { attrs: { scope: 'row' } }, u.label),
            ...AGENTS.map((a) => {
              const active = scope.userId === u.id && scope.agentId === a.id;
              const n = count(u.id, a.id);
              return h(
                'td',
                { class: active ? 'active' : n === 0 ? 'zero' : '', attrs: { 'data-testid': `count-${u.id}-${a.id}` } },
                h(
                  'button',
                  {
                    attrs: { type: 'button', title: `Switch to ${u.label} with ${a.label}`, disabled: !this.#enabled },
                    on: { click: () => void this.#switch({ userId: u.id, agentId: a.id }) },
                  },
                  String(n),
                ),
              );
            }),
          ),
        ),
      ),
    );
  }

  #button(label: string, testId: string, active: boolean, target: Scope): HTMLButtonElement {
    return h(
      'button',
      {
        class: active ? 'active' : '',
        attrs: {
          type: 'button',
          'data-testid': testId,
          'aria-pressed': active ? 'true' : 'false',
          disabled: !this.#enabled,
        },
        on: { click: () => void this.#switch(target) },
      },
      label,
    );
  }

  async #switch(target: Scope): Promise<void> {
    const { scope } = this.#ctx;
    if (scope.userId === target.userId && scope.agentId === target.agentId) return;
    this.#ctx.scope = target;
    saveScope(target);
    await this.#ctx.refresh();
  }
}
