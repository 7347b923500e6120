/**
 * Chat, the app's first view: the assistant with memory (ui/chat-panel.ts, the
 * same chat as the demo page) over the app's store. Answers come from the model
 * server the user set (an OpenAI-compatible endpoint, streamed), or, when none
 * is set or it does not answer, from the scripted offline agent, which the view
 * says. One thread per user and agent; a memory in a turn's report opens in the
 * Memories view. The server is opened in the request filter through the bridge
 * (on desktop the user allows it in a main-process dialog) before it is used.
 */
import { ValidationError } from '../../lib/index.js';
import { ChatPanel, RECALL_LIMIT, recallThreshold, type ChatModelChoice, type ChatScope } from '../../ui/chat-panel.js';
import { h, replace } from '../../ui/dom.js';
import { scriptedAgent } from '../../ui/scripted-agent.js';
import { modelLabels } from '../../ui/turn-record.js';
import { unwrap, type AppContext, type View } from './app-context.js';
import {
  DEFAULT_STALL_SECONDS,
  SUGGESTED_BASE_URL,
  checkModelServer,
  loadModelServer,
  modelOptions,
  modelServerLabel,
  saveModelServer,
  unreachableReason,
} from './model-server.js';

const SCOPE_KEY = 'engram-desktop:chat-scope';
const OFFLINE_LABEL = 'scripted agent (offline)';
/** Longest user or agent id typed here. */
const MAX_ID_CHARS = 100;

/** The conversation thread of a user with an agent. */
export function chatThreadOf(scope: ChatScope): string {
  return `chat:${scope.agentId}:${scope.userId}`;
}

function checkId(field: string, value: string): string {
  const id = value.trim();
  if (id === '' || id.length > MAX_ID_CHARS || /\s/.test(id))
    throw new ValidationError(field, `must be 1 to ${MAX_ID_CHARS} characters without spaces`);
  return id;
}

function loadScope(): ChatScope {
  try {
    const saved = JSON.parse(localStorage.getItem(SCOPE_KEY) ?? 'null') as unknown;
    if (typeof saved === 'object' && saved !== null) {
      const { userId, agentId } = saved as Record<string, unknown>;
      if (typeof userId === 'string' && typeof agentId === 'string')
        return { userId: checkId('user', userId), agentId: checkId('agent', agentId) };
    }
  } catch {
    // What storage held is not a scope: start from the default.
  }
  return { userId: 'me', agentId: 'assistant' };
}

/** The chat view. */
export class ChatView implements View {
  readonly name = 'chat';
  readonly root: HTMLElement;
  readonly #ctx: AppContext;
  readonly #panel: ChatPanel;
  #scope = loadScope();
  #server = loadModelServer();
  /** The origin the bridge opened for the model server, once it did. */
  #opened: string | undefined;
  readonly #user = h('input', { attrs: { 'data-testid': 'chat-user', 'aria-label': 'User id', size: '12' } });
  readonly #agent = h('input', { attrs: { 'data-testid': 'chat-agent', 'aria-label': 'Agent id', size: '12' } });
  readonly #subtitle = h('p', { class: 'muted small', attrs: { 'data-testid': 'chat-subtitle' } });
  readonly #notice = h('div', { class: 'chat-notice', attrs: { 'data-testid': 'model-notice', role: 'status' } });
  readonly #form: HTMLFormElement;
  readonly #baseUrl = h('input', {
    attrs: { type: 'url', placeholder: SUGGESTED_BASE_URL, 'data-testid': 'model-url', autocomplete: 'off' },
  });
  readonly #model = h('input', {
    attrs: { placeholder: 'llama3.2', 'data-testid': 'model-name', autocomplete: 'off' },
  });
  readonly #key = h('input', {
    attrs: { type: 'password', placeholder: 'only if the server wants one', autocomplete: 'off' },
  });
  readonly #stall = h('input', {
    attrs: { type: 'number', min: '1', max: '600', step: '1', 'data-testid': 'model-stall' },
  });
  readonly #formNote = h('p', { class: 'small', attrs: { 'data-testid': 'model-note' } });

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#panel = new ChatPanel({
      engram: () => ctx.engram,
      scope: () => this.#scope,
      threadOf: chatThreadOf,
      model: () => this.#choose(),
      labelOf: (id) => id,
      labels: modelLabels('engram-desktop:model-of:'),
      openMemory: (id) => {
        ctx.openMemory(id);
      },
      afterTurn: async () => {
        ctx.changed();
        await this.#render();
      },
      // A turn sent while a conversion or an import has closed the store waits for its reopen (its text on
      // screen, back in the composer if the wait is stopped); one streaming holds off their close until it is stored.
      gate: ctx.gate,
    });
    this.#form = h(
      'form',
      { class: 'card stack model-form', attrs: { 'data-testid': 'model-form', hidden: true } },
      h('h2', {}, 'Model server'),
      h(
        'p',
        { class: 'muted small' },
        'An OpenAI-compatible server on this machine keeps every prompt here: Ollama (',
        h('code', {}, SUGGESTED_BASE_URL),
        '), llama.cpp’s llama-server (',
        h('code', {}, 'http://127.0.0.1:8080/v1'),
        '), LM Studio (',
        h('code', {}, 'http://127.0.0.1:1234/v1'),
        '). A remote one must be https. The app connects to this server and to nothing else.',
      ),
      h('label', { class: 'field' }, h('span', {}, 'Base URL'), this.#baseUrl),
      h('label', { class: 'field' }, h('span', {}, 'Model'), this.#model),
      h('label', { class: 'field' }, h('span', {}, 'API key'), this.#key),
      h('label', { class: 'field' }, h('span', {}, 'Give up after (s) of silence'), this.#stall),
      h(
        'div',
        { class: 'row' },
        h('button', { class: 'primary', attrs: { type: 'submit', 'data-testid': 'model-save' } }, 'Save'),
        h(
          'button',
          {
            attrs: { type: 'button', 'data-testid': 'model-offline' },
            on: { click: () => void this.#useOffline() },
          },
          'Use the offline agent',
        ),
      ),
      this.#formNote,
    );
    this.#form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#save();
    });
    const scopeForm = h(
      'form',
      { class: 'row chat-scope', attrs: { 'data-testid': 'chat-scope' } },
      h('label', { class: 'inline' }, 'User ', this.#user),
      h('label', { class: 'inline' }, 'Agent ', this.#agent),
      h('button', { attrs: { type: 'submit' } }, 'Open thread'),
    );
    scopeForm.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#switchScope();
    });
    const settings = h(
      'button',
      {
        attrs: { type: 'button', 'data-testid': 'model-settings', 'aria-expanded': 'false' },
        on: {
          click: () => {
            this.#form.hidden = !this.#form.hidden;
            settings.setAttribute('aria-expanded', String(!this.#form.hidden));
          },
        },
      },
      'Model server…',
    );
    this.root = h(
      'section',
      { class: 'view chat-view', attrs: { 'data-view': 'chat' } },
      h('header', { class: 'view-head' }, h('h1', {}, 'Chat'), h('div', { class: 'row' }, scopeForm, settings)),
      this.#subtitle,
      this.#form,
      this.#notice,
      h('div', { class: 'card chat-card' }, this.#panel.root),
    );
    this.#fill();
  }

  async show(): Promise<void> {
    await this.#render();
    this.#panel.enable();
  }

  #fill(): void {
    this.#user.value = this.#scope.userId;
    this.#agent.value = this.#scope.agentId;
    this.#baseUrl.value = this.#server?.baseUrl ?? SUGGESTED_BASE_URL;
    this.#model.value = this.#server?.model ?? '';
    this.#stall.value = String(this.#server?.stallSeconds ?? DEFAULT_STALL_SECONDS);
  }

  async #render(): Promise<void> {
    const threshold = await recallThreshold(this.#ctx.engram);
    const { userId, agentId } = this.#scope;
    this.#subtitle.textContent = `${agentId} talking with ${userId} · thread ${chatThreadOf(this.#scope)} · answers: ${
      this.#server === undefined ? OFFLINE_LABEL : modelServerLabel(this.#server)
    } · recall: top ${RECALL_LIMIT}, relevance ≥ ${threshold}`;
    if (this.#server === undefined)
      this.#setNotice(
        'offline',
        'No model server is set: the scripted offline agent answers, from what engram recalls. Set one under “Model server…”.',
      );
    await this.#panel.render();
  }

  #setNotice(state: 'offline' | 'unreachable' | 'server', text: string): void {
    this.#notice.dataset['state'] = state;
    replace(this.#notice, h('span', {}, text));
    this.#notice.hidden = state === 'server';
  }

  /** The model for the next turn: the server when it answers, else the scripted agent (and the notice says why). */
  async #choose(): Promise<ChatModelChoice> {
    const server = this.#server;
    if (server === undefined) return { model: scriptedAgent, label: OFFLINE_LABEL };
    const key = await unwrap(this.#ctx.bridge.getSecret('model-api-key'));
    if (this.#opened !== server.baseUrl) {
      // The request filter opens to this server only (desktop: after the user allowed it).
      await unwrap(this.#ctx.bridge.setModelServer(server.baseUrl));
      this.#opened = server.baseUrl;
    }
    const reason = await unreachableReason(server, key);
    if (reason !== undefined) {
      this.#setNotice(
        'unreachable',
        `The model server at ${server.baseUrl} is not reachable: ${reason} The scripted offline agent answers instead; the next message tries the server again.`,
      );
      return { model: scriptedAgent, label: `${OFFLINE_LABEL}: ${server.baseUrl} unreachable` };
    }
    this.#setNotice('server', '');
    return { model: modelOptions(server, key), label: modelServerLabel(server) };
  }

  async #save(): Promise<void> {
    try {
      const server = checkModelServer({
        baseUrl: this.#baseUrl.value,
        model: this.#model.value,
        stallSeconds: Number(this.#stall.value),
      });
      await unwrap(this.#ctx.bridge.setModelServer(server.baseUrl));
      this.#opened = server.baseUrl;
      const key = this.#key.value.trim();
      if (key !== '') await unwrap(this.#ctx.bridge.setSecret('model-api-key', key));
      saveModelServer(server);
      this.#server = server;
      this.#key.value = '';
      this.#formNote.className = 'small';
      this.#formNote.textContent = `Saved: ${modelServerLabel(server)} answers the next turn.`;
      this.#fill();
      await this.#render();
    } catch (e) {
      this.#formNote.className = 'small error-text';
      this.#formNote.textContent = e instanceof ValidationError ? e.message : String(e);
      this.#ctx.showError(e);
    }
  }

  async #useOffline(): Promise<void> {
    saveModelServer(undefined);
    this.#server = undefined;
    this.#opened = undefined;
    await unwrap(this.#ctx.bridge.setModelServer(null)).catch((e: unknown) => {
      this.#ctx.showError(e);
    });
    this.#formNote.className = 'small';
    this.#formNote.textContent = 'The scripted offline agent answers the next turn.';
    this.#fill();
    await this.#render();
  }

  async #switchScope(): Promise<void> {
    try {
      this.#scope = { userId: checkId('user', this.#user.value), agentId: checkId('agent', this.#agent.value) };
      localStorage.setItem(SCOPE_KEY, JSON.stringify(this.#scope));
      await this.#render();
    } catch (e) {
      this.#ctx.showError(e);
    }
  }
}
