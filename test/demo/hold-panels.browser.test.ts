// The demo's hold of its panels while the store is converted (demo/hold-panels.ts), on a
// real DOM in Chromium: what a user can act on is disabled (a panel that is itself a control too), and
// each control is released as its panel last set it.
import { afterEach, describe, expect, it } from 'vitest';
import { holdPanels } from '../../demo/hold-panels.js';

interface Page {
  readonly panel: HTMLElement;
  readonly input: HTMLInputElement;
  readonly off: HTMLButtonElement;
  readonly reset: HTMLButtonElement;
}

function page(): Page {
  const root = document.createElement('div');
  root.id = 'hold-test';
  root.innerHTML = `<section id="panel"><input id="input" /><button id="off" disabled>Delete all</button></section>
    <button id="reset">Forget everything</button>`;
  document.body.append(root);
  const get = (id: string): Element => root.querySelector(`#${id}`)!;
  return {
    panel: get('panel') as HTMLElement,
    input: get('input') as HTMLInputElement,
    off: get('off') as HTMLButtonElement,
    reset: get('reset') as HTMLButtonElement,
  };
}

afterEach(() => {
  document.getElementById('hold-test')?.remove();
});

describe('holdPanels', () => {
  it('holdPanels() makes each panel inert and disables every control, a panel that is a control too', () => {
    const { panel, input, off, reset } = page();
    holdPanels([panel, reset], true);
    expect([panel.inert, reset.inert]).toEqual([true, true]);
    expect([panel.dataset['held'], reset.dataset['held']]).toEqual(['true', 'true']);
    expect([input, off, reset].map((c) => c.matches(':disabled'))).toEqual([true, true, true]);
  });

  it('holdPanels() released gives each control back the state it had, and drops the marks', () => {
    const { panel, input, off, reset } = page();
    holdPanels([panel, reset], true);
    holdPanels([panel, reset], false);
    expect([panel.inert, reset.inert]).toEqual([false, false]);
    expect(panel.hasAttribute('data-held') || reset.hasAttribute('data-held')).toBe(false);
    expect([input, off, reset].map((c) => c.matches(':disabled'))).toEqual([false, true, false]);
  });

  it('holdPanels() keeps a control disabled that its panel enables while held, and enables it at the release', () => {
    const { panel, input, off, reset } = page();
    input.disabled = true; // a chat turn in flight when the conversion began
    holdPanels([panel, reset], true);
    input.disabled = false; // the turn ended during the hold
    off.disabled = false; // a render found memories to delete
    expect([input, off].map((c) => c.matches(':disabled'))).toEqual([true, true]);
    expect(input.disabled).toBe(false);
    holdPanels([panel, reset], false);
    expect([input, off, reset].map((c) => c.matches(':disabled'))).toEqual([false, false, false]);
  });

  it('holdPanels() held twice is released once, as before the first hold', () => {
    const { panel, input, off, reset } = page();
    holdPanels([panel, reset], true);
    holdPanels([panel, reset], true);
    holdPanels([panel, reset], false);
    expect([input, off, reset].map((c) => c.matches(':disabled'))).toEqual([false, true, false]);
  });
});
