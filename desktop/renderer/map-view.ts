/**
 * The map of the memory space: every live memory's vector projected to 2D
 * (PCA), drawn as a dot coloured by tier or by scope; hovering shows the text,
 * clicking opens the memory. Near dots are memories of similar meaning.
 */
import { h, replace } from '../../ui/dom.js';
import type { AppContext, View } from './app-context.js';
import { memoryVectors, type MemoryVector } from './memory-vectors.js';
import { TIER_LABELS } from './memory-filters.js';
import { project2d } from './projection.js';

const SVG = 'http://www.w3.org/2000/svg';
/** Most dots drawn; beyond it the map shows an even sample. */
export const MAP_LIMIT = 5000;
const SIZE = 1000;
/** Up to this many dots, dots are labelled with the start of their text where labels do not collide. */
const LABEL_LIMIT = 60;
const LABEL_CHARS = 42;
/** Approximate width of one label character in map units (22-unit font). */
const LABEL_CHAR_WIDTH = 11.5;
const PAD = 30;
const PALETTE = [
  '#2563eb',
  '#db2777',
  '#059669',
  '#d97706',
  '#7c3aed',
  '#0891b2',
  '#dc2626',
  '#65a30d',
  '#9333ea',
  '#ea580c',
];
const TIER_COLOURS: Readonly<Record<string, string>> = {
  short_term: '#d97706',
  project: '#7c3aed',
  long_term: '#2563eb',
};

type ColourBy = 'tier' | 'userId' | 'agentId' | 'projectId';
const COLOUR_BY: { value: ColourBy; label: string }[] = [
  { value: 'tier', label: 'tier' },
  { value: 'userId', label: 'user' },
  { value: 'agentId', label: 'agent' },
  { value: 'projectId', label: 'project' },
];

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

/** The group a memory falls in for a colouring. */
function groupOf(point: MemoryVector, by: ColourBy): string {
  if (by === 'tier') return point.tier;
  return point[by] ?? '(none)';
}

/** The map view. */
export class MapView implements View {
  readonly name = 'map';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #canvas = svg('svg', {
    viewBox: `0 0 ${SIZE} ${SIZE}`,
    class: 'map',
    role: 'img',
    'aria-label': 'Map of the memory space',
    'data-testid': 'map',
  });
  readonly #legend = h('ul', { class: 'legend', attrs: { 'data-testid': 'map-legend' } });
  readonly #colour = h(
    'select',
    { attrs: { 'data-testid': 'map-colour', 'aria-label': 'Colour by' } },
    ...COLOUR_BY.map((c) => h('option', { attrs: { value: c.value } }, c.label)),
  );
  readonly #note = h('p', { class: 'muted small', attrs: { 'data-testid': 'map-note' } });
  #points: MemoryVector[] = [];
  #xy: { x: number; y: number }[] = [];

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#colour.addEventListener('change', () => {
      this.#draw();
    });
    this.root = h(
      'section',
      { class: 'view map-view', attrs: { 'data-view': 'map', 'data-state': 'idle' } },
      h(
        'header',
        { class: 'view-head' },
        h('h1', {}, 'Map'),
        h('label', { class: 'small muted' }, 'colour by ', this.#colour),
      ),
      h(
        'div',
        { class: 'map-layout' },
        h('div', { class: 'card map-card' }, this.#canvas),
        h('div', { class: 'card' }, h('h2', {}, 'Legend'), this.#legend, this.#note),
      ),
    );
  }

  async show(): Promise<void> {
    this.root.dataset['state'] = 'loading';
    this.#note.textContent = 'Reading vectors…';
    const text = await (await this.#ctx.engram.export()).text();
    // Parsing and projecting take a moment at scale; let the "Reading" state paint first.
    await new Promise((r) => setTimeout(r, 0));
    const { points, live } = memoryVectors(text, Date.now(), MAP_LIMIT);
    this.#points = points;
    this.#xy = project2d(points.map((p) => p.vector));
    this.#note.textContent =
      live === 0
        ? 'No memories yet.'
        : `${points.length} of ${live} memories, projected with PCA from ${points[0]?.vector.length ?? 0} dimensions. Near dots are similar in meaning; click one to open it.`;
    this.#draw();
    this.root.dataset['state'] = 'ready';
  }

  #draw(): void {
    const by = this.#colour.value as ColourBy;
    const groups = [...new Set(this.#points.map((p) => groupOf(p, by)))].sort();
    const colourOf = (group: string): string =>
      by === 'tier'
        ? (TIER_COLOURS[group] ?? '#64748b')
        : group === '(none)'
          ? '#94a3b8'
          : (PALETTE[groups.indexOf(group) % PALETTE.length] ?? '#64748b');
    const span = SIZE - 2 * PAD;
    const frame = svg('rect', { x: '1', y: '1', width: String(SIZE - 2), height: String(SIZE - 2), class: 'frame' });
    const dots = this.#points.map((p, i) => {
      const { x, y } = this.#xy[i] ?? { x: 0.5, y: 0.5 };
      const dot = svg('circle', {
        cx: (PAD + x * span).toFixed(1),
        cy: (PAD + (1 - y) * span).toFixed(1),
        r: this.#points.length > 1000 ? '4' : '9',
        fill: colourOf(groupOf(p, by)),
        'data-id': p.id,
        'data-group': groupOf(p, by),
        tabindex: '0',
        class: 'dot',
      });
      const title = svg('title', {});
      title.textContent = p.text;
      dot.append(title);
      dot.addEventListener('click', () => {
        this.#ctx.openMemory(p.id);
      });
      dot.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') this.#ctx.openMemory(p.id);
      });
      return dot;
    });
    const labels: SVGTextElement[] = [];
    if (this.#points.length <= LABEL_LIMIT) {
      // Greedy placement: a label that would overlap one already placed is left out (the dot's tooltip still has the text).
      const placed: { x0: number; x1: number; y0: number; y1: number }[] = [];
      this.#points.forEach((p, i) => {
        const { x, y } = this.#xy[i] ?? { x: 0.5, y: 0.5 };
        const text = p.text.length > LABEL_CHARS ? `${p.text.slice(0, LABEL_CHARS - 1)}…` : p.text;
        const right = x > 0.6;
        const ax = PAD + x * span + (right ? -16 : 16);
        const ay = PAD + (1 - y) * span + 7;
        const width = text.length * LABEL_CHAR_WIDTH;
        const box = { x0: right ? ax - width : ax, x1: right ? ax : ax + width, y0: ay - 20, y1: ay + 6 };
        if (placed.some((b) => b.x0 < box.x1 && box.x0 < b.x1 && b.y0 < box.y1 && box.y0 < b.y1)) return;
        placed.push(box);
        const label = svg('text', {
          x: ax.toFixed(1),
          y: ay.toFixed(1),
          'text-anchor': right ? 'end' : 'start',
          class: 'label',
        });
        label.textContent = text;
        labels.push(label);
      });
    }
    this.#canvas.replaceChildren(frame, ...labels, ...dots);
    replace(
      this.#legend,
      ...groups.map((g) => {
        const swatch = h('span', { class: 'swatch' });
        swatch.style.background = colourOf(g);
        const count = this.#points.filter((p) => groupOf(p, by) === g).length;
        return h(
          'li',
          { attrs: { 'data-group': g } },
          swatch,
          `${by === 'tier' && g in TIER_LABELS ? TIER_LABELS[g as keyof typeof TIER_LABELS] : g} (${count})`,
        );
      }),
    );
  }
}
