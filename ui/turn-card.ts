/**
 * The report under a chat reply: pills (recalled, stored, total time), then the
 * step timeline and the two lists, what was recalled for the reply (with its
 * relevance) and what the turn stored. With `onOpenMemory`, each memory opens
 * (the desktop jumps to its memory view).
 */
import { formatMs, h } from './dom.js';
import type { TurnDetails } from './turn-record.js';

/** Options of {@link turnCard}. */
export interface TurnCardOptions {
  /** Shown unfolded (the latest turn). */
  open: boolean;
  /** The recall threshold, named when nothing was recalled. */
  threshold: number;
  /** Opens a memory by id; without it the memories are plain text. */
  onOpenMemory?: (id: string) => void;
}

function memoryText(id: string, text: string, onOpen: ((id: string) => void) | undefined): HTMLElement {
  if (onOpen === undefined) return h('span', { class: 'text' }, text);
  return h(
    'button',
    {
      class: 'text link',
      attrs: { type: 'button', title: 'Open this memory', 'data-memory-id': id },
      on: {
        click: () => {
          onOpen(id);
        },
      },
    },
    text,
  );
}

/**
 * The card of a reply's turn, or a note when the reply has no record.
 * @example
 * item.append(turnCard(turnDetailsOf(message), { open: true, threshold: 0.35, onOpenMemory: (id) => show(id) }))
 */
export function turnCard(details: TurnDetails | undefined, options: TurnCardOptions): HTMLElement {
  if (details === undefined)
    return h('div', { class: 'turn missing muted small' }, 'No turn report was recorded for this reply.');
  const { recalled, stored, timings } = details;
  const { onOpenMemory } = options;
  const added = stored.filter((s) => s.event === 'ADD').length;
  return h(
    'details',
    { class: 'turn', attrs: { open: options.open } },
    h(
      'summary',
      {},
      h('span', { class: 'pill recall' }, `recalled ${recalled.length}`),
      h(
        'span',
        { class: 'pill store' },
        `stored ${added}${stored.length > added ? ` (+${stored.length - added} known)` : ''}`,
      ),
      h('span', { class: 'pill time' }, formatMs(timings.totalMs)),
    ),
    h(
      'div',
      { class: 'turn-body' },
      timeline(timings),
      h(
        'div',
        { class: 'turn-cols' },
        h(
          'section',
          { attrs: { 'data-testid': 'recalled' } },
          h('h4', {}, 'Recalled for this reply'),
          recalled.length === 0
            ? h('p', { class: 'muted small' }, `Nothing with relevance ≥ ${options.threshold}.`)
            : h(
                'ul',
                {},
                ...recalled.map((r) =>
                  h(
                    'li',
                    {},
                    h(
                      'span',
                      {
                        class: 'score',
                        attrs: {
                          title: `relevance ${r.score.toFixed(3)}${r.similarity === undefined ? '' : ` · cosine ${r.similarity.toFixed(3)}`}`,
                        },
                      },
                      r.score.toFixed(2),
                    ),
                    memoryText(r.id, r.memory, onOpenMemory),
                  ),
                ),
              ),
        ),
        h(
          'section',
          { attrs: { 'data-testid': 'stored' } },
          h('h4', {}, 'Stored this turn'),
          stored.length === 0
            ? h('p', { class: 'muted small' }, 'Nothing.')
            : h(
                'ul',
                {},
                ...stored.map((s) =>
                  h(
                    'li',
                    {},
                    h('span', { class: `badge ${s.event.toLowerCase()}` }, s.event === 'NONE' ? 'KNOWN' : s.event),
                    memoryText(s.id, s.memory, s.event === 'DELETE' ? undefined : onOpenMemory),
                  ),
                ),
              ),
        ),
      ),
    ),
  );
}

function timeline(t: TurnDetails['timings']): HTMLElement {
  const other = Math.max(0, t.totalMs - t.recallMs - t.modelMs - t.storeMs);
  const steps = [
    { key: 'recall', label: 'recall', ms: t.recallMs },
    { key: 'model', label: 'model', ms: t.modelMs },
    { key: 'store', label: 'store', ms: t.storeMs },
    { key: 'other', label: 'log + context', ms: other },
  ];
  const total = Math.max(t.totalMs, 0.001);
  return h(
    'div',
    { class: 'timings', attrs: { 'data-testid': 'timings' } },
    h(
      'div',
      { class: 'timeline-bar' },
      ...steps.map((s) => {
        const seg = h('span', { class: `seg ${s.key}`, attrs: { title: `${s.label}: ${formatMs(s.ms)}` } });
        seg.style.flexGrow = String(Math.max(s.ms / total, 0.02));
        return seg;
      }),
    ),
    h(
      'div',
      { class: 'legend' },
      ...steps.map((s) =>
        h(
          'span',
          { class: `step ${s.key}`, attrs: { 'data-step': s.key } },
          h('i'),
          `${s.label} `,
          h('b', {}, formatMs(s.ms)),
        ),
      ),
      h('span', { class: 'step total', attrs: { 'data-step': 'total' } }, 'total ', h('b', {}, formatMs(t.totalMs))),
    ),
  );
}
