/**
 * The demo's other panels held while its store is converted in place (store-encryption.ts: the
 * page's instance is closed meanwhile): inert, every control disabled, and each control given back,
 * at the release, the state its panel last set.
 */

/** What a user acts on: the controls {@link holdPanels} disables. */
const CONTROLS = 'button, input, select, textarea';

type Control = HTMLButtonElement | HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** The controls of `panel`, the panel itself first when it is one (the page's "Forget everything" button). */
function controlsOf(panel: HTMLElement): Control[] {
  const inside = [...panel.querySelectorAll<Control>(CONTROLS)];
  return panel.matches(CONTROLS) ? [panel as Control, ...inside] : inside;
}

/**
 * Disables `control` until {@link releaseControl}. Its panel may still set `disabled` meanwhile (a
 * chat turn that ends during the hold re-enables its input): an own property of the element takes
 * that wish (and reads it back) while the element stays disabled, and the release applies it.
 */
function holdControl(control: Control): void {
  if (Object.hasOwn(control, 'disabled')) return;
  let wanted = control.disabled;
  control.disabled = true;
  Object.defineProperty(control, 'disabled', {
    configurable: true,
    get: () => wanted,
    set: (value: boolean) => {
      wanted = value;
    },
  });
}

/** Gives a held control the `disabled` its panel last wanted (the one from before the hold when it set none). */
function releaseControl(control: Control): void {
  if (!Object.hasOwn(control, 'disabled')) return;
  const wanted = control.disabled;
  Reflect.deleteProperty(control, 'disabled');
  control.disabled = wanted;
}

/**
 * Holds `panels` while the store is converted (the page's instance is closed): each is made inert
 * and marked `data-held`, and every control in it (or the panel, when it is a control) disabled, so
 * it looks as unusable as it is; released, each control is as its panel last set it (as before the
 * hold, unless the panel changed it meanwhile), and the page then renders its panels from the
 * reopened store.
 * @example
 * holdPanels([chatSection, searchSection, resetButton], true);
 */
export function holdPanels(panels: readonly HTMLElement[], held: boolean): void {
  for (const panel of panels) {
    panel.inert = held;
    if (held) panel.dataset['held'] = 'true';
    else delete panel.dataset['held'];
    for (const control of controlsOf(panel)) {
      if (held) holdControl(control);
      else releaseControl(control);
    }
  }
}
