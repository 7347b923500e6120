/**
 * The demo's chat card: its title and subtitle (who talks, which model answers,
 * how recall works) above the shared chat (ui/chat-panel.ts), which the demo
 * feeds with its store, the active user and agent, and the model settings. Its
 * turns run through the page's store gate (ui/store-gate.ts), as the desktop's do.
 */
import { byId } from '../ui/dom.js';
import { ChatPanel, RECALL_LIMIT, recallThreshold } from '../ui/chat-panel.js';
import type { StoreGate } from '../ui/store-gate.js';
import { modelLabels } from '../ui/turn-record.js';
import type { DemoContext } from './context.js';
import { labelOf, modelLabel, threadOf, toModel } from './settings.js';
import { SUGGESTIONS } from './suggestions.js';

/** Which model answered each reply, in this browser. */
export const DEMO_MODEL_LABELS = modelLabels('engram-demo:model-of:');

/** The chat card of the demo page. */
export class ChatCard {
  readonly #ctx: DemoContext;
  readonly #panel: ChatPanel;

  /** `gate`: the page's store gate, through which each turn runs (it waits while a conversion has closed the store). */
  constructor(ctx: DemoContext, gate: StoreGate) {
    this.#ctx = ctx;
    this.#panel = new ChatPanel({
      engram: () => ctx.engram,
      scope: () => ctx.scope,
      threadOf,
      model: () => Promise.resolve({ model: toModel(ctx.model), label: modelLabel(ctx.model) }),
      labelOf,
      labels: DEMO_MODEL_LABELS,
      suggestions: (scope) => (SUGGESTIONS[scope.userId] ?? []).map((s) => s.text),
      afterTurn: () => ctx.refresh(),
      gate,
    });
    byId('chat-mount').append(this.#panel.root);
  }

  /** Lets the user type (once the model is ready). */
  enable(): void {
    this.#panel.enable();
  }

  /** Shows an error above the messages until the next turn. */
  showError(error: unknown): void {
    this.#panel.showError(error);
  }

  /** The title, the subtitle and the thread of the active scope. */
  async render(): Promise<void> {
    const { engram, scope, model } = this.#ctx;
    byId('chat-title').textContent = `${labelOf(scope.agentId)} talking with ${labelOf(scope.userId)}`;
    const threshold = await recallThreshold(engram);
    byId('chat-subtitle').textContent =
      `thread ${threadOf(scope)} · answers: ${modelLabel(model)} · recall: top ${RECALL_LIMIT}, relevance ≥ ${threshold}`;
    await this.#panel.render();
  }
}
