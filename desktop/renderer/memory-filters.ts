/**
 * The filter bar of the memories view: tier, user, agent, project and a
 * created-date range, turned into engram's MemoryFilters.
 */
import type { MemoryFilters, Tier } from '../../lib/index.js';
import { h } from '../../ui/dom.js';

/** What the user entered; empty strings mean "any". */
export interface FilterValues {
  tier: Tier | '';
  userId: string;
  agentId: string;
  projectId: string;
  /** yyyy-mm-dd, local time. */
  from: string;
  to: string;
}

export const TIER_LABELS: Readonly<Record<Tier, string>> = {
  short_term: 'short-term',
  project: 'project',
  long_term: 'long-term',
};

/** The start (or with `endOfDay` the last millisecond) of a yyyy-mm-dd day in local time; undefined for ''. */
export function dayBound(day: string, endOfDay: boolean): number | undefined {
  if (day === '') return undefined;
  const at = new Date(`${day}T00:00:00`).getTime();
  if (Number.isNaN(at)) return undefined;
  return endOfDay ? at + 86_400_000 - 1 : at;
}

/** The engram filters for the entered values. */
export function toMemoryFilters(values: FilterValues): MemoryFilters {
  const filters: MemoryFilters = {};
  if (values.tier !== '') filters.tier = values.tier;
  if (values.userId.trim() !== '') filters.userId = values.userId.trim();
  if (values.agentId.trim() !== '') filters.agentId = values.agentId.trim();
  if (values.projectId.trim() !== '') filters.projectId = values.projectId.trim();
  const from = dayBound(values.from, false);
  const to = dayBound(values.to, true);
  if (from !== undefined || to !== undefined)
    filters.createdAt = { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
  return filters;
}

/** The filter bar; calls `onChange` (debounced for typing) with the new values. */
export class FilterBar {
  readonly root: HTMLFormElement;
  readonly #tier = h('select', { attrs: { 'data-testid': 'filter-tier', 'aria-label': 'Tier' } });
  readonly #user = h('input', {
    attrs: { type: 'search', placeholder: 'user', 'data-testid': 'filter-user', 'aria-label': 'User id' },
  });
  readonly #agent = h('input', {
    attrs: { type: 'search', placeholder: 'agent', 'data-testid': 'filter-agent', 'aria-label': 'Agent id' },
  });
  readonly #project = h('input', {
    attrs: { type: 'search', placeholder: 'project', 'data-testid': 'filter-project', 'aria-label': 'Project id' },
  });
  readonly #from = h('input', { attrs: { type: 'date', 'data-testid': 'filter-from', 'aria-label': 'Created from' } });
  readonly #to = h('input', { attrs: { type: 'date', 'data-testid': 'filter-to', 'aria-label': 'Created until' } });
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(onChange: (values: FilterValues) => void) {
    this.#tier.append(
      h('option', { attrs: { value: '' } }, 'any tier'),
      ...Object.entries(TIER_LABELS).map(([value, label]) => h('option', { attrs: { value } }, label)),
    );
    this.root = h(
      'form',
      { class: 'filters', attrs: { 'data-testid': 'filters' } },
      h('span', { class: 'muted small' }, 'Filter'),
      this.#tier,
      this.#user,
      this.#agent,
      this.#project,
      h('label', { class: 'small muted' }, 'from ', this.#from),
      h('label', { class: 'small muted' }, 'to ', this.#to),
    );
    const fire = (): void => {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      onChange(this.values());
    };
    this.root.addEventListener('submit', (event) => {
      event.preventDefault();
      fire();
    });
    for (const el of [this.#tier, this.#from, this.#to]) el.addEventListener('change', fire);
    for (const el of [this.#user, this.#agent, this.#project]) {
      el.addEventListener('input', () => {
        clearTimeout(this.#timer);
        this.#timer = setTimeout(fire, 250);
      });
    }
  }

  /** The entered values. */
  values(): FilterValues {
    return {
      tier: this.#tier.value as Tier | '',
      userId: this.#user.value,
      agentId: this.#agent.value,
      projectId: this.#project.value,
      from: this.#from.value,
      to: this.#to.value,
    };
  }
}
