/**
 * The "Model settings" form: the scripted agent, or an OpenAI-compatible
 * endpoint (base URL, model, optional key) such as a local model server.
 */
import type { DemoContext } from './context.js';
import { byId } from '../ui/dom.js';
import { saveModelSettings, type ModelSettings } from './settings.js';

/** Wires the settings form to the context. */
export class SettingsPanel {
  readonly #ctx: DemoContext;
  readonly #form = byId('settings', 'form');
  readonly #toggle = byId('settings-toggle', 'button');
  readonly #baseUrl = byId('llm-base-url', 'input');
  readonly #model = byId('llm-model', 'input');
  readonly #apiKey = byId('llm-api-key', 'input');
  readonly #note = byId('settings-note');

  constructor(ctx: DemoContext) {
    this.#ctx = ctx;
    this.#toggle.addEventListener('click', () => {
      this.#form.hidden = !this.#form.hidden;
      this.#toggle.setAttribute('aria-expanded', String(!this.#form.hidden));
    });
    this.#form.addEventListener('change', () => {
      this.#syncFields();
    });
    this.#form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#save();
    });
    this.#fill(ctx.model);
  }

  #kind(): 'scripted' | 'openai' {
    const checked = this.#form.querySelector<HTMLInputElement>('input[name="model-kind"]:checked');
    return checked?.value === 'openai' ? 'openai' : 'scripted';
  }

  #fill(settings: ModelSettings): void {
    for (const radio of this.#form.querySelectorAll<HTMLInputElement>('input[name="model-kind"]'))
      radio.checked = radio.value === settings.kind;
    if (settings.kind === 'openai') {
      this.#baseUrl.value = settings.baseUrl;
      this.#model.value = settings.model;
      this.#apiKey.value = settings.apiKey ?? '';
    }
    this.#syncFields();
  }

  #syncFields(): void {
    const openai = this.#kind() === 'openai';
    for (const input of [this.#baseUrl, this.#model, this.#apiKey]) input.disabled = !openai;
    this.#baseUrl.required = openai;
    this.#model.required = openai;
  }

  async #save(): Promise<void> {
    let settings: ModelSettings;
    if (this.#kind() === 'scripted') settings = { kind: 'scripted' };
    else {
      const baseUrl = this.#baseUrl.value.trim();
      const model = this.#model.value.trim();
      if (!/^https?:\/\//.test(baseUrl) || model === '') {
        this.#note.textContent = 'Give an http(s) base URL (up to /v1) and a model name.';
        return;
      }
      const apiKey = this.#apiKey.value.trim();
      settings = { kind: 'openai', baseUrl, model, ...(apiKey === '' ? {} : { apiKey }) };
    }
    saveModelSettings(settings);
    this.#ctx.model = settings;
    this.#note.textContent = 'Saved. The next turn uses it.';
    await this.#ctx.refresh();
  }
}
