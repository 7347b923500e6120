/**
 * The buttons of a search-mode switch (a segmented control, ui/segmented.css), shared
 * by the demo's search card and the desktop's memories view: one radio button per
 * mode, the chosen one `.active` and `aria-checked`, each `data-testid="mode-<mode>"`.
 * Picking one (the chosen one too: it searches again) calls `onPick`; the caller
 * keeps the mode and redraws.
 */
import { h, replace } from './dom.js';

/** A mode the switch offers. */
export interface ModeChoice<M extends string> {
  readonly mode: M;
  readonly label: string;
}

/**
 * Fills `group` with a button for each of `modes`, `active` marked.
 * @example
 * renderModes(byId('search-mode'), [{ mode: 'hybrid', label: 'Hybrid' }], 'hybrid', (m) => { mode = m; redraw(); });
 */
export function renderModes<M extends string>(
  group: HTMLElement,
  modes: readonly ModeChoice<M>[],
  active: M,
  onPick: (mode: M) => void,
): void {
  replace(
    group,
    ...modes.map((m) =>
      h(
        'button',
        {
          class: active === m.mode ? 'active' : '',
          attrs: {
            type: 'button',
            role: 'radio',
            'aria-checked': active === m.mode ? 'true' : 'false',
            'data-testid': `mode-${m.mode}`,
          },
          on: {
            click: () => {
              onPick(m.mode);
            },
          },
        },
        m.label,
      ),
    ),
  );
}
